/**
 * A resume far behind: a client 50,000 events behind gets them all, in order, a page at a
 * time as it reads (the stream object holds at most a page or two for it), and a live
 * subscriber of the same stream gets a new write's event at once meanwhile.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { plant, postSku } from "../fixtures/plant";
import { SseSubscriber, WsSubscriber } from "../fixtures/subscriber";
import { api } from "../harness";

const BEHIND = 50_000;
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** Chunks queued in the stream object for each SSE subscriber (its backlog in memory). */
/** A stream object's parts (`StreamCore`), read and changed by the test. */
type Inspectable = {
  core: {
    log: { lastId: number | null };
    subscribers: {
      sse: Set<{ controller: ReadableStreamDefaultController<Uint8Array>; cursor: number | null }>;
    };
  };
};

/** Waits for `count` events by polling (a `waitFor` per message would be quadratic here). */
async function arrived(sub: SseSubscriber | WsSubscriber, count: number) {
  const deadline = Date.now() + 60_000;
  while (sub.events.length < count && Date.now() < deadline && !sub.closed) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return sub.events;
}

describe("a resume 50,000 events behind", () => {
  it("stays bounded, arrives whole and in order, and starves no live subscriber", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const name = `m:${p.co.id}:${m.id}`;
    const stub = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(name));
    // 50,000 stored events after those the stream has (its shift.started), as a busy day
    // of a machine leaves them.
    let base = 0;
    await runInDurableObject(stub, (instance, state) => {
      const at = Date.now();
      base =
        state.storage.sql.exec<{ last: number | null }>("SELECT max(id) AS last FROM events").one()
          .last ?? 0;
      for (let id = base + 1; id <= base + BEHIND; id += 1) {
        const body = JSON.stringify({
          id,
          type: "segment.updated",
          at: new Date(at).toISOString(),
          machineId: m.id,
          data: { revision: id, quantity: id },
        });
        state.storage.sql.exec(
          "INSERT INTO events (id, at, type, body) VALUES (?, ?, 'segment.updated', ?)",
          id,
          at,
          body,
        );
      }
      // The log reads its newest id again (it keeps it in memory).
      (instance as unknown as Inspectable).core.log.lastId = null;
    });

    // The lagging client: subscribed from the start, not reading yet.
    const behind = await api(p.co.key, `/v1/realtime/${m.id}/events?since=${base}`);
    expect(behind.status).toBe(200);
    const live = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
    open.push(live);
    const wsBehind = await api(p.co.key, `/v1/realtime/${m.id}/events?since=${base}`, {
      headers: { upgrade: "websocket" },
    });
    const ws = new WsSubscriber(wsBehind);
    open.push(ws);

    const sentAt = Date.now();
    expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
    await live.waitFor((e) => e.type === "segment.changed", 1, 5_000);
    expect(Date.now() - sentAt).toBeLessThan(3_000);

    // What the object has read for the client that does not read: what the pipes between
    // it and the client buffer (a few pages), not 50,000 events.
    await runInDurableObject(stub, (instance) => {
      const subs = [...(instance as unknown as Inspectable).core.subscribers.sse];
      expect(subs).toHaveLength(2);
      const lagging = subs.find((s) => s.cursor !== null);
      expect(lagging?.cursor).toBeLessThanOrEqual(5_000);
      for (const sub of subs) expect(sub.controller.desiredSize ?? 0).toBeGreaterThanOrEqual(-2);
    });

    // Read now: every event once, in order, then the live one.
    const reader = new SseSubscriber(behind);
    open.push(reader);
    const all = await arrived(reader, BEHIND + 1);
    expect(all.slice(0, BEHIND).map((e) => e.id)).toEqual(
      Array.from({ length: BEHIND }, (_, i) => base + i + 1),
    );
    expect(all[BEHIND]?.type).toBe("segment.changed");
    const overWs = await arrived(ws, BEHIND + 1);
    expect(overWs.map((e) => e.id)).toEqual(all.map((e) => e.id));
  }, 120_000);
});
