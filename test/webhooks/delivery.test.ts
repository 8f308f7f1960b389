/**
 * Delivery (docs/webhooks.md "Delivery"; docs/webhook-delivery.md): the Queue
 * consumer handing deliveries to each registration's deliverer, and the
 * deliverer's attempts: signature, headers and envelope, the verdict of every
 * kind of answer, rounds and their delays, the check before every attempt, a
 * hanging endpoint kept to itself, replay.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { verify } from "@octokit/webhooks-methods";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { shardBindings } from "../../src/db/shards";
import { endpointDeliverer, WebhookEndpoint } from "../../src/webhooks/endpoint-deliverer";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";
import {
  answers,
  type FakeNetwork,
  fakeNetwork,
  neverAnswers,
  publicEndpoint,
  sequence,
} from "../fixtures/fake-network";
import {
  clockAhead,
  delaysOf,
  deliveryOf,
  heldBy,
  howOf,
  ping,
  register,
  runDeliverer,
  runHandlings,
  runMessages,
  type Webhook,
  waitAfterLastAttempt,
} from "../fixtures/webhook-harness";
import { createCompany, operator, operatorJson } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
  clockAhead();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A company with its signing secret, and one registration at a fresh public endpoint. */
async function setUp(eventType = "MachineStopClassificationCreated") {
  const [company] = await operatorJson<{ id: number; webhookSecret: string }[]>(
    "POST",
    "/companies",
    [{ name: `Webhooks ${crypto.randomUUID()}`, timezone: "UTC" }],
  );
  if (!company) throw new Error("no company created");
  const endpoint = publicEndpoint(net);
  const hook = await register(company.id, endpoint.url, eventType);
  return { company, secret: company.webhookSecret, url: endpoint.url, hook };
}

/** The test's bindings with D1 databases (directory and shards) that fail every statement. */
function unavailableDb(): Cloudflare.Env {
  const unavailable = (real: D1Database) =>
    new Proxy(real, {
      get(target, property) {
        if (property === "prepare" || property === "batch") {
          return () => {
            throw new Error("D1_ERROR: database unavailable");
          };
        }
        return Reflect.get(target, property, target);
      },
    });
  const failing: Record<string, unknown> = { ...env, DB: unavailable(env.DB) };
  for (const [name, shard] of shardBindings(env)) failing[name] = unavailable(shard);
  return failing as unknown as Cloudflare.Env;
}

/** Pings `hook` and returns the captured message of the new delivery. */
async function pingMessage(hook: Webhook) {
  const before = net.sent.length;
  const ids = await ping(hook.id);
  const message = net.sent.slice(before).find((m) => m.deliveryId === ids.deliveryId);
  // The message names the delivery's company: its shard (src/db/shards.ts).
  expect(message).toEqual({ deliveryId: ids.deliveryId, companyId: expect.any(Number) });
  return { ...ids, message: { deliveryId: ids.deliveryId, companyId: message?.companyId } };
}

