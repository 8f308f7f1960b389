/**
 * Outbound fetch intercepted for webhook tests: a fake DNS-over-HTTPS
 * resolver and fake receivers. The Worker under test runs in the same isolate
 * as the tests, so `globalThis.fetch` mocked here is the one it calls.
 */
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { readSettings } from "../../src/env";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";

/** One request a fake receiver got. */
export interface Received {
  url: string;
  method: string;
  headers: Headers;
  body: string;
  redirect: string | undefined;
  /** ms since the test's network was installed. */
  at: number;
}

/** Answers a request; gets the attempt's abort signal. */
export type Responder = (request: Received, signal: AbortSignal | undefined) => Promise<Response>;

/** DNS records of one name, as a resolver that does not follow CNAMEs would answer. */
export interface FakeRecords {
  A?: string[];
  AAAA?: string[];
  CNAME?: string;
}

/** A responder that never answers (until the attempt is aborted). */
export const neverAnswers: Responder = (_request, signal) =>
  new Promise<Response>((_resolve, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason));
  });

/** A responder that answers `status` (with optional headers) every time. */
export const answers =
  (status: number, headers: Record<string, string> = {}): Responder =>
  async () =>
    new Response(status === 204 || status === 304 ? null : "ok", { status, headers });

/** A responder that plays `responders` in turn, repeating the last. */
export function sequence(...responders: Responder[]): Responder {
  let index = 0;
  return (request, signal) => {
    const responder = responders[Math.min(index, responders.length - 1)];
    index += 1;
    if (!responder) throw new Error("empty sequence");
    return responder(request, signal);
  };
}

/**
 * Installs the fake network. Unknown URLs fail like an unreachable host
 * (`TypeError`). Queue sends are captured instead of reaching the Queue, so
 * that each test runs the consumer itself on the messages it chooses.
 */
export function fakeNetwork() {
  const started = Date.now();
  const dns = new Map<string, FakeRecords>();
  const endpoints = new Map<string, Responder>();
  const received: Received[] = [];
  const dohQueries: string[] = [];
  const sent: WebhookMessage[] = [];
  const sentDelays: (number | undefined)[] = [];
  let dohAvailable = true;

  const sendBatch = vi
    .spyOn(env.WEBHOOK_QUEUE, "sendBatch")
    .mockImplementation(async (messages: Iterable<MessageSendRequest<unknown>>) => {
      for (const m of messages) {
        // The binding's type carries no message type (wrangler types); the outbox sends these.
        sent.push(m.body as WebhookMessage);
        sentDelays.push(m.delaySeconds);
      }
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } };
    });

  // The resolver the Worker is configured with (the tests' own, vitest.config.ts).
  const dohUrl = readSettings(env).webhooks.dohUrl;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = input instanceof Request ? input : null;
    const url = request ? request.url : String(input);
    if (url.startsWith(dohUrl)) {
      const query = new URL(url).searchParams;
      const name = query.get("name") ?? "";
      const type = query.get("type") === "AAAA" ? "AAAA" : "A";
      dohQueries.push(`${name} ${type}`);
      if (!dohAvailable) return new Response("unavailable", { status: 503 });
      const records = dns.get(name);
      if (!records) return Response.json({ Status: 3 });
      const answer = records.CNAME
        ? [{ name, type: 5, TTL: 0, data: `${records.CNAME}.` }]
        : (records[type] ?? []).map((data) => ({
            name,
            type: type === "A" ? 1 : 28,
            TTL: 0,
            data,
          }));
      return Response.json({ Status: 0, Answer: answer });
    }
    const responder = endpoints.get(url);
    if (!responder) throw new TypeError("Network connection lost.");
    const got: Received = {
      url,
      method: init?.method ?? request?.method ?? "GET",
      headers: new Headers(init?.headers ?? request?.headers),
      body: typeof init?.body === "string" ? init.body : await (request?.text() ?? ""),
      redirect: init?.redirect,
      at: Date.now() - started,
    };
    received.push(got);
    return responder(got, init?.signal ?? undefined);
  });

  return {
    dns,
    endpoints,
    /** Requests the fake receivers got, in order. */
    received,
    /** `name type` of every DNS-over-HTTPS query. */
    dohQueries,
    /** Queue message bodies sent (captured). */
    sent,
    /** `delaySeconds` of each message of `sent`, same order. */
    sentDelays,
    sendBatch,
    /** Makes the resolver answer 503 (or work again). */
    setDohAvailable(available: boolean) {
      dohAvailable = available;
    },
    /** Requests received at `url`. */
    at(url: string) {
      return received.filter((r) => r.url === url);
    },
  };
}

export type FakeNetwork = ReturnType<typeof fakeNetwork>;

/** A fresh public host name resolving to a public address, with its URL. */
export function publicEndpoint(net: FakeNetwork, path = "/hooks") {
  const host = `hooks-${crypto.randomUUID().slice(0, 8)}.example.com`;
  net.dns.set(host, { A: ["93.184.216.34"], AAAA: ["2606:2800:220:1:248:1893:25c8:1946"] });
  return { host, url: `https://${host}${path}` };
}
