/**
 * The per-machine Durable Object: ordering and no loss under concurrent writes,
 * the shift rollover by alarm, a write arriving after the end, and state kept
 * in storage (a new object instance over the same storage sees it).
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MAX_HELD_WRITES } from "../../src/realtime/machine-lifecycle";
import { realtimeObjectName } from "../../src/realtime/machine-stub";
import { RealtimeMachine } from "../../src/realtime/realtime-machine";
import { api as directApi } from "../fixtures/direct-client";
import {
  getState,
  machineLogs,
  plant,
  postOperator,
  postSku,
  recentStartInShift,
} from "../fixtures/plant";
import { api, shardD1 } from "../harness";

const MIN = 60_000;

function stubOf(companyId: number, machineId: number) {
  const ns = env.REALTIME_MACHINE;
  return ns.get(ns.idFromName(realtimeObjectName(companyId, machineId)));
}

afterEach(() => {
  vi.useRealTimers();
});

describe("RealtimeMachine: ordering and no loss", () => {
  it("applies 100 concurrent writes with distinct starts: 100 segments, 100 live logs", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    // One second apart, all in the past (a segment that has not begun has no log yet).
    const t0 = await recentStartInShift(p.co, m.id, 120_000);
    const order = Array.from({ length: 100 }, (_, i) => i).sort(
      (x, y) => ((x * 7919) % 101) - ((y * 7919) % 101),
    );
    const answers = await Promise.all(
      order.map((i) =>
        postSku(p.co, m.id, {
          skuId: i % 2 === 0 ? p.a.id : p.b.id,
          quantity: i,
          start: new Date(t0 + i * 1000).toISOString(),
        }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 204));

    const state = await getState(p.co, m.id);
    expect(state.revision).toBe(100);
    expect(state.production.segments.map((s) => s.quantity)).toEqual(
      Array.from({ length: 100 }, (_, i) => i),
    );
    const logs = await machineLogs(p.co, m.id);
    expect(logs).toHaveLength(100);
    expect(logs.every((l) => l.live && l.isAutomated)).toBe(true);
    // Contiguous: each log ends where the next begins.
    for (let i = 0; i + 1 < logs.length; i += 1) expect(logs[i]?.end).toBe(logs[i + 1]?.start);
    expect(logs.map((l) => l.sku?.id)).toEqual(
      Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? p.a.id : p.b.id)),
    );
  });

  it("applies 100 concurrent writes at 'now' one at a time, in arrival order, none lost", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => postSku(p.co, m.id, { skuId: p.a.id, quantity: i })),
    );
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 204));
    const state = await getState(p.co, m.id);
    // Every write was applied (counted), even those that landed in the same millisecond
    // as the next one (the later replaces the earlier at the same start).
    expect(state.revision).toBe(100);
    const starts = state.production.segments.map((s) => Date.parse(s.start));
    expect([...starts].sort((x, y) => x - y)).toEqual(starts);
    expect(new Set(starts).size).toBe(starts.length);
    const logs = await machineLogs(p.co, m.id);
    expect(logs.map((l) => l.id)).toEqual(
      state.production.segments
        .filter((s) => Date.parse(s.start) < Date.now())
        .map((s) => s.productionLogId),
    );

    // One more write after the burst: it is the current one.
    expect((await postSku(p.co, m.id, { skuId: p.b.id, quantity: 1000 })).status).toBe(204);
    const after = await getState(p.co, m.id);
    expect(after.revision).toBe(101);
    expect(after.current).toMatchObject({ quantity: 1000, sku: { id: p.b.id } });
  });

  it("keeps machines apart: concurrent writes to 10 machines each land on their own", async () => {
    const p = await plant(10);
    const answers = await Promise.all(
      p.machines.flatMap((m, i) =>
        Array.from({ length: 5 }, (_, j) =>
          postSku(p.co, m.id, { skuId: p.a.id, quantity: i * 100 + j }),
        ),
      ),
    );
    expect(answers.every((r) => r.status === 204)).toBe(true);
    for (const [i, m] of p.machines.entries()) {
      const state = await getState(p.co, m.id);
      expect(state.revision).toBe(5);
      const q = state.current?.quantity ?? -1;
      expect(Math.floor(q / 100)).toBe(i);
    }
  }, 30_000);
});

describe("RealtimeMachine: shift rollover", () => {
  it("closes the live logs at the instance end by alarm and moves to the next instance", async () => {
    const p = await plant();
    const [m] = p.machines;
    const [ada] = p.operators;
    if (!m || !ada) throw new Error("no plant");
    const first = await getState(p.co, m.id);
    const end = Date.parse(first.shift.end);
    const t0 = Math.max(Date.parse(first.shift.start), Date.now() - 10 * MIN);
    expect(
      (
        await postSku(p.co, m.id, {
          skuId: p.a.id,
          simpleWorkOrderName: "WO-night",
          quantity: 42,
          start: new Date(t0).toISOString(),
        })
      ).status,
    ).toBe(204);
    expect(
      (await postOperator(p.co, m.id, { operatorId: ada.id, start: new Date(t0).toISOString() }))
        .status,
    ).toBe(204);
    expect((await machineLogs(p.co, m.id)).map((l) => l.live)).toEqual([true]);

    // The clock reaches the end of the instance; the alarm runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(end + 5_000);
    expect(await runDurableObjectAlarm(stubOf(p.co.id, m.id))).toBe(true);

    const logs = await machineLogs(p.co, m.id);
    const closed = logs.filter((l) => l.shift?.id === first.shift.id);
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      live: false,
      isAutomated: true,
      start: new Date(t0).toISOString(),
      end: first.shift.end,
      operator: { id: ada.id },
    });

    // The next instance: the SKU carries over from its start, the crew does not.
    const second = await getState(p.co, m.id);
    expect(second.shift.id).not.toBe(first.shift.id);
    expect(second.shift.start).toBe(first.shift.end);
    expect(second.revision).toBe(0);
    expect(second.operators).toEqual([]);
    expect(second.current).toMatchObject({
      sku: { id: p.a.id },
      simpleWorkOrder: { name: "WO-night" },
      quantity: 42,
      start: first.shift.end,
    });
    const carried = logs.filter((l) => l.shift?.id === second.shift.id);
    expect(carried.map((l) => [l.live, l.start])).toEqual([[true, first.shift.end]]);
  });

  it("puts a write that arrives after the end (before the alarm) in the new instance", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const first = await getState(p.co, m.id);
    expect((await postSku(p.co, m.id, { skuId: p.a.id })).status).toBe(204);
    const end = Date.parse(first.shift.end);

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(end + 60_000);
    // A start in the old instance is now outside the running one.
    const late = await postSku(p.co, m.id, {
      skuId: p.b.id,
      start: new Date(end - MIN).toISOString(),
    });
    expect(late.status).toBe(422);
    expect((await postSku(p.co, m.id, { skuId: p.b.id, quantity: 9 })).status).toBe(204);

    const second = await getState(p.co, m.id);
    expect(second.shift.start).toBe(first.shift.end);
    expect(second.current).toMatchObject({ sku: { id: p.b.id }, quantity: 9 });
    const logs = await machineLogs(p.co, m.id);
    const old = logs.filter((l) => l.shift?.id === first.shift.id);
    expect(old.map((l) => [l.live, l.end])).toEqual([[false, first.shift.end]]);
    expect(logs.filter((l) => l.shift?.id === second.shift.id).every((l) => l.live)).toBe(true);
  });
});

/** Machines of the company marked in `realtime_pending` (writes maybe not in D1 yet). */
async function pendingMachines(companyId: number): Promise<number[]> {
  const rows = await (await shardD1(companyId))
    .prepare("SELECT machine_id FROM realtime_pending WHERE company_id = ? ORDER BY machine_id")
    .bind(companyId)
    .raw<[number]>();
  return rows.map(([id]) => id);
}

