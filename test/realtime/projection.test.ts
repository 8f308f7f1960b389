/**
 * The live-log upsert of the realtime objects (`upsertLiveLogs`): one statement per
 * 500 logs, each log's `sensorCount` summed from the machine's `count` samples in
 * `[start, end)` by the machine's signal store (`sumCountSignal`: hour rollups and raw
 * edges), checked against a sum over the raw samples computed here.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  IDS_PER_COUNT_READ,
  type LiveLog,
  LOGS_PER_STATEMENT,
  readLogCounts,
  upsertLiveLogs,
} from "../../src/realtime/projection";
import { sumCountSignal } from "../../src/resources/signals/count-sums";
import { getState, plant } from "../fixtures/plant";
import { ingest, shardD1 } from "../harness";

const S = 1_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;

/** A live log (nominal speed 15, counting factor 12) with no operator or work order, a new id. */
function liveLog(
  skuId: string,
  shiftInstanceId: number,
  window: { start: number; end: number },
  now = Date.now(),
): Omit<LiveLog, "sensorCount"> {
  return {
    id: crypto.randomUUID(),
    skuId,
    shiftInstanceId,
    operatorId: null,
    simpleWorkOrderId: null,
    nominalSpeed: 15,
    countingFactor: 12,
    ...window,
    live: true,
    now,
  };
}

/** The logs with their `sensorCount` from the machine's signal store, as the realtime object does. */
async function counted(
  owner: { companyId: number; machineId: number },
  logs: readonly Omit<LiveLog, "sensorCount">[],
): Promise<LiveLog[]> {
  const sums = await sumCountSignal(env, owner, logs);
  return logs.map((log, i) => ({ ...log, sensorCount: sums[i] ?? Number.NaN }));
}

