/**
 * The fetch of the demo load (`npm start`'s seed and replay, `npm run replay`): it retries the
 * answers that say nothing was done and to try again, so that a start does not give up on
 * one of them (docs/demo-data.md, "When a request of the demo load is retried").
 *
 * - 429, and 503 with `Retry-After`: the rate limit, a company move's fence, the realtime
 *   read barrier (each refuses the request whole), and `wrangler dev`'s own "Your worker
 *   restarted mid-request" (the Worker was reloaded with the request in flight; wrangler 4.86
 *   also answered it when its proxy lost the request on a keep-alive connection the runtime
 *   was closing, before the Worker saw it: workers-sdk issue 14641). Retried after
 *   `Retry-After` (at least {@link MIN_WAIT_MS}), whatever the method.
 * - A 500 without `X-Request-Id`: not the Worker's answer (every answer of the API carries
 *   one, its 5XX included, src/app.ts) but wrangler 4.164's proxy's, when it lost the request
 *   that way (it logs `Error inside ProxyWorker (the affected request failed; the dev server
 *   continues)`). Retried after {@link MIN_WAIT_MS}, whatever the method.
 * - A connection refused (nothing was sent), or closed by the server with no answer (the same
 *   keep-alive race between this client and `wrangler dev`'s proxy: the server closes only a
 *   connection it holds idle, so it did not read the request): retried, whatever the method.
 * - A GET or HEAD that has not answered within {@link READ_TIMEOUT_MS}, or that failed any
 *   other way: retried. (`wrangler dev` 4.86 held a GET that met the race above until its
 *   next reload, which never came; 4.164's proxy sends it again itself.)
 * - Any other failure of another method is not retried: the request may have run.
 */

/** Most attempts of one request. */
export const MAX_ATTEMPTS = 6;
/** The shortest wait before a retry, even after `Retry-After: 0`, in ms. */
export const MIN_WAIT_MS = 200;
/** The longest wait before a retry, whatever `Retry-After` says, in ms. */
export const MAX_WAIT_MS = 10_000;
/** How long a read may take before it is taken for lost, in ms. */
export const READ_TIMEOUT_MS = 30_000;

/** The fetch a demo-load client calls: a Request in, a Response out. */
export type Fetch = (request: Request) => Promise<Response>;

/** Options of {@link demoFetch}. */
export interface DemoFetchOptions {
  /** The fetch to send with (default the global one). */
  send?: Fetch;
  /** Told about every retry, with the reason (for the start log). */
  onRetry?: (line: string) => void;
  /** How to wait (ms); default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Per-attempt limit of a GET or HEAD, in ms (default {@link READ_TIMEOUT_MS}). */
  readTimeoutMs?: number;
}

const isRead = (method: string) => method === "GET" || method === "HEAD";

/**
 * Whether a fetch error says the request was not read by the server: the connection was
 * refused, or the server closed it without an answer (undici's `UND_ERR_SOCKET` "other side
 * closed", or a reset).
 */
export function notDelivered(error: unknown): boolean {
  const code = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return (
    code === "ECONNREFUSED" ||
    code === "UND_ERR_SOCKET" ||
    code === "ECONNRESET" ||
    code === "EPIPE"
  );
}

/**
 * The wait a retryable answer asks for, or null when the answer is not retryable.
 *
 * @param status the answer's status.
 * @param retryAfter its `Retry-After` header (seconds), or null.
 * @param fromWorker whether it carries the Worker's `X-Request-Id` (default true): a 500
 *   without one is `wrangler dev`'s proxy's, for a request the Worker never saw.
 * @returns ms to wait, within [{@link MIN_WAIT_MS}, {@link MAX_WAIT_MS}]; null for an answer
 *   that is final (2XX, a 4XX other than 429, the Worker's 5XX without `Retry-After`).
 */
export function retryWait(
  status: number,
  retryAfter: string | null,
  fromWorker = true,
): number | null {
  if (status === 500 && !fromWorker) return MIN_WAIT_MS;
  if (status !== 429 && !(status === 503 && retryAfter !== null)) return null;
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
  const ms = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 1000;
  return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, ms));
}

/**
 * A fetch with the demo load's retries (see the module comment).
 *
 * @returns a fetch that answers the first final answer, or the last retryable one when
 *   {@link MAX_ATTEMPTS} are spent.
 * @throws the network error (or timeout) of the last attempt, or the first failure of a
 *   method other than GET and HEAD that may have reached the server.
 */
export function demoFetch(options: DemoFetchOptions = {}): Fetch {
  const send = options.send ?? ((request: Request) => fetch(request));
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const readTimeoutMs = options.readTimeoutMs ?? READ_TIMEOUT_MS;
  return async (request) => {
    const read = isRead(request.method);
    const what = `${request.method} ${new URL(request.url).pathname}`;
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= MAX_ATTEMPTS;
      let response: Response;
      try {
        // A clone per attempt: a body can be sent only once.
        const copy = request.clone();
        response = await send(
          read ? new Request(copy, { signal: AbortSignal.timeout(readTimeoutMs) }) : copy,
        );
      } catch (error) {
        if (last || !(read || notDelivered(error))) throw error;
        options.onRetry?.(`${what}: ${String(error)}; attempt ${attempt + 1} in 1 s`);
        await sleep(1000);
        continue;
      }
      const wait = retryWait(
        response.status,
        response.headers.get("retry-after"),
        response.headers.has("x-request-id"),
      );
      if (wait === null || last) return response;
      const text = (await response.text()).replace(/\s+/g, " ").slice(0, 120);
      options.onRetry?.(
        `${what} answered ${response.status} (${text}); attempt ${attempt + 1} in ${wait} ms`,
      );
      await sleep(wait);
    }
  };
}