describe("a delivered attempt", () => {
  it("is signed, with the headers and the envelope of the spec, verified by @octokit/webhooks-methods", async () => {
    const { secret, url, hook } = await setUp("MachineStopClassificationDeleted");
    net.endpoints.set(url, answers(200));
    const { eventId, deliveryId, message } = await pingMessage(hook);

    const result = await runMessages([message]);
    expect(result.acked).toEqual(["m0"]);
    expect(result.retried).toEqual([]);
    expect(delaysOf([result])).toEqual(["done"]);

    const [got] = net.at(url);
    if (!got) throw new Error("no request received");
    expect(got.method).toBe("POST");
    expect(got.redirect).toBe("manual");
    const envelope = JSON.parse(got.body) as Record<string, unknown>;
    expect(Object.keys(envelope)).toEqual(["eventId", "eventTimestamp", "eventType", "event"]);
    expect(envelope).toEqual({
      eventId,
      eventTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      eventType: "Ping",
      event: { text: "ping" },
    });
    const headers = Object.fromEntries(got.headers.entries());
    expect(headers).toEqual({
      "content-type": "application/json",
      "x-service-signature": expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      "x-service-event-type": "Ping",
      "x-service-event-id": eventId,
      "x-service-timestamp": envelope.eventTimestamp,
      "x-service-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(await verify(secret, got.body, headers["x-service-signature"] ?? "")).toBe(true);
    expect(await verify(`${secret}x`, got.body, headers["x-service-signature"] ?? "")).toBe(false);

    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery).toEqual({
      id: deliveryId,
      eventId,
      eventType: "Ping",
      status: "delivered",
      rounds: 1,
      attemptsInRound: 0,
      nextAttemptAt: null,
      attempts: [
        {
          requestId: headers["x-service-request-id"],
          at: expect.any(String),
          durationMs: expect.any(Number),
          statusCode: 200,
          error: null,
        },
      ],
    });
  });

  it("carries two signatures, new first, for 24 hours after a rotation", async () => {
    const { company, secret: old, url, hook } = await setUp();
    net.endpoints.set(url, answers(202));
    const { webhookSecret: fresh } = await operatorJson<{ webhookSecret: string }>(
      "POST",
      `/companies/${company.id}/webhook-secret/rotate`,
    );
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const { message } = await pingMessage(hook);
    await runMessages([message]);
    const [got] = net.at(url);
    const header = got?.headers.get("x-service-signature") ?? "";
    const [first, second, ...rest] = header.split(",");
    expect(rest).toEqual([]);
    expect(await verify(fresh, got?.body ?? "", first ?? "")).toBe(true);
    expect(await verify(old, got?.body ?? "", second ?? "")).toBe(true);

    // After the overlap, only the new secret signs.
    vi.setSystemTime(Date.now() + 24 * 3600 * 1000 + 1000);
    const later = await pingMessage(hook);
    await runMessages([later.message]);
    const last = net.at(url).at(-1);
    const single = last?.headers.get("x-service-signature") ?? "";
    expect(single).not.toContain(",");
    expect(await verify(fresh, last?.body ?? "", single)).toBe(true);
  });

  it("is skipped when the delivery is no longer pending (a duplicate message)", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(200));
    const { message } = await pingMessage(hook);
    await runMessages([message]);
    const again = await runMessages([message]);
    expect(again.acked).toEqual(["m0"]);
    expect(again.attempted).toEqual([]);
    expect(net.at(url)).toHaveLength(1);
  });
});

