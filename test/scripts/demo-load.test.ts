/**
 * What the demo load's follow-up commands and retries promise (docs/demo-data.md): every
 * command finds the server `npm start` runs whatever its port (scripts/lib/base-url.ts), and
 * a start does not give up on an answer that says nothing was done, `wrangler dev`'s lost
 * request included (scripts/lib/demo-fetch.ts), while it never runs a request twice.
 */
import { describe, expect, it } from "vitest";
import { chooseBaseUrl } from "../../scripts/lib/base-url";
import { demoFetch, MAX_ATTEMPTS, retryWait } from "../../scripts/lib/demo-fetch";

const DEFAULT = "http://127.0.0.1:8787";
/** The answer of wrangler dev's proxy when it lost a request (workers-sdk 4.86). */
const LOST = () =>
  new Response(
    "Your worker restarted mid-request. Please try sending the request again. Only GET or HEAD requests are retried automatically.",
    { status: 503, headers: { "Retry-After": "0" } },
  );

describe("the base URL of a follow-up command", () => {
  it("is --url, then PM_URL, then the running npm start, then 8787", () => {
    const running = "http://127.0.0.1:8821";
    const env = "http://127.0.0.1:8823/";
    expect(chooseBaseUrl({ fallback: DEFAULT })).toBe(DEFAULT);
    expect(chooseBaseUrl({ running, fallback: DEFAULT })).toBe(running);
    expect(chooseBaseUrl({ env, running, fallback: DEFAULT })).toBe("http://127.0.0.1:8823");
    expect(chooseBaseUrl({ explicit: "http://x:1", env, running, fallback: DEFAULT })).toBe(
      "http://x:1",
    );
    expect(chooseBaseUrl({ env: "", running, fallback: DEFAULT })).toBe(running);
  });

  it("for demo-env is the running npm start before a PM_URL the shell kept", () => {
    const running = "http://127.0.0.1:8821";
    const stale = "http://127.0.0.1:8787";
    expect(chooseBaseUrl({ env: stale, running, preferRunning: true, fallback: DEFAULT })).toBe(
      running,
    );
    expect(chooseBaseUrl({ env: stale, preferRunning: true, fallback: DEFAULT })).toBe(stale);
  });
});

