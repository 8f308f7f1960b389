/**
 * One retry schedule (src/webhooks/retry-policy.ts), decided by the deliverer after each
 * attempt and recorded with the delivery: the deliverer's alarm and the outbox sweeper both
 * read that record, so the sweeper honours a wait that `Retry-After` lengthened, uses the
 * deliverer's jitter rather than its own, and a re-send changes neither the count of the
 * round's attempts nor the schedule (docs/webhook-delivery.md, "One schedule").
 */
import {
  createExecutionContext,
  createScheduledController,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { DEFAULT_RETRY_POLICY, ROUND_DELAYS_SECONDS } from "../../src/webhooks/retry-policy";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import {
  clockAhead,
  deliveryOf,
  heldBy,
  ping,
  register,
  runDeliverer,
  runMessages,
  waitAfterLastAttempt,
} from "../fixtures/webhook-harness";
import { operatorJson } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
  clockAhead();
});

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** The sweeper's margin in these tests: 45 s of quiet past the schedule. */
const MARGIN = { WEBHOOK_STALLED_MARGIN_SECONDS: "45" };

/** Runs the cron handler (the outbox sweeper) with a 45 s stalled margin. */
async function sweep(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(
    createScheduledController({ cron: "* * * * *" }),
    { ...env, ...MARGIN },
    ctx,
  );
  await waitOnExecutionContext(ctx);
}

/** A registration whose endpoint answers `status` (with `headers`), and a ping pending for it. */
async function pendingPing(status: number, headers: Record<string, string> = {}) {
  const [company] = await operatorJson<{ id: number }[]>("POST", "/companies", [
    { name: `Schedule ${crypto.randomUUID()}`, timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  const endpoint = publicEndpoint(net);
  net.endpoints.set(endpoint.url, answers(status, headers));
  const hook = await register(company.id, endpoint.url);
  const { deliveryId } = await ping(hook.id);
  return { hook, url: endpoint.url, deliveryId };
}

/** The wait before round 2 the policy may draw, s: the schedule's first, plus up to its jitter. */
const ROUND_2_WAIT = {
  least: ROUND_DELAYS_SECONDS[0] ?? 0,
  most: Math.round((ROUND_DELAYS_SECONDS[0] ?? 0) * (1 + DEFAULT_RETRY_POLICY.jitter)),
};

/** How many times the sweeper has sent `deliveryId` to the Queue so far. */
const sendsOf = (deliveryId: string) => net.sent.filter((m) => m.deliveryId === deliveryId).length;

describe("one retry schedule", () => {
  it("counts a round's attempts from the delivery's record: a re-send by the sweeper does not restart the round", async () => {
    const { hook, url, deliveryId } = await pendingPing(503);
    await runDeliverer(hook.id);
    expect(await deliveryOf(hook.id, deliveryId)).toMatchObject({ attemptsInRound: 1 });
    const sent = sendsOf(deliveryId);

    // Quiet past its next attempt (1 s) by more than the margin: the sweeper sends it again,
    // which writes the delivery's row (enqueued_at, updated_at).
    vi.setSystemTime(Date.now() + 60_000);
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent + 1);

    // The round goes on where it was: two more attempts, then the next round.
    await runDeliverer(hook.id);
    expect(await deliveryOf(hook.id, deliveryId)).toMatchObject({ attemptsInRound: 2 });
    await runDeliverer(hook.id);
    expect(net.at(url)).toHaveLength(3);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.attempts).toHaveLength(3);
    expect(delivery).toMatchObject({ rounds: 1, attemptsInRound: 0, status: "pending" });
    expect(waitAfterLastAttempt(delivery)).toBeGreaterThanOrEqual(ROUND_2_WAIT.least);
    expect(waitAfterLastAttempt(delivery)).toBeLessThanOrEqual(ROUND_2_WAIT.most);
  });

  it("keeps a wait lengthened by Retry-After: the sweeper does not send the delivery again before it", async () => {
    // Over 10 s ends the round; the next round waits the hour asked for, not 1 to 1.1 min.
    const { hook, deliveryId } = await pendingPing(503, { "Retry-After": "3600" });
    await runDeliverer(hook.id);
    const attempted = await deliveryOf(hook.id, deliveryId);
    expect(attempted).toMatchObject({ rounds: 1, attemptsInRound: 0, status: "pending" });
    expect(waitAfterLastAttempt(attempted)).toBe(3600);
    const dueAt = (await heldBy(hook.id)).find((h) => h.deliveryId === deliveryId)?.dueAt ?? 0;
    const sent = sendsOf(deliveryId);

    vi.useFakeTimers({ toFake: ["Date"], now: dueAt - 3_000_000 }); // 10 min after the attempt
    await sweep();
    vi.setSystemTime(dueAt + 44_000);
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent);
    vi.setSystemTime(dueAt + 46_000);
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent + 1);
    // The deliverer's alarm and the delivery's record say the same instant.
    expect(Date.parse((await deliveryOf(hook.id, deliveryId)).nextAttemptAt ?? "")).toBe(dueAt);
  });

  it("reads the deliverer's jitter from the record instead of drawing its own bound", async () => {
    // The deliverer drew its jitter: the next round is due 60 to 66 s after the round ended.
    // The sweeper takes the message for lost 45 s after the instant recorded, whatever was
    // drawn, not after the 66 s of the largest jitter.
    const { hook, deliveryId } = await pendingPing(503);
    await runDeliverer(hook.id);
    await runDeliverer(hook.id);
    await runDeliverer(hook.id);
    const roundEnded = await deliveryOf(hook.id, deliveryId);
    expect(roundEnded).toMatchObject({ rounds: 1, attemptsInRound: 0 });
    expect(waitAfterLastAttempt(roundEnded)).toBeGreaterThanOrEqual(ROUND_2_WAIT.least);
    expect(waitAfterLastAttempt(roundEnded)).toBeLessThanOrEqual(ROUND_2_WAIT.most);
    const dueAt = (await heldBy(hook.id)).find((h) => h.deliveryId === deliveryId)?.dueAt ?? 0;
    const sent = sendsOf(deliveryId);

    vi.useFakeTimers({ toFake: ["Date"], now: dueAt + 44_000 });
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent);
    vi.setSystemTime(dueAt + 46_000); // 106 to 112 s after the round
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent + 1);
  });

  it("starts a replayed delivery over: no attempts in its round, no next attempt", async () => {
    const { hook, url, deliveryId } = await pendingPing(410);
    await runDeliverer(hook.id);
    expect(await deliveryOf(hook.id, deliveryId)).toMatchObject({ status: "failed" });
    net.endpoints.set(url, answers(503));
    await operatorJson("POST", `/deliveries/${deliveryId}/replay`);
    const replayed = await deliveryOf(hook.id, deliveryId);
    expect(replayed).toMatchObject({
      status: "pending",
      rounds: 0,
      attemptsInRound: 0,
      nextAttemptAt: null,
    });
    const { attempted } = await runMessages([{ deliveryId }]);
    expect(attempted[0]?.delivery).toMatchObject({ status: "pending", attemptsInRound: 1 });
  });
});