describe("a round", () => {
  it("tries 3 times on 5XX, waiting 1 s and 2 s, then schedules round 2 about 1 minute later", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(503));
    const { deliveryId, eventId, message } = await pingMessage(hook);
    const outcomes = await runHandlings(message, [1, 2, 3]);

    // No sleeping: each run of the deliverer is one attempt, then the wait of
    // the round (1 s, 2 s), then the wait before the next round.
    const [first, second, third] = delaysOf(outcomes);
    expect([first, second]).toEqual([1, 2]);
    expect(third).toBeGreaterThanOrEqual(60);
    expect(third).toBeLessThanOrEqual(66);
    expect(howOf(outcomes)).toEqual(["next attempt", "next attempt", "next round"]);
    // The waits are the deliverer's, not Queue messages: only the ping's own message was sent.
    expect(net.sent.filter((m) => m.deliveryId === deliveryId)).toHaveLength(1);
    const [held] = await heldBy(hook.id);
    expect(held?.deliveryId).toBe(deliveryId);
    expect(held?.dueAt).toBeGreaterThanOrEqual(Date.now() + 55_000);

    const got = net.at(url);
    expect(got).toHaveLength(3);
    // Same event, same bytes, a new request id each time.
    expect(new Set(got.map((r) => r.headers.get("x-service-event-id")))).toEqual(
      new Set([eventId]),
    );
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    expect(new Set(got.map((r) => r.headers.get("x-service-request-id"))).size).toBe(3);

    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("pending");
    expect(delivery.attempts.map((x) => x.statusCode)).toEqual([503, 503, 503]);
    expect(delivery.attempts.map((x) => x.requestId)).toEqual(
      got.map((r) => r.headers.get("x-service-request-id")),
    );
  });

  it("never sleeps: a handling takes one attempt, not the round's waits", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(503));
    const { message } = await pingMessage(hook);
    // Real time: the test's clock jumps over the waits (clockAhead).
    const started = vi.getRealSystemTime();
    await runHandlings(message, [1, 2, 3]);
    // Sleeping through the round's waits (1 s, then 2 s) would take 3 s at least; the bound
    // sits below that, far above three attempts on a loaded machine (1.1 s seen at load 20).
    expect(vi.getRealSystemTime() - started).toBeLessThan(2_900);
    expect(net.at(url)).toHaveLength(3);
  });

  it.each([408, 429, 500, 502])("treats %i as retryable", async (status) => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, sequence(answers(status), answers(status), answers(200)));
    const { deliveryId, message } = await pingMessage(hook);
    const outcomes = await runHandlings(message, [1, 2, 3]);
    expect(delaysOf(outcomes)).toEqual([1, 2, "done"]);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts.map((x) => x.statusCode)).toEqual([status, status, 200]);
  });

  it("waits the Retry-After of a 429 (at most 10 s) instead of its own backoff", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(
      url,
      sequence(
        answers(429, { "Retry-After": "10" }),
        answers(429, { "Retry-After": "0" }),
        answers(200),
      ),
    );
    const { deliveryId, message } = await pingMessage(hook);
    const outcomes = await runHandlings(message, [1, 2, 3]);
    // Retry-After: 10 replaced the 1 s wait, Retry-After: 0 the 2 s wait.
    expect(delaysOf(outcomes)).toEqual([10, 0, "done"]);
    expect((await deliveryOf(hook.id, deliveryId)).attempts.map((x) => x.statusCode)).toEqual([
      429, 429, 200,
    ]);
  });

  it("reads a Retry-After given as an HTTP-date", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(
      url,
      async () =>
        new Response("slow down", {
          status: 503,
          headers: { "Retry-After": new Date(Date.now() + 5_000).toUTCString() },
        }),
    );
    const { message } = await pingMessage(hook);
    const [delay] = delaysOf(await runHandlings(message, [1]));
    expect(delay).toBeGreaterThanOrEqual(4);
    expect(delay).toBeLessThanOrEqual(5);
  });

  it("ends at a Retry-After longer than 10 s and waits no less; the next attempt opens round 2", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, sequence(answers(429, { "Retry-After": "600" }), answers(503)));
    const { deliveryId, message } = await pingMessage(hook);
    const result = await runMessages([message]);
    expect(net.at(url)).toHaveLength(1);
    expect(howOf([result])).toEqual(["next round"]);
    expect(delaysOf([result])).toEqual([600]);
    expect((await deliveryOf(hook.id, deliveryId)).rounds).toBe(1);
    // Round 2 has its own 3 attempts, then round 3 comes after about 5 minutes.
    const [a, b, c] = delaysOf(await runHandlings(message, [2, 3, 4]));
    expect([a, b]).toEqual([1, 2]);
    expect(c).toBeGreaterThanOrEqual(300);
    expect(c).toBeLessThanOrEqual(330);
    expect((await deliveryOf(hook.id, deliveryId)).attempts).toHaveLength(4);
  });

  it("records a time-out when the receiver never answers, and retries", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, neverAnswers);
    const { deliveryId, message } = await pingMessage(hook);
    // The attempt's 10 s limit comes from AbortSignal.timeout; the test's signal fires at 300 ms.
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    const limits: number[] = [];
    vi.spyOn(AbortSignal, "timeout").mockImplementation((ms) => {
      limits.push(ms);
      return timeout(300);
    });
    const started = vi.getRealSystemTime();
    const outcomes = await runHandlings(message, [1, 2, 3]);
    // Three attempts cut at 300 ms each; one attempt held to its real 10 s limit would pass
    // 10 s: the bound sits below that, above what a loaded machine takes (3.2 s seen).
    expect(vi.getRealSystemTime() - started).toBeLessThan(9_000);
    expect(limits).toEqual([10_000, 10_000, 10_000]);
    const [a, b, c] = delaysOf(outcomes);
    expect([a, b]).toEqual([1, 2]);
    expect(c).toBeGreaterThanOrEqual(60);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.attempts.map((x) => [x.statusCode, x.error])).toEqual([
      [null, "timeout"],
      [null, "timeout"],
      [null, "timeout"],
    ]);
    // The attempt's clock starts after its 300 ms signal was made (240 ms seen at load 20):
    // what counts is that a time-out records the time it waited, not 0.
    for (const x of delivery.attempts) expect(x.durationMs).toBeGreaterThanOrEqual(150);
  });

  it("uses a 10 s limit per attempt by default", async () => {
    // The limit itself, without waiting 10 s: an AbortSignal of 10 s is given to fetch.
    const { url, hook } = await setUp();
    let seen: AbortSignal | undefined;
    net.endpoints.set(url, async (_r, signal) => {
      seen = signal;
      return new Response(null, { status: 204 });
    });
    const { message } = await pingMessage(hook);
    const timeout = vi.spyOn(AbortSignal, "timeout");
    await runMessages([message]);
    expect(timeout).toHaveBeenCalledWith(10_000);
    expect(seen).toBeInstanceOf(AbortSignal);
  });

  it("records a network error and retries", async () => {
    const { url, hook } = await setUp();
    // No responder: the fake network fails like an unreachable host.
    const { deliveryId, message } = await pingMessage(hook);
    const outcomes = await runHandlings(message, [1, 2, 3]);
    expect(delaysOf(outcomes).slice(0, 2)).toEqual([1, 2]);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("pending");
    expect(delivery.attempts).toHaveLength(3);
    for (const x of delivery.attempts) {
      expect(x.statusCode).toBeNull();
      expect(x.error).toMatch(/^network error/);
    }
    expect(url).toMatch(/^https:/);
  });

  it.each([301, 302, 307, 308])(
    "does not follow a %i: failed for good, not retried",
    async (status) => {
      const { url, hook } = await setUp();
      const elsewhere = publicEndpoint(net, "/moved");
      net.endpoints.set(url, answers(status, { Location: elsewhere.url }));
      net.endpoints.set(elsewhere.url, answers(200));
      const { deliveryId, message } = await pingMessage(hook);
      const result = await runMessages([message]);
      expect(delaysOf([result])).toEqual(["done"]);
      expect(net.at(url)).toHaveLength(1);
      expect(net.at(elsewhere.url)).toHaveLength(0);
      const delivery = await deliveryOf(hook.id, deliveryId);
      expect(delivery.status).toBe("failed");
      expect(delivery.attempts).toEqual([
        expect.objectContaining({ statusCode: status, error: "redirect not followed" }),
      ]);
    },
  );

  it.each([400, 401, 404, 410, 422])("does not retry a %i: failed for good", async (status) => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, sequence(answers(503), answers(status)));
    const { deliveryId, message } = await pingMessage(hook);
    // Even as the 2nd attempt of a round.
    expect(delaysOf(await runHandlings(message, [1, 2]))).toEqual([1, "done"]);
    expect(net.at(url)).toHaveLength(2);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts.map((x) => x.statusCode)).toEqual([503, status]);
  });
});

