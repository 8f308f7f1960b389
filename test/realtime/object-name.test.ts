/**
 * Durable Objects that know their name after a restart (issue 42): an alarm that wakes an
 * object after a restart of the runtime reaches it by its hex id alone, without the name it
 * was created by (`ctx.id.name` undefined: workerd keeps only the id of a pending alarm,
 * cloudflare/workerd#6850). The realtime machine object keeps its machine with its state on
 * first contact and reads it back, so such an alarm still does its work (here: the held
 * write reaches D1).
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { realtimeObjectName } from "../../src/realtime/machine-stub";
import type { RealtimeMachine } from "../../src/realtime/realtime-machine";
import { plant, postSku, recentStartInShift } from "../fixtures/plant";
import { shardD1 } from "../harness";

const MIN = 60_000;

async function storedLogs(companyId: number, machineId: number) {
  const { results } = await (await shardD1(companyId))
    .prepare("SELECT sku_id FROM production_logs WHERE machine_id = ?1 ORDER BY start")
    .bind(machineId)
    .all<{ sku_id: string }>();
  return results.map((r) => r.sku_id);
}

describe("RealtimeMachine after a restart", () => {
  it("runs an alarm that reaches it without its name: the held write reaches D1", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const t0 = await recentStartInShift(p.co, m.id, 10 * MIN);
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    // The first write is flushed at once, the second held for the alarm.
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(MIN) })).status).toBe(204);
    expect(await storedLogs(p.co.id, m.id)).toEqual([p.a.id]);

    const ns = env.REALTIME_MACHINE;
    const named = ns.get(ns.idFromName(realtimeObjectName(p.co.id, m.id)));
    // The runtime restarts: the instance goes, its storage and its alarm stay.
    await runInDurableObject(named, (_instance, state) => {
      state.abort("restart");
    }).catch(() => undefined);
    // The alarm comes back by the id alone.
    const nameless = ns.get(ns.idFromString(named.id.toString()));
    expect(nameless.id.name).toBeUndefined();
    expect(await runDurableObjectAlarm(nameless)).toBe(true);
    expect(await storedLogs(p.co.id, m.id)).toEqual([p.a.id, p.b.id]);
    // The instance that woke nameless knows its machine all the same.
    await runInDurableObject(nameless, async (instance, state) => {
      expect(state.id.name).toBeUndefined();
      const snapshot = await (instance as RealtimeMachine).snapshot();
      expect(snapshot.ok).toBe(true);
    });
  });

  it("keeps the name of every object that needs one: a machine's stream ticks nameless too", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    // A write: its event reaches the machine's stream, which keeps its name (`m:<company>:
    // <machine>`, given with every append) and sets its alarm to recompute live figures.
    expect((await postSku(p.co, m.id, { skuId: p.a.id })).status).toBe(204);
    const ns = env.MACHINE_STREAM;
    const named = ns.get(ns.idFromName(`m:${p.co.id}:${m.id}`));
    const lastTick = (state: DurableObjectState) =>
      state.storage.sql
        .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'lastTick'")
        .toArray()[0]?.value ?? null;
    // Wait for the appended event (the publisher sends after answering).
    for (let i = 0; i < 50; i++) {
      const events = await runInDurableObject(named, (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM events").one(),
      );
      if (events.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = Number(await runInDurableObject(named, (_instance, state) => lastTick(state)));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await runInDurableObject(named, (_instance, state) => {
      state.abort("restart");
    }).catch(() => undefined);
    const nameless = ns.get(ns.idFromString(named.id.toString()));
    expect(await runDurableObjectAlarm(nameless)).toBe(true);
    await runInDurableObject(nameless, (_instance, state) => {
      expect(state.id.name).toBeUndefined();
      // The tick ran again: it needs the machine, read from the stored name.
      expect(Number(lastTick(state))).toBeGreaterThan(before);
    });
  });
});
