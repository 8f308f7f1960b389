/**
 * Events survive restarts: a realtime write's event is stored in its object before the write
 * is answered, so an object restarted between the answer and the publish still publishes it,
 * and a batch resent after its answer was lost is appended once. A failed forward from the
 * machine stream to the company stream is retried, not dropped. Concurrent writes share
 * calls to the stream (group commit) and still give each event once, in revision order.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import {
  CALL_SPACING_MS,
  PRUNE_IDLE_MS,
  type StreamDelivery,
} from "../../src/streams/stream-outbox";
import { plant, postSku } from "../fixtures/plant";
import { openedStreams } from "../fixtures/stream-clients";
import { api } from "../harness";

const streams = openedStreams();
const sse = streams.sse;

afterEach(() => streams.closeAll());

/** The parts of an outbox a test reaches into (its sender, to make it fail). */
type OutboxInside = {
  send: (batch: unknown[], delivery: StreamDelivery) => Promise<unknown>;
  pending: () => number;
};

/** The realtime object's outbox, reached through its publisher. */
function publisherOutbox(instance: unknown): OutboxInside {
  return (instance as { publisher: { outbox: OutboxInside } }).publisher.outbox;
}

const WRITES = ["segment.changed", "segment.updated"];

/**
 * A plant with both streams subscribed (the machine's and the company's) and a first SKU
 * write already seen on the machine's.
 */
async function subscribedMachine() {
  const p = await plant();
  const m = p.machines[0];
  if (!m) throw new Error("no machine");
  const machineSub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
  const companySub = await sse(p.co.key, "/v1/realtime/events");
  expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
  await machineSub.waitFor((e) => e.type === "segment.changed");
  return { p, m, machineSub, companySub };
}

describe("events of answered realtime writes", () => {
  it("a restart between the answer and the publish loses none, and a resent batch adds none twice", async () => {
    const { p, m, machineSub, companySub } = await subscribedMachine();

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

  it("concurrent writes share calls, are stored before their answers, and give each event once in revision order", async () => {
    const { p, m, machineSub, companySub } = await subscribedMachine();

    // Count the object's calls to its stream; the stream is unreachable at first.
    const realtime = env.REALTIME_MACHINE.get(
      env.REALTIME_MACHINE.idFromName(`${p.co.id}:${m.id}`),
    );
    const calls: { items: number; at: number }[] = [];
    let reachable = false;
    await runInDurableObject(realtime, (instance) => {
      const outbox = publisherOutbox(instance);
      const real = outbox.send;
      outbox.send = async (batch, delivery) => {
        if (!reachable) throw new Error("stream unreachable");
        calls.push({ items: batch.length, at: Date.now() });
        return real(batch, delivery);
      };
    });
    const BURST = 12;
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, i) => postSku(p.co, m.id, { quantity: 100 + i })),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(BURST).fill(204));
    // Every answered write's event is stored in the object, none sent yet.
    await runInDurableObject(realtime, (_instance, state) => {
      const n = state.storage.sql
        .exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox")
        .one().n;
      expect(n).toBe(BURST);
    });

    // The stream answers again: the held events go out in few calls, not one per write.
    reachable = true;
    await runInDurableObject(realtime, (instance) => {
      void (instance as unknown as { drainEvents: () => void }).drainEvents();
    });
    const updates = await machineSub.waitFor((e) => e.type === "segment.updated", BURST);
    expect(calls.reduce((n, c) => n + c.items, 0)).toBe(BURST);
    expect(calls.length).toBeLessThan(BURST / 2);

    // A second burst while the stream is reachable: the calls start CALL_SPACING_MS apart
    // at least, and what was stored meanwhile shares the next one.
    const before = calls.length;
    const second = await Promise.all(
      Array.from({ length: BURST }, (_, i) => postSku(p.co, m.id, { quantity: 200 + i })),
    );
    expect(second.map((r) => r.status)).toEqual(Array(BURST).fill(204));
    await machineSub.waitFor((e) => e.type === "segment.updated", 2 * BURST);
    const burst = calls.slice(before);
    expect(burst.reduce((n, c) => n + c.items, 0)).toBe(BURST);
    expect(burst.length).toBeLessThan(BURST);
    for (let i = 1; i < burst.length; i += 1) {
      expect((burst[i]?.at ?? 0) - (burst[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(CALL_SPACING_MS);
    }

    await new Promise((r) => setTimeout(r, 300));
    const revisions = (events: { type: string; data: Record<string, unknown> }[]) =>
      events.filter((e) => WRITES.includes(e.type)).map((e) => e.data.revision);
    const expected = Array.from({ length: 2 * BURST + 1 }, (_, i) => i + 1);
    // Each event once, in the order of the revisions, on the machine's and the company's stream.
    expect(revisions(machineSub.events)).toEqual(expected);
    await companySub.waitFor((e) => WRITES.includes(e.type), 2 * BURST + 1);
    expect(revisions(companySub.events)).toEqual(expected);
    expect(updates.length).toBe(BURST);
    // Nothing is left to send, and the acknowledged events leave storage once nothing was
    // staged for PRUNE_IDLE_MS.
    await runInDurableObject(realtime, (instance) => {
      expect(publisherOutbox(instance).pending()).toBe(0);
    });
    await new Promise((r) => setTimeout(r, PRUNE_IDLE_MS + 100));
    await runInDurableObject(realtime, (_instance, state) => {
      const n = state.storage.sql
        .exec<{ n: number }>("SELECT count(*) AS n FROM event_outbox")
        .one().n;
      expect(n).toBe(0);
    });

    // A restart with the outbox empty: the next event still gets a sequence number above
    // every one sent before (else the stream would take it for a resent one and drop it).
    await runInDurableObject(realtime, (_instance, state) => state.abort("restart")).catch(
      (error: unknown) => expect(String(error)).toContain("restart"),
    );
    expect((await postSku(p.co, m.id, { quantity: 300 })).status).toBe(204);
    const after = await machineSub.waitFor((e) => e.data.quantity === 300);
    expect(after.map((e) => e.data.revision)).toEqual([2 * BURST + 2]);
  });
});