describe("rounds", () => {
  it("follow 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h, then fail; the deliverer lets go", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(500));
    const { deliveryId, message } = await pingMessage(hook);
    const bases = [60, 300, 1800, 7200, 21_600, 43_200, 86_400];
    for (const [round, base] of bases.entries()) {
      const handlings = [1, 2, 3].map((i) => round * 3 + i);
      const [a, b, c] = delaysOf(await runHandlings(message, handlings));
      expect([a, b]).toEqual([1, 2]);
      expect(c).toBeGreaterThanOrEqual(base);
      // Up to 10 % jitter, capped at 24 h.
      expect(c).toBeLessThanOrEqual(Math.min(86_400, Math.floor(base * 1.1) + 1));
      expect((await deliveryOf(hook.id, deliveryId)).status).toBe("pending");
    }
    // The 8th round: its first two attempts are retried as usual...
    expect(delaysOf(await runHandlings(message, [22, 23]))).toEqual([1, 2]);
    // ...and when the last fails, the delivery is failed and nothing is left to do.
    const last = await runMessages([message], { attempts: 24 });
    expect(delaysOf([last])).toEqual(["done"]);
    expect(last.attempted[0]?.delivery).toMatchObject({ status: "failed", rounds: 8 });
    expect(await heldBy(hook.id)).toEqual([]);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts).toHaveLength(24);
    expect(net.at(url)).toHaveLength(24);
  });

  it("end after the 8th even when long Retry-Afters shortened them to one attempt each", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(429, { "Retry-After": "3600" }));
    const { deliveryId, message } = await pingMessage(hook);
    const rounds = delaysOf(await runHandlings(message, [1, 2, 3, 4, 5, 6, 7]));
    // One attempt per round; the Retry-After raises the short delays of the schedule.
    expect(rounds.slice(0, 3)).toEqual([3600, 3600, 3600]);
    expect((await deliveryOf(hook.id, deliveryId)).status).toBe("pending");
    expect(delaysOf(await runHandlings(message, [8]))).toEqual(["done"]);
    expect((await deliveryOf(hook.id, deliveryId)).status).toBe("failed");
    expect(await heldBy(hook.id)).toEqual([]);
    // A late message of the failed delivery is acked, without an attempt.
    const late = await runMessages([message], { attempts: 9 });
    expect(late).toEqual({ acked: ["m0"], retried: [], attempted: [] });
    expect(net.at(url)).toHaveLength(8);
  });
});

