/**
 * Events survive restarts: a realtime write's event is stored in its object before the write
 * is answered, so an object restarted between the answer and the publish still publishes it,
 * and a batch resent after its answer was lost is appended once. A failed forward from the
 * machine stream to the company stream is retried, not dropped.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { Delivery } from "../../src/events/outbox";
import { api } from "../harness";
import { plant, postSku } from "../realtime/plant";
import { SseSubscriber } from "./subscriber";

const open: SseSubscriber[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function sse(key: string, path: string): Promise<SseSubscriber> {
  const res = await api(key, path);
  expect(res.status).toBe(200);
  const sub = new SseSubscriber(res);
  open.push(sub);
  return sub;
}

/** The parts of an outbox a test reaches into (its sender, to make it fail). */
type OutboxInside = {
  send: (batch: unknown[], delivery: Delivery) => Promise<unknown>;
};

const WRITES = ["segment.changed", "segment.updated"];

describe("events of answered realtime writes", () => {
  it("a restart between the answer and the publish loses none, and a resent batch adds none twice", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const machineSub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const companySub = await sse(p.co.key, "/v1/realtime/events");
    expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
    await machineSub.waitFor((e) => e.type === "segment.changed");

    // The stream becomes unreachable for the object: its writes are still answered.
    const realtime = env.REALTIME_MACHINE.get(
      env.REALTIME_MACHINE.idFromName(`${p.co.id}:${m.id}`),
    );
    let real: OutboxInside["send"] | null = null;
    await runInDurableObject(realtime, (instance) => {
      const outbox = (instance as unknown as { publisher: { outbox: OutboxInside } }).publisher
        .outbox;
      real = outbox.send;
      outbox.send = async () => {
        throw new Error("stream unreachable");
      };
    });
    for (const quantity of [2, 3, 4]) {
      expect((await postSku(p.co, m.id, { quantity })).status).toBe(204);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(machineSub.of("segment.updated")).toHaveLength(0);

    // The first of them reached the stream after all, but its answer was lost: the object
    // still holds it and will send it again.
    await runInDurableObject(realtime, async (_instance, state) => {
      const rows = state.storage.sql
        .exec<{ seq: number; item: string }>("SELECT seq, item FROM event_outbox ORDER BY seq")
        .toArray();
      expect(rows).toHaveLength(3);
      const source = state.storage.sql
        .exec<{ id: string }>("SELECT id FROM outbox_source WHERE tbl = 'event_outbox'")
        .one().id;
      const first = rows[0];
      if (!real || !first) throw new Error("no sender");
      await real([JSON.parse(first.item)], { source: `event_outbox:${source}`, seqs: [first.seq] });
    });
    await machineSub.waitFor((e) => e.type === "segment.updated");

    // The object restarts (a deploy, an eviction) before it could publish the rest.
    await runInDurableObject(realtime, (_instance, state) => state.abort("restart")).catch(
      (error: unknown) => expect(String(error)).toContain("restart"),
    );
    // Its next start publishes what it holds: every event once, in revision order.
    expect((await api(p.co.key, `/v1/realtime/${m.id}`)).status).toBe(200);
    const events = await machineSub.waitFor((e) => WRITES.includes(e.type), 4);
    await new Promise((r) => setTimeout(r, 500));
    const writes = machineSub.events.filter((e) => WRITES.includes(e.type));
    expect(writes.map((e) => e.data.revision)).toEqual([1, 2, 3, 4]);
    expect(writes.map((e) => e.data.quantity ?? null)).toEqual([null, 2, 3, 4]);
    expect(events).toHaveLength(4);
    // The company stream got each once too.
    await companySub.waitFor((e) => WRITES.includes(e.type), 4);
    await new Promise((r) => setTimeout(r, 300));
    expect(
      companySub.events.filter((e) => WRITES.includes(e.type)).map((e) => e.data.revision),
    ).toEqual([1, 2, 3, 4]);
  });

  it("a failed forward to the company stream is retried, not dropped", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const companySub = await sse(p.co.key, "/v1/realtime/events");
    expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
    await companySub.waitFor((e) => e.type === "segment.changed");
    const stream = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(`m:${p.co.id}:${m.id}`));
    let failures = 0;
    await runInDurableObject(stream, (instance) => {
      const outbox = (instance as unknown as { forwarding: OutboxInside }).forwarding;
      const real = outbox.send;
      // The company stream fails twice, then answers again.
      outbox.send = async (batch, delivery) => {
        failures += 1;
        if (failures <= 2) throw new Error("company stream unreachable");
        return real(batch, delivery);
      };
    });
    for (const quantity of [5, 6]) {
      expect((await postSku(p.co, m.id, { quantity })).status).toBe(204);
    }
    const forwarded = await companySub.waitFor((e) => e.type === "segment.updated", 2, 10_000);
    expect(failures).toBeGreaterThanOrEqual(3);
    expect(forwarded.map((e) => e.data.quantity)).toEqual([5, 6]);
    await new Promise((r) => setTimeout(r, 300));
    expect(companySub.of("segment.updated")).toHaveLength(2);
  });
});
