/**
 * The tests' network: the `outboundService` of every test runtime (vitest.config.ts), so
 * every outbound `fetch` of the Worker under test (its routes, Durable Objects, queue
 * consumer) and of the tests themselves comes here, to this function in the runner's Node
 * process, instead of the machine's network. No test reaches a host outside the machine:
 *
 * - the tests' DNS-over-HTTPS resolver (`TEST_RESOLVER_URL`, their `WEBHOOK_DOH_URL`) is
 *   answered here, in the DNS JSON format of docs/webhooks-security.md: NXDOMAIN for every
 *   name (the test world has no public host; a test that needs one resolves it with its own
 *   fake network, test/fixtures/fake-network.ts, before the request gets here);
 * - a loopback address (`127.0.0.0/8`, `[::1]`, `localhost`) is passed on, as the runtime
 *   would (the DuckDB bridge of test/node/duckdb-bridge.ts);
 * - anything else is refused (a 502, as an unreachable host) and recorded for its runtime,
 *   with a line on the runner's output; test/setup.ts takes the record
 *   (`REFUSED_REQUESTS_URL`) after every test and after every file, and fails the test that
 *   tried.
 *
 * The production rules stay as they are (src/webhooks/url-safety.ts): only the resolver's
 * address is a setting, and the tests set it.
 */

/**
 * The tests' `WEBHOOK_DOH_URL` (vitest.config.ts): the local resolver. Under `.test` (RFC
 * 2606), a name no real resolver answers, as the next one.
 */
export const TEST_RESOLVER_URL = "https://resolver.test/dns-query";

/**
 * `GET` answers, as a JSON array, the requests this test runtime sent outside the machine
 * since the last `GET` (each was refused), and forgets them. The tests' binding
 * `TEST_REFUSED_REQUESTS_URL` (vitest.config.ts).
 */
export const REFUSED_REQUESTS_URL = "https://test-network.test/refused";

/** What each test runtime (its Miniflare instance) tried to reach outside, not yet taken. */
const refused = new WeakMap<object, string[]>();

/** True for a host on this machine (a loopback address or name). */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    host === "localhost" || host.endsWith(".localhost") || host === "::1" || /^127\./.test(host)
  );
}

/** The local resolver: a DNS JSON answer, NXDOMAIN (`Status: 3`) for every name. */
function resolve(url: URL): Response {
  const name = url.searchParams.get("name");
  if (!name) return Response.json({ Status: 1 }, { status: 400 });
  const type = url.searchParams.get("type") === "AAAA" ? 28 : 1;
  return Response.json({ Status: 3, Question: [{ name, type }] });
}

/**
 * The outbound service of a test runtime.
 *
 * @param request the request the Worker or a test sent with `fetch`.
 * @param runtime the Miniflare instance of the test runtime that sent it (Miniflare passes
 *   itself), which keeps its record apart from other files' runtimes.
 * @returns the resolver's answer, the loopback server's, the record, or a 502 refusal.
 */
export async function testNetwork(request: Request, runtime: object): Promise<Response> {
  const url = new URL(request.url);
  if (request.url.startsWith(TEST_RESOLVER_URL)) return resolve(url);
  if (request.url === REFUSED_REQUESTS_URL) {
    const taken = refused.get(runtime) ?? [];
    refused.delete(runtime);
    return Response.json(taken);
  }
  if (isLoopback(url.hostname)) {
    const body = ["GET", "HEAD"].includes(request.method) ? undefined : await request.arrayBuffer();
    return fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body,
      redirect: "manual",
    });
  }
  const attempt = `${request.method} ${url.origin}${url.pathname}`;
  refused.set(runtime, [...(refused.get(runtime) ?? []), attempt]);
  console.error(`test network: refused ${attempt} (a test may not reach outside the machine)`);
  await request.body?.cancel();
  return new Response(`test network: ${url.host} is outside the machine`, { status: 502 });
}