describe("the destination check before every attempt", () => {
  it("refuses a host that now resolves to a private address: unsafe destination, no request", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(200));
    net.dns.set(new URL(url).hostname, { A: ["10.1.2.3"] });
    const { deliveryId, message } = await pingMessage(hook);
    const result = await runMessages([message]);
    expect(delaysOf([result])).toEqual(["done"]);
    expect(net.at(url)).toHaveLength(0);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("failed");
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ statusCode: null, error: "unsafe destination" }),
    ]);
  });

  it("follows CNAMEs to the address they lead to", async () => {
    const { url, hook } = await setUp();
    const host = new URL(url).hostname;
    net.dns.set(host, { CNAME: `edge.${host}` });
    net.dns.set(`edge.${host}`, { AAAA: ["fd12:3456::1"] });
    const { deliveryId, message } = await pingMessage(hook);
    await runMessages([message]);
    expect(net.at(url)).toHaveLength(0);
    expect(net.dohQueries).toContain(`edge.${host} AAAA`);
    expect((await deliveryOf(hook.id, deliveryId)).attempts[0]?.error).toBe("unsafe destination");
  });

  it("never exempts a local origin outside development and test", async () => {
    const company = await createCompany();
    const url = "http://127.0.0.1:9999/hooks";
    const hook = await register(company.id, url);
    net.endpoints.set(url, answers(200));
    const { deliveryId, message } = await pingMessage(hook);
    // The deliverer judges URLs in the environment its bindings name: the same object, its
    // storage and alarm, with production's bindings.
    await runMessages([message], { deliver: false });
    const production = { ...env, ENVIRONMENT: "production" };
    await runInDurableObject(endpointDeliverer(env.WEBHOOK_ENDPOINT, hook.id), (_, state) =>
      new WebhookEndpoint(state, production).alarm(),
    );
    expect(net.at(url)).toHaveLength(0);
    expect((await deliveryOf(hook.id, deliveryId)).attempts[0]?.error).toBe("unsafe destination");
    // In test (as in development) the same origin is exempt.
    const again = await pingMessage(hook);
    await runMessages([again.message]);
    expect(net.at(url)).toHaveLength(1);
  });
});

describe("a hanging endpoint", () => {
  it("is not on the first attempt's way: the deliverer holds a new delivery before the Queue hands it over", async () => {
    const { hook } = await setUp();
    const { deliveryId } = await pingMessage(hook);
    // No Queue message handled yet: the ping handed its delivery over directly.
    expect((await heldBy(hook.id)).map((h) => h.deliveryId)).toEqual([deliveryId]);
  });

  it("holds no Queue batch: the consumer hands every delivery over without an attempt", async () => {
    const slow = await setUp();
    const fast = await setUp();
    net.endpoints.set(slow.url, neverAnswers);
    net.endpoints.set(fast.url, answers(200));
    const a = await pingMessage(slow.hook);
    const b = await pingMessage(fast.hook);
    const result = await runMessages([a.message, b.message], { deliver: false });
    // Acked once stored by the deliverers; no request was made while the batch ran.
    expect(result.acked.sort()).toEqual(["m0", "m1"]);
    expect(net.received.filter((r) => r.url === slow.url || r.url === fast.url)).toEqual([]);
    expect((await heldBy(slow.hook.id)).map((h) => h.deliveryId)).toEqual([a.deliveryId]);
    expect((await heldBy(fast.hook.id)).map((h) => h.deliveryId)).toEqual([b.deliveryId]);
  });

  it("does not delay another endpoint's delivery: it is delivered while the hanging attempt still waits", async () => {
    const slow = await setUp();
    const fast = await setUp();
    // The slow endpoint answers only when the test lets it (no timer involved).
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    net.endpoints.set(slow.url, async () => {
      await released;
      return new Response("late", { status: 503 });
    });
    net.endpoints.set(fast.url, answers(200));
    const a = await pingMessage(slow.hook);
    const b = await pingMessage(fast.hook);
    await runMessages([a.message, b.message], { deliver: false });
    let slowEnded = false;
    const slowRun = runDeliverer(slow.hook.id).then(() => {
      slowEnded = true;
    });
    // The fast endpoint's deliverer delivers while the slow attempt is still waiting.
    await runDeliverer(fast.hook.id);
    expect(await deliveryOf(fast.hook.id, b.deliveryId)).toMatchObject({
      status: "delivered",
      rounds: 1,
      nextAttemptAt: null,
    });
    expect(slowEnded).toBe(false);
    expect(net.at(slow.url)).toHaveLength(1);
    expect(net.at(fast.url)).toHaveLength(1);
    expect((await deliveryOf(fast.hook.id, b.deliveryId)).status).toBe("delivered");
    expect((await deliveryOf(slow.hook.id, a.deliveryId)).attempts).toEqual([]);
    release();
    await slowRun;
    const slowDelivery = await deliveryOf(slow.hook.id, a.deliveryId);
    expect(slowDelivery).toMatchObject({ status: "pending", attemptsInRound: 1 });
    expect(waitAfterLastAttempt(slowDelivery)).toBe(1);
    expect(slowDelivery.attempts.map((x) => x.statusCode)).toEqual([503]);
  });
});

