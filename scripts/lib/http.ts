/**
 * The one HTTP helper of the scripts: JSON in, JSON out, a typed error on any non-2XX.
 */

/** A non-2XX answer, with its status and the body text as the server sent it. */
export class HttpError extends Error {
  override readonly name = "HttpError";

  /**
   * @param method HTTP method of the request.
   * @param url full URL of the request.
   * @param status HTTP status code of the answer.
   * @param body the answer's body text (often a `{detail}` JSON document).
   */
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`${method} ${url} answered ${status}: ${body || "(empty body)"}`);
  }
}

/** Options of {@link requestJson}. */
export interface RequestOptions {
  method: string;
  headers?: Record<string, string>;
  /** Serialised with JSON.stringify when present. */
  body?: unknown;
}

/**
 * Sends one request and parses the JSON answer.
 *
 * @param url absolute URL.
 * @param options method, extra headers and an optional JSON body.
 * @returns the parsed body, or `undefined` for an empty body (for example a 204).
 *   The type parameter is trusted, not checked: it states what the contract promises.
 * @throws HttpError on a non-2XX status; TypeError (from fetch) when the server
 *   cannot be reached; SyntaxError when a 2XX body is not JSON.
 */
export async function requestJson<T>(url: string, options: RequestOptions): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  let body: string | undefined;
  if (options.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  const response = await fetch(url, { method: options.method, headers, body });
  const text = await response.text();
  if (!response.ok) throw new HttpError(options.method, url, response.status, text);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}
