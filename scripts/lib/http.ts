/**
 * The HTTP helpers of the scripts: a typed error on any non-2XX, for the answers of the
 * openapi-fetch clients ({@link ok}) and for the few calls to a path known only at run time
 * ({@link requestJson}: JSON in, JSON out).
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

/**
 * The data of an openapi-fetch result.
 *
 * @param method the request's method, for the error.
 * @returns `data` of a 2XX answer (undefined for a 204).
 * @throws HttpError with the status and the body (as JSON text) of any other answer.
 */
export function ok<T>(
  method: string,
  result: { data?: T; error?: unknown; response: Response },
): T {
  const { response, error } = result;
  if (!response.ok) {
    const body =
      error === undefined ? "" : typeof error === "string" ? error : JSON.stringify(error);
    throw new HttpError(method, response.url, response.status, body);
  }
  return result.data as T;
}