describe("a batch", () => {
  it("retries every message after 60 s, without a request, when D1 cannot be read; acks a malformed one", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(200));
    const { deliveryId, message } = await pingMessage(hook);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const malformed = { deliveryID: deliveryId } as unknown as WebhookMessage;
    const result = await runMessages([message, malformed], { env: unavailableDb() });
    expect(result.retried).toEqual([{ msgId: "m0", delaySeconds: 60 }]);
    expect(result.acked).toEqual(["m1"]);
    expect(result.attempted).toEqual([]);
    expect(net.at(url)).toHaveLength(0);
    expect((await deliveryOf(hook.id, deliveryId)).status).toBe("pending");
  });

  it("continues with a new message when a message's own retries are spent while pending", async () => {
    const { hook } = await setUp();
    const { deliveryId, message } = await pingMessage(hook);
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const sentBefore = net.sent.length;
    // The Queue's 24th handling of this message: retrying would dead-letter a pending delivery.
    const result = await runMessages([message], { attempts: 24, env: unavailableDb() });
    expect(result.acked).toEqual(["m0"]);
    expect(net.sent.slice(sentBefore)).toEqual([{ deliveryId, companyId: expect.any(Number) }]);
    expect(net.sentDelays.slice(sentBefore)).toEqual([60]);
    expect((await deliveryOf(hook.id, deliveryId)).status).toBe("pending");
  });

  it("makes one attempt for two messages of the same delivery, and acks both", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(200));
    const { deliveryId, message } = await pingMessage(hook);
    const result = await runMessages([message, message]);
    expect(result.acked.sort()).toEqual(["m0", "m1"]);
    expect(net.at(url)).toHaveLength(1);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts).toHaveLength(1);
  });

  it("keeps the due instant of a delivery handed over again (the sweeper's duplicate)", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(503));
    const { message } = await pingMessage(hook);
    await runMessages([message]);
    const [before] = await heldBy(hook.id);
    await runMessages([message], { deliver: false });
    expect(await heldBy(hook.id)).toEqual([before]);
    expect(net.at(url)).toHaveLength(1);
  });

  it("handles many deliveries of one batch, each recorded with its own outcome", async () => {
    const ok = await setUp();
    const failing = await setUp();
    const gone = await setUp();
    net.endpoints.set(ok.url, answers(200));
    net.endpoints.set(failing.url, answers(503));
    net.endpoints.set(gone.url, answers(410));
    const pings = [];
    for (let i = 0; i < 5; i += 1) {
      pings.push({ hook: ok.hook, ...(await pingMessage(ok.hook)) });
      pings.push({ hook: failing.hook, ...(await pingMessage(failing.hook)) });
      pings.push({ hook: gone.hook, ...(await pingMessage(gone.hook)) });
    }
    const result = await runMessages(pings.map((p) => p.message));
    // Every message acked; the failing endpoint's each followed by its next attempt in 1 s.
    expect(result.acked).toHaveLength(pings.length);
    expect(result.retried).toEqual([]);
    expect(
      result.attempted
        .filter((a) => a.delivery.status === "pending" && a.delivery.attemptsInRound === 1)
        .map((a) => a.msgId)
        .sort(),
    ).toEqual(
      pings
        .map((p, i) => ({ hook: p.hook, msgId: `m${i}` }))
        .filter((p) => p.hook === failing.hook)
        .map(({ msgId }) => msgId)
        .sort(),
    );
    for (const p of pings) {
      const delivery = await deliveryOf(p.hook.id, p.deliveryId);
      const expected =
        p.hook === ok.hook ? "delivered" : p.hook === gone.hook ? "failed" : "pending";
      expect(delivery.status).toBe(expected);
      expect(delivery.attempts).toHaveLength(1);
    }
  }, 20_000);
});