describe("upsertLiveLogs", () => {
  it("counts each window exactly, across rollups and raw edges, 500 logs per statement", async () => {
    const p = await plant();
    const db = await shardD1(p.co.id);
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    // The running instance exists once the realtime GET has been asked (logs refer to it).
    const instanceId = (await getState(p.co, m.id)).shift.id;

    // Pulses every 7 s over 3 h 40 min from an odd instant, values 1..5.
    const t0 = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR - 37 * MIN + 13 * S;
    const samples: [number, number][] = [];
    for (let t = t0, i = 0; t < t0 + 3 * HOUR + 40 * MIN; t += 7 * S, i += 1) {
      samples.push([t, (i % 5) + 1]);
    }
    await ingest(p.countSignals[0] ?? "", samples);
    const rawSum = (from: number, to: number) =>
      samples.filter(([t]) => t >= from && t < to).reduce((sum, [, v]) => sum + v, 0);

    const hour = Math.ceil(t0 / HOUR) * HOUR;
    const windows: [number, number][] = [
      [t0 - 1, t0 + 3 * HOUR + 40 * MIN], // everything: raw, minutes, hours, minutes, raw
      [hour, hour + 2 * HOUR], // whole hours only
      [hour + 10 * MIN, hour + 12 * MIN], // whole minutes only
      [hour + 10 * MIN + 3 * S, hour + 10 * MIN + 40 * S], // inside one minute: raw only
      [hour - 2 * MIN - 500, hour + HOUR + 90 * S], // minute and raw edges around an hour
      [t0 - 2 * HOUR, t0 - HOUR], // before any sample: 0
    ];
    // 501 logs: two statements, the second with one log.
    const owner = { companyId: p.co.id, machineId: m.id };
    const logs = await counted(
      owner,
      Array.from({ length: LOGS_PER_STATEMENT + 1 }, (_, i) => {
        const [start, end] = windows[i % windows.length] ?? [0, 1];
        return liveLog(p.a.id, instanceId, { start, end });
      }),
    );
    const statements = upsertLiveLogs(db, owner, logs);
    expect(statements).toHaveLength(2);
    const results = await db.batch<{ id: string; sensor_count: number; count: number }>(statements);
    const returned = new Map(results.flatMap((r) => r.results).map((row) => [row.id, row]));
    expect(returned.size).toBe(logs.length);
    for (const log of logs) {
      const expected = rawSum(log.start, log.end);
      expect(returned.get(log.id)).toEqual({
        id: log.id,
        sensor_count: expected,
        count: expected * 12,
      });
    }
    expect(rawSum(t0 - 2 * HOUR, t0 - HOUR)).toBe(0);
    expect(rawSum(hour + 10 * MIN + 3 * S, hour + 10 * MIN + 40 * S)).toBeGreaterThan(0);

    // The stored rows keep the column types the other views read, and an upsert of the
    // same ids closes them in place (created_at kept, end and counts rewritten).
    const first = logs[0] as LiveLog;
    const [closed] = upsertLiveLogs(
      db,
      owner,
      await counted(owner, [{ ...first, end: hour, live: false, now: first.now + 5_000 }]),
    );
    if (!closed) throw new Error("no statement");
    await closed.run();
    const row = await db
      .prepare(
        `SELECT live, "end", sensor_count, count, created_at, updated_at, typeof(nominal_speed) AS ns,
         typeof(counting_factor) AS cf, typeof(start) AS st, typeof(shift_instance_id) AS si,
         is_automated, type
       FROM production_logs WHERE id = ?`,
      )
      .bind(first.id)
      .first();
    expect(row).toEqual({
      live: 0,
      end: hour,
      sensor_count: rawSum(first.start, hour),
      count: rawSum(first.start, hour) * 12,
      created_at: first.now,
      updated_at: first.now + 5_000,
      ns: "real",
      cf: "real",
      st: "integer",
      si: "integer",
      is_automated: 1,
      type: "total",
    });
    const stored = await db
      .prepare("SELECT COUNT(*) AS n FROM production_logs WHERE company_id = ? AND machine_id = ?")
      .bind(p.co.id, m.id)
      .first<{ n: number }>();
    expect(stored?.n).toBe(logs.length);
  });

  it("leaves a log that would not change as it is, updated_at included", async () => {
    const p = await plant();
    const db = await shardD1(p.co.id);
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const instanceId = (await getState(p.co, m.id)).shift.id;
    const t0 = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
    const signal = p.countSignals[0] ?? "";
    await ingest(signal, [
      [t0 + S, 2],
      [t0 + 5 * MIN, 3],
    ]);
    const now = Date.now();
    const log = (start: number, end: number) => liveLog(p.a.id, instanceId, { start, end }, now);
    const logs = [log(t0, t0 + MIN), log(t0 + MIN, t0 + 9 * MIN)];
    const owner = { companyId: p.co.id, machineId: m.id };
    const upsert = async (batch: Omit<LiveLog, "sensorCount">[]) =>
      (
        await db.batch<{ id: string; sensor_count: number }>(
          upsertLiveLogs(db, owner, await counted(owner, batch)),
        )
      )
        .flatMap((r) => r.results)
        .map((row) => [row.id, row.sensor_count]);
    const updatedAt = async () =>
      (
        await db
          .prepare("SELECT updated_at FROM production_logs WHERE id IN (?, ?) ORDER BY start")
          .bind(logs[0]?.id, logs[1]?.id)
          .all<{ updated_at: number }>()
      ).results.map((r) => r.updated_at);

    expect(await upsert(logs)).toEqual([
      [logs[0]?.id, 2],
      [logs[1]?.id, 3],
    ]);
    // The same logs a minute later, no new sample: nothing written, nothing returned.
    const later = logs.map((l) => ({ ...l, now: now + MIN }));
    expect(await upsert(later)).toEqual([]);
    expect(await updatedAt()).toEqual([now, now]);
    const [readStatement, ...more] = readLogCounts(db, p.co.id, [
      logs[0]?.id ?? "",
      logs[1]?.id ?? "",
    ]);
    expect(more).toEqual([]);
    const read = await readStatement?.all<{ id: string; sensor_count: number; count: number }>();
    expect(new Map(read?.results.map((r) => [r.id, [r.sensor_count, r.count]]))).toEqual(
      new Map([
        [logs[0]?.id, [2, 24]],
        [logs[1]?.id, [3, 36]],
      ]),
    );

    // A late sample inside the second log: only that one changes.
    await ingest(signal, [[t0 + 7 * MIN, 4]]);
    expect(await upsert(later)).toEqual([[logs[1]?.id, 7]]);
    expect(await updatedAt()).toEqual([now, now + MIN]);
  });

  it("writes only the realtime object's columns, and never a deleted row", async () => {
    const p = await plant();
    const db = await shardD1(p.co.id);
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const instanceId = (await getState(p.co, m.id)).shift.id;
    const owner = { companyId: p.co.id, machineId: m.id };
    const t0 = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
    const [kept, deleted] = [
      liveLog(p.a.id, instanceId, { start: t0, end: t0 + MIN }),
      liveLog(p.a.id, instanceId, { start: t0 + MIN, end: t0 + 2 * MIN }),
    ] as [Omit<LiveLog, "sensorCount">, Omit<LiveLog, "sensorCount">];
    await db.batch(upsertLiveLogs(db, owner, await counted(owner, [kept, deleted])));
    // A reviewer's fields on one, a deletion (legacy data: the API refuses it now) on the other.
    await db
      .prepare("UPDATE production_logs SET is_reviewed = 1, work_order_id = 'wo' WHERE id = ?")
      .bind(kept.id)
      .run();
    await db
      .prepare("UPDATE production_logs SET deleted_at = 1 WHERE id = ?")
      .bind(deleted.id)
      .run();
    const later = [kept, deleted].map((l) => ({ ...l, end: l.end + MIN, now: l.now + MIN }));
    const results = await db.batch<{ id: string }>([
      ...upsertLiveLogs(db, owner, await counted(owner, later)),
      ...readLogCounts(db, p.co.id, [kept.id, deleted.id]),
    ]);
    // Neither returned nor read back: nothing counts the deleted log again.
    expect(results.map((r) => r.results.map((row) => row.id))).toEqual([[kept.id], [kept.id]]);
    const rows = await db
      .prepare(
        `SELECT id, "end", is_reviewed, work_order_id, deleted_at FROM production_logs
         WHERE id IN (?, ?) ORDER BY start`,
      )
      .bind(kept.id, deleted.id)
      .all();
    expect(rows.results).toEqual([
      { id: kept.id, end: kept.end + MIN, is_reviewed: 1, work_order_id: "wo", deleted_at: null },
      { id: deleted.id, end: deleted.end, is_reviewed: 0, work_order_id: null, deleted_at: 1 },
    ]);
  });

  it("makes no statement for no logs", () => {
    expect(upsertLiveLogs(env.DB, { companyId: 1, machineId: 1 }, [])).toEqual([]);
    expect(readLogCounts(env.DB, 1, [])).toEqual([]);
    // A long timeline's ids are read in several statements, each parameter under 2 MB.
    const ids = Array.from({ length: IDS_PER_COUNT_READ + 1 }, () => crypto.randomUUID());
    expect(readLogCounts(env.DB, 1, ids)).toHaveLength(2);
  });
});