/** Live logs of a machine as D1 holds them, read directly (no read barrier). */
async function storedLogs(companyId: number, machineId: number) {
  const { results } = await (await shardD1(companyId))
    .prepare(
      "SELECT id, sku_id, start, live FROM production_logs WHERE company_id = ? AND machine_id = ? ORDER BY start",
    )
    .bind(companyId, machineId)
    .all<{ id: string; sku_id: string; start: number; live: number }>();
  return results;
}

describe("RealtimeMachine: write-behind and the read barrier", () => {
  it("shows writes held by the object in production logs and the metrics report at once", async () => {
    const p = await plant(2);
    const [m, other] = p.machines;
    if (!m || !other) throw new Error("no machines");
    const t0 = await recentStartInShift(p.co, m.id, 10 * MIN);
    const at = (ms: number) => new Date(t0 + ms).toISOString();

    // The first write after a quiet spell reaches D1 with the machine's mark.
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    expect(await pendingMachines(p.co.id)).toEqual([m.id]);
    expect((await storedLogs(p.co.id, m.id)).map((l) => l.sku_id)).toEqual([p.a.id]);

    // The next ones stay in the object for now (write-behind)...
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(MIN) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(2 * MIN) })).status).toBe(204);
    expect((await storedLogs(p.co.id, m.id)).map((l) => l.sku_id)).toEqual([p.a.id]);

    // ...and every reader of production logs sees them. The metrics report first:
    const report = await api(p.co.key, "/v1/reports/metrics", {
      method: "POST",
      json: { machines: { include: [m.id] }, limit: 100 },
    });
    expect(report.status).toBe(200);
    expect((await storedLogs(p.co.id, m.id)).map((l) => l.sku_id)).toEqual([
      p.a.id,
      p.b.id,
      p.a.id,
    ]);
    // The production-log filters:
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(3 * MIN) })).status).toBe(204);
    expect(await storedLogs(p.co.id, m.id)).toHaveLength(3);
    const logs = await machineLogs(p.co, m.id);
    expect(logs.map((l) => [l.sku?.id, l.start, l.live])).toEqual([
      [p.a.id, at(0), true],
      [p.b.id, at(MIN), true],
      [p.a.id, at(2 * MIN), true],
      [p.b.id, at(3 * MIN), true],
    ]);
    // GET by id, for the id the realtime GET gives (a write held until then):
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(4 * MIN) })).status).toBe(204);
    const newest = await runInDurableObject(stubOf(p.co.id, m.id), (_instance, state) =>
      state.storage.sql
        .exec<{ log_id: string }>("SELECT log_id FROM segments ORDER BY start DESC LIMIT 1")
        .one(),
    );
    expect(await storedLogs(p.co.id, m.id)).toHaveLength(4);
    const byId = await api(p.co.key, `/v1/production-logs/${newest.log_id}`);
    expect(byId.status).toBe(200);
    expect((await byId.json()) as { sku: { id: string } }).toMatchObject({ sku: { id: p.a.id } });
    expect(await pendingMachines(p.co.id)).toEqual([m.id]);
    // The other machine, never written, was neither marked nor asked.
    expect(await storedLogs(p.co.id, other.id)).toEqual([]);
  });

  it("holds at most MAX_HELD_WRITES writes: the next one flushes them itself", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const t0 = await recentStartInShift(p.co, m.id, 100 * MIN);
    const at = (i: number) => new Date(t0 + i * 1_000).toISOString();
    // The first write is flushed with the mark; the next MAX_HELD_WRITES - 1 are held.
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    // No alarm may flush them meanwhile, however slow the writes: the clock stands still
    // (so the object's alarm stays "set") and the alarm itself is removed.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now());
    await runInDurableObject(stubOf(p.co.id, m.id), (_instance, state) =>
      state.storage.deleteAlarm(),
    );
    // Through the handler directly: hundreds of calls through exports.default.fetch slow down
    // (test/fixtures/direct-client.ts).
    for (let i = 1; i < MAX_HELD_WRITES; i++) {
      const res = await directApi(p.co.key, `/v1/realtime/${m.id}/sku`, {
        method: "POST",
        json: { skuId: p.a.id, start: at(i) },
      });
      expect(res.status).toBe(204);
    }
    expect(await storedLogs(p.co.id, m.id)).toHaveLength(1);
    // The next one flushes every held write with its own, before it returns.
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(MAX_HELD_WRITES) })).status).toBe(
      204,
    );
    const stored = await storedLogs(p.co.id, m.id);
    expect(stored).toHaveLength(MAX_HELD_WRITES + 1);
    expect(stored.at(-1)?.sku_id).toBe(p.b.id);
  });

  it("pushes held writes by alarm, then removes the mark once the object was quiet", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const t0 = await recentStartInShift(p.co, m.id, 10 * MIN);
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(MIN) })).status).toBe(204);
    expect(await storedLogs(p.co.id, m.id)).toHaveLength(1);

    const stub = stubOf(p.co.id, m.id);
    // First alarm: the held write reaches D1; the mark stays (writes may follow).
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await storedLogs(p.co.id, m.id)).map((l) => l.sku_id)).toEqual([p.a.id, p.b.id]);
    expect(await pendingMachines(p.co.id)).toEqual([m.id]);
    // Next alarm with no write in between: nothing is held, the mark goes.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await pendingMachines(p.co.id)).toEqual([]);
    // A later write marks the machine again, in the same batch as its log.
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(2 * MIN) })).status).toBe(204);
    expect(await pendingMachines(p.co.id)).toEqual([m.id]);
    expect(await storedLogs(p.co.id, m.id)).toHaveLength(3);
  });
});