describe("the deliverer's alarm", () => {
  it("attempts what is due now and leaves what is not", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(503));
    const { deliveryId, message } = await pingMessage(hook);
    await runMessages([message], { deliver: false });
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() }); // still ahead, and still
    const stub = endpointDeliverer(env.WEBHOOK_ENDPOINT, hook.id);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(net.at(url)).toHaveLength(1);
    // The next attempt is due in 1 s: the alarm is set for then, and run now it does nothing.
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(
      (await heldBy(hook.id))[0]?.dueAt,
    );
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(net.at(url)).toHaveLength(1);
    expect((await heldBy(hook.id)).map((h) => h.deliveryId)).toEqual([deliveryId]);
  });
});

describe("ping and replay", () => {
  it("a Ping reaches a registration of any event type", async () => {
    for (const type of [
      "MachineStopClassificationCreated",
      "MachineStopClassificationUpdated",
      "MachineStopClassificationDeleted",
    ]) {
      const { url, hook } = await setUp(type);
      net.endpoints.set(url, answers(200));
      const { message } = await pingMessage(hook);
      await runMessages([message]);
      expect(net.at(url).map((r) => r.headers.get("x-service-event-type"))).toEqual(["Ping"]);
    }
  });

  it("replays a failed delivery with the same eventId and body and a new request id", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(410));
    const { deliveryId, eventId, message } = await pingMessage(hook);
    await runMessages([message]);
    expect((await deliveryOf(hook.id, deliveryId)).status).toBe("failed");

    // The receiver is fixed; the operator replays.
    net.endpoints.set(url, answers(200));
    const sentBefore = net.sent.length;
    const res = await operator("POST", `/deliveries/${deliveryId}/replay`);
    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ deliveryId });
    expect(net.sent.slice(sentBefore)).toEqual([{ deliveryId, companyId: expect.any(Number) }]);
    // While pending, a second replay is refused.
    expect((await operator("POST", `/deliveries/${deliveryId}/replay`)).status).toBe(409);

    const result = await runMessages([{ deliveryId }]);
    expect(delaysOf([result])).toEqual(["done"]);
    const [first, second] = net.at(url);
    expect(second?.body).toBe(first?.body);
    expect(second?.headers.get("x-service-event-id")).toBe(eventId);
    expect(second?.headers.get("x-service-timestamp")).toBe(
      first?.headers.get("x-service-timestamp"),
    );
    expect(second?.headers.get("x-service-request-id")).not.toBe(
      first?.headers.get("x-service-request-id"),
    );
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.status).toBe("delivered");
    expect(delivery.attempts.map((x) => x.statusCode)).toEqual([410, 200]);
  });

  it("replay: unknown delivery 404, deleted registration 409", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(404));
    const { deliveryId, message } = await pingMessage(hook);
    await runMessages([message]);
    expect((await operator("POST", `/deliveries/${crypto.randomUUID()}/replay`)).status).toBe(404);
    expect((await operator("DELETE", `/webhooks/${hook.id}`)).status).toBe(204);
    expect((await operator("POST", `/deliveries/${deliveryId}/replay`)).status).toBe(409);
  });

  it("a pending delivery of a deleted registration ends failed without an attempt", async () => {
    const { url, hook } = await setUp();
    net.endpoints.set(url, answers(200));
    const { deliveryId, message } = await pingMessage(hook);
    expect((await operator("DELETE", `/webhooks/${hook.id}`)).status).toBe(204);
    const result = await runMessages([message]);
    expect(result.attempted).toEqual([]);
    expect(net.at(url)).toHaveLength(0);
    expect(await deliveryOf(hook.id, deliveryId)).toMatchObject({ status: "failed", attempts: [] });
    expect(await heldBy(hook.id)).toEqual([]);
  });
});