/** A fetch that answers from a list and records what it was sent. */
function scripted(answers: (() => Response | Promise<Response>)[]) {
  const sent: { method: string; body: string }[] = [];
  const send = async (request: Request) => {
    sent.push({ method: request.method, body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error("no more answers");
    return next();
  };
  return { send, sent };
}

const noWait = async () => {};

describe("the demo load's fetch", () => {
  it("sends a POST again, with its body, after wrangler dev's lost-request 503", async () => {
    const { send, sent } = scripted([LOST, () => new Response("{}", { status: 201 })]);
    const retries: string[] = [];
    const fetch = demoFetch({ send, sleep: noWait, onRetry: (line) => retries.push(line) });
    const response = await fetch(
      new Request("http://w/operator/v1/machines/3/stops", { method: "POST", body: '[{"a":1}]' }),
    );
    expect(response.status).toBe(201);
    expect(sent).toEqual([
      { method: "POST", body: '[{"a":1}]' },
      { method: "POST", body: '[{"a":1}]' },
    ]);
    expect(retries).toEqual([
      expect.stringMatching(/^POST \/operator\/v1\/machines\/3\/stops answered 503 \(Your worker/),
    ]);
  });

  it("waits what Retry-After asks, within bounds, for a 429 or a 503 that has one", () => {
    expect(retryWait(503, "0")).toBe(200);
    expect(retryWait(503, "1")).toBe(1000);
    expect(retryWait(429, "3600")).toBe(10_000);
    expect(retryWait(429, null)).toBe(1000);
  });

  it("sends a POST again after wrangler 4.164's proxy's 500 (no X-Request-Id), not after the Worker's", async () => {
    const proxy500 = () => new Response(null, { status: 500 });
    const { send, sent } = scripted([proxy500, () => new Response("{}", { status: 201 })]);
    const waits: number[] = [];
    const response = await demoFetch({ send, sleep: async (ms) => void waits.push(ms) })(
      new Request("http://w/operator/v1/machines/3/stops", { method: "POST", body: "[2]" }),
    );
    expect(response.status).toBe(201);
    expect(sent).toEqual(Array(2).fill({ method: "POST", body: "[2]" }));
    expect(waits).toEqual([200]);
    const worker500 = () =>
      new Response('{"detail":"x"}', { status: 500, headers: { "x-request-id": "r1" } });
    const own = scripted([worker500, () => new Response("{}", { status: 201 })]);
    expect(
      (
        await demoFetch({ send: own.send, sleep: noWait })(
          new Request("http://w/v1/skus", { method: "POST", body: "[]" }),
        )
      ).status,
    ).toBe(500);
    expect(own.sent).toHaveLength(1);
  });

  it("never repeats a final answer: 2XX, 4XX, or the Worker's 5XX without Retry-After", async () => {
    for (const status of [200, 404, 409, 422, 500, 503]) {
      const { send, sent } = scripted([
        () => new Response("x", { status, headers: { "x-request-id": "r1" } }),
      ]);
      const response = await demoFetch({ send, sleep: noWait })(
        new Request("http://w/v1/skus", { method: "POST", body: "[]" }),
      );
      expect(response.status).toBe(status);
      expect(sent).toHaveLength(1);
    }
  });

  it("resends any request whose connection was refused or closed under it unanswered", async () => {
    const closed = () =>
      Promise.reject(
        new TypeError("fetch failed", {
          cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
        }),
      );
    const refused = () =>
      Promise.reject(
        new TypeError("fetch failed", {
          cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
        }),
      );
    const { send, sent } = scripted([closed, refused, () => new Response("{}", { status: 201 })]);
    const response = await demoFetch({ send, sleep: noWait })(
      new Request("http://w/operator/v1/signals/s/samples", { method: "POST", body: "[1]" }),
    );
    expect(response.status).toBe(201);
    expect(sent).toEqual(Array(3).fill({ method: "POST", body: "[1]" }));
  });

  it("does not resend a POST that failed otherwise (it may have run), but resends a GET", async () => {
    const broken = () => Promise.reject(new TypeError("fetch failed"));
    const post = scripted([broken, () => new Response("{}")]);
    await expect(
      demoFetch({ send: post.send, sleep: noWait })(
        new Request("http://w/v1/skus", { method: "POST", body: "[]" }),
      ),
    ).rejects.toThrow("fetch failed");
    expect(post.sent).toHaveLength(1);
    const get = scripted([broken, () => new Response("[]")]);
    const response = await demoFetch({ send: get.send, sleep: noWait })(
      new Request("http://w/v1/machines"),
    );
    expect(response.status).toBe(200);
    expect(get.sent).toHaveLength(2);
  });

  it("gives a read that never answers up after its timeout and sends it again", async () => {
    let calls = 0;
    const send = (request: Request) => {
      calls += 1;
      if (calls > 1) return Promise.resolve(new Response("[]"));
      // wrangler dev 4.86 holds such a GET until its next reload: only the timeout ends it.
      return new Promise<Response>((_, reject) =>
        request.signal.addEventListener("abort", () => reject(request.signal.reason)),
      );
    };
    const response = await demoFetch({ send, sleep: noWait, readTimeoutMs: 50 })(
      new Request("http://w/v1/machines"),
    );
    expect(response.status).toBe(200);
    expect(calls).toBe(2);
  });

  it("stops after the last attempt and answers the last retryable answer", async () => {
    const { send, sent } = scripted(Array.from({ length: MAX_ATTEMPTS + 2 }, () => LOST));
    const response = await demoFetch({ send, sleep: noWait })(
      new Request("http://w/v1/skus", { method: "POST", body: "[]" }),
    );
    expect(response.status).toBe(503);
    expect(sent).toHaveLength(MAX_ATTEMPTS);
  });
});
