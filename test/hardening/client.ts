/**
 * The harness's calls (test/harness.ts), made by calling the Worker's own
 * `fetch` handler with the test bindings and an execution context, instead of
 * through `exports.default.fetch`.
 *
 * Why: in @cloudflare/vitest-pool-workers 0.15 each call through
 * `exports.default.fetch` (or `SELF.fetch`) costs more than the one before it
 * in the same test file (50 calls to `/healthz` take 0.2 s at first and 2 s
 * after 300 calls), so the thousands of generated requests of these suites
 * would take tens of minutes. The handler is the same object the runtime
 * calls (`src/index.ts`'s default export: the whole app, its middleware and
 * bindings), and `waitUntil` work is awaited after each call.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";
import { OPERATOR_TOKEN } from "../harness";

const BASE = "http://api.test";

/** Sends a request to the Worker under test and waits for its `waitUntil` work. */
export async function call(path: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`${BASE}${path}`, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** Calls a public route with an API key (and a JSON body when `json` is given). */
export function api(
  key: string,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<Response> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set("x-api-key", key);
  if (json !== undefined) headers.set("content-type", "application/json");
  return call(path, {
    ...rest,
    headers,
    body: json === undefined ? rest.body : JSON.stringify(json),
  });
}

/** Calls the operator API with the test operator token and a JSON body. */
export function operator(method: string, path: string, body?: unknown): Promise<Response> {
  return call(`/operator/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Calls the operator API and returns the JSON body; throws on a non-2XX status. */
export async function operatorJson<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await operator(method, path, body);
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}