describe("RealtimeMachine: storage", () => {
  it("keeps its state in SQLite: a new object instance over the same storage sees it", async () => {
    const p = await plant();
    const [m] = p.machines;
    const [ada] = p.operators;
    if (!m || !ada) throw new Error("no plant");
    const start = new Date(Date.now() - MIN).toISOString();
    expect((await postSku(p.co, m.id, { skuId: p.b.id, quantity: 3, start })).status).toBe(204);
    expect((await postOperator(p.co, m.id, { operatorId: ada.id, start })).status).toBe(204);

    const snapshot = await runInDurableObject(stubOf(p.co.id, m.id), async (_instance, state) => {
      const fresh = new RealtimeMachine(state, env);
      return fresh.snapshot();
    });
    if (!snapshot.ok) throw new Error("not running");
    expect(snapshot.revision).toBe(2);
    expect(snapshot.current).toMatchObject({ sku: { id: p.b.id }, quantity: 3 });
    expect(snapshot.operators.map((o) => o.operatorId)).toEqual([ada.id]);
  });

  it("keeps in memory exactly what it stores: replaced, inserted and moved entries", async () => {
    const p = await plant();
    const [m] = p.machines;
    const [ada, bob] = p.operators;
    if (!m || !ada || !bob) throw new Error("no plant");
    // Seconds after a start inside the shift, all in the past.
    const t0 = await recentStartInShift(p.co, m.id, 100_000);
    const at = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
    const writes = [
      () => postSku(p.co, m.id, { skuId: p.a.id, quantity: 1, start: at(0) }),
      // Every segment ends in the past, so both snapshots end their logs at the same instants.
      () => postSku(p.co, m.id, { skuId: p.b.id, quantity: 2, start: at(20), end: at(30) }),
      // Before the last one: inserted in the middle of the timeline.
      () => postSku(p.co, m.id, { skuId: p.a.id, quantity: 3, start: at(10) }),
      // Same start as the first: replaces it in place.
      () => postSku(p.co, m.id, { skuId: p.b.id, quantity: 4, start: at(0), end: at(5) }),
      () => postOperator(p.co, m.id, { operatorId: ada.id, start: at(0) }),
      () => postOperator(p.co, m.id, { operatorId: bob.id, start: at(15) }),
      // Assigned again: Ada's start moves after Bob's.
      () => postOperator(p.co, m.id, { operatorId: ada.id, start: at(25) }),
    ];
    for (const write of writes) expect((await write()).status).toBe(204);

    const { live, stored } = await runInDurableObject(
      stubOf(p.co.id, m.id),
      async (instance, state) => {
        const fromMemory = await (instance as RealtimeMachine).snapshot();
        const fromStorage = await new RealtimeMachine(state, env).snapshot();
        return { live: fromMemory, stored: fromStorage };
      },
    );
    if (!live.ok || !stored.ok) throw new Error("not running");
    expect(live.segments.map((s) => [s.quantity, s.sku.id])).toEqual([
      [4, p.b.id],
      [3, p.a.id],
      [2, p.b.id],
    ]);
    expect(live.operators.map((o) => o.operatorId)).toEqual([bob.id, ada.id]);
    expect(live.revision).toBe(writes.length);
    expect({ ...live, at: 0 }).toEqual({ ...stored, at: 0 });
  });
});
