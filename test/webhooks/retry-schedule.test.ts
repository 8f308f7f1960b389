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
import { operatorJson } from "../harness";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "./fake-network";
import { deliveryOf, heldBy, ping, register, runDeliverer, runMessages } from "./webhook-harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
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

/** How many times the sweeper has sent `deliveryId` to the Queue so far. */
const sendsOf = (deliveryId: string) => net.sent.filter((m) => m.deliveryId === deliveryId).length;

describe("one retry schedule", () => {
  it("counts a round's attempts from the delivery's record: a re-send by the sweeper does not restart the round", async () => {
    const { hook, url, deliveryId } = await pendingPing(503);
    const [first] = await runDeliverer(hook.id, { policy: { random: () => 0 } });
    expect(first?.[1]).toMatchObject({ kind: "next-attempt" });
    const sent = sendsOf(deliveryId);

    // Quiet past its next attempt (1 s) by more than the margin: the sweeper sends it again,
    // which writes the delivery's row (enqueued_at, updated_at).
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 60_000 });
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent + 1);
    vi.useRealTimers();

    // The round goes on where it was: two more attempts, then the next round.
    const [second] = await runDeliverer(hook.id, { policy: { random: () => 0 } });
    expect(second?.[1]).toMatchObject({ kind: "next-attempt" });
    const [third] = await runDeliverer(hook.id, { policy: { random: () => 0 } });
    expect(third?.[1]).toMatchObject({ kind: "next-round", rounds: 1, delaySeconds: 60 });
    expect(net.at(url)).toHaveLength(3);
    const delivery = await deliveryOf(hook.id, deliveryId);
    expect(delivery.attempts).toHaveLength(3);
    expect(delivery).toMatchObject({ rounds: 1, attemptsInRound: 0, status: "pending" });
  });

  it("keeps a wait lengthened by Retry-After: the sweeper does not send the delivery again before it", async () => {
    // Over 10 s ends the round; the next round waits the hour asked for, not 1 to 1.1 min.
    const { hook, deliveryId } = await pendingPing(503, { "Retry-After": "3600" });
    const [[, step] = []] = await runDeliverer(hook.id);
    expect(step).toMatchObject({ kind: "next-round", rounds: 1, delaySeconds: 3600 });
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
    vi.useRealTimers();
    // The deliverer's alarm and the delivery's record say the same instant.
    expect(Date.parse((await deliveryOf(hook.id, deliveryId)).nextAttemptAt ?? "")).toBe(dueAt);
  });

  it("reads the deliverer's jitter from the record instead of drawing its own bound", async () => {
    // The deliverer drew no jitter: the next round is due 60 s after the round ended. The
    // sweeper takes the message for lost 45 s after that, not after the 66 s of the largest
    // jitter.
    const { hook, deliveryId } = await pendingPing(503);
    const noJitter = { policy: { random: () => 0 } };
    await runDeliverer(hook.id, noJitter);
    await runDeliverer(hook.id, noJitter);
    const [[, step] = []] = await runDeliverer(hook.id, noJitter);
    expect(step).toMatchObject({ kind: "next-round", delaySeconds: 60 });
    const dueAt = (await heldBy(hook.id)).find((h) => h.deliveryId === deliveryId)?.dueAt ?? 0;
    const sent = sendsOf(deliveryId);

    vi.useFakeTimers({ toFake: ["Date"], now: dueAt + 44_000 });
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent);
    vi.setSystemTime(dueAt + 46_000); // 106 s after the round: the old sweeper waited 111 s
    await sweep();
    expect(sendsOf(deliveryId)).toBe(sent + 1);
  });

  it("starts a replayed delivery over: no attempts in its round, no next attempt", async () => {
    const { hook, url, deliveryId } = await pendingPing(410);
    const [[, step] = []] = await runDeliverer(hook.id);
    expect(step).toMatchObject({ kind: "done", status: "failed" });
    net.endpoints.set(url, answers(503));
    await operatorJson("POST", `/deliveries/${deliveryId}/replay`);
    const replayed = await deliveryOf(hook.id, deliveryId);
    expect(replayed).toMatchObject({
      status: "pending",
      rounds: 0,
      attemptsInRound: 0,
      nextAttemptAt: null,
    });
    const { steps } = await runMessages([{ deliveryId }]);
    expect(steps[0]?.step).toMatchObject({ kind: "next-attempt", attemptsInRound: 1 });
  });
});
