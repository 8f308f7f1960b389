/**
 * A person waits for a stop reason and for an operator's classification, not for the webhook
 * deliveries they make: both answer once the change, its webhook event and deliveries and its
 * stream event are stored, and the deliveries are handed over (Queue message, then the
 * registration's deliverer) after the answer. Nothing is lost when that hand-over fails: the
 * delivery is in D1 with the change, and the outbox sweeper sends it (docs/realtime.md, "Stop
 * reasons"; docs/webhook-delivery.md).
 */
import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import type { WebhookEndpoint } from "../../src/webhooks/endpoint-deliverer";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { deliveriesOf, register, runMessages, settleDeliverers } from "../fixtures/webhook-harness";
import { api, createCompany, createMachines, operator, operatorJson } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
});

afterEach(async () => {
  vi.useRealTimers();
  await settleDeliverers();
  vi.restoreAllMocks();
});

/** A machine with an open stop, a cause in the catalog and a `Created` registration. */
async function plant() {
  const co = await createCompany();
  const [m] = await createMachines(co.id, [{ name: "Press" }]);
  if (!m) throw new Error("no machine");
  await operatorJson("POST", `/companies/${co.id}/stop-causes`, [
    { kind: "generalCause", name: "Jam" },
  ]);
  const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${m.id}/stops`, [
    { startTime: new Date(Date.now() - 5 * 60_000).toISOString(), isProgrammed: false },
  ]);
  if (!stop) throw new Error("no stop");
  const { url } = publicEndpoint(net, "/created");
  net.endpoints.set(url, answers(200));
  const hook = await register(co.id, url, "MachineStopClassificationCreated");
  return { co, machineId: m.id, stopId: stop.id, hook, url };
}

/** Runs the cron handler (the outbox sweeper) with the test's clock. */
async function sweep(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

/** `promise`'s value, or "still waiting" after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | "still waiting"> {
  return Promise.race([
    promise,
    new Promise<"still waiting">((resolve) => setTimeout(() => resolve("still waiting"), ms)),
  ]);
}

const doors = {
  "the scanner's stop reason": (p: Awaited<ReturnType<typeof plant>>) =>
    api(p.co.key, `/v1/realtime/${p.machineId}/stop-reason`, {
      method: "POST",
      json: { stopId: p.stopId, generalCause: { name: "Jam" } },
    }),
  "the operator's classification": (p: Awaited<ReturnType<typeof plant>>) =>
    operator("PUT", `/stops/${p.stopId}/classification`, { generalCause: { name: "Jam" } }),
};

describe.each(Object.entries(doors))("%s", (_door, send) => {
  it("answers while the Queue holds the hand-over, and a hand-over that fails loses nothing", async () => {
    const p = await plant();
    // The Queue holds the first send until the test lets it go, then refuses it; the direct
    // hand-over to the deliverer fails too: the whole after-answer hand-over fails.
    let letGo = () => {};
    const held = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    net.sendBatch.mockImplementationOnce(async () => {
      await held;
      throw new Error("Queue unavailable");
    });
    const refusing = { accept: () => Promise.reject(new Error("deliverer unreachable")) };
    vi.spyOn(env.WEBHOOK_ENDPOINT, "get").mockImplementationOnce(
      () => refusing as unknown as DurableObjectStub<WebhookEndpoint>,
    );
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});

    const answer = await within(send(p), 5_000);
    if (answer === "still waiting") throw new Error("the answer waited for the webhook hand-over");
    expect(answer.status, await answer.clone().text()).toBe(200);
    // The delivery is stored with the change, before the answer.
    const [pending] = await deliveriesOf(p.hook.id);
    expect(pending?.status).toBe("pending");

    letGo();
    await vi.waitUntil(
      () => logged.mock.calls.some((call) => String(call[0]).includes("webhook hand-over failed")),
      { timeout: 5_000, interval: 20 },
    );
    expect(net.sent.map((m) => m.deliveryId)).not.toContain(pending?.id);

    // The sweeper sends what was never sent once it is 30 s old, and it is delivered.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 31_000 });
    await sweep();
    vi.useRealTimers();
    const resent = net.sent.filter((m) => m.deliveryId === pending?.id);
    expect(resent).toHaveLength(1);
    await runMessages(resent);
    expect((await deliveriesOf(p.hook.id)).map((d) => d.status)).toEqual(["delivered"]);
    expect(net.at(p.url)).toHaveLength(1);
  });

  it("hands the delivery over after the answer when the Queue and the deliverer work", async () => {
    const p = await plant();
    const from = net.sent.length;
    const res = await send(p);
    expect(res.status).toBe(200);
    const [pending] = await deliveriesOf(p.hook.id);
    await vi.waitUntil(() => net.sent.length > from, { timeout: 5_000, interval: 20 });
    expect(net.sent.slice(from)).toEqual([{ deliveryId: pending?.id, companyId: p.co.id }]);
    await runMessages(net.sent.slice(from));
    expect((await deliveriesOf(p.hook.id)).map((d) => d.status)).toEqual(["delivered"]);
  });
});
