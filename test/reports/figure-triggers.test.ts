/**
 * The figure triggers on updates (migrations/0009_figure-triggers.sql, whose UPDATE
 * triggers 0013 split): an updated log, stop or classification forgets the kept figures
 * both its old and its new span overlap and counts the write for every machine it touched,
 * while an update whose old span lies inside the new one (the realtime flush growing a live
 * log's end) runs the old half not at all. The updates are plain SQL, as the realtime
 * object's flush writes them; any code path updating these tables gets the same.
 */
import { describe, expect, it } from "vitest";
import { scopeIn } from "../../src/db/company-scope";
import { keep, machineWriteCounts } from "../../src/reports/figure-cache";
import { zeroFigures } from "../../src/reports/kpi-figures";
import { IN_SERVICE_SINCE } from "../fixtures/machine-history";
import { plant as buildPlant } from "../fixtures/plant";
import { api, shardD1, shardDb } from "../harness";

const DAY = "2026-03-02";
const ms = (hhmm: string) => Date.parse(`${DAY}T${hhmm}:00Z`);

/**
 * A company with machines A and B, each with the three 8-hour instances of 2026-03-02 (UTC)
 * stored and their figures kept; `kept()` names the instances still kept ("A 08" is A's
 * 08:00-16:00 instance), `writes()` the machines' write counts.
 */
async function plant() {
  const { co, machines } = await buildPlant(2, {
    machineNames: ["A", "B"],
    inServiceSince: IN_SERVICE_SINCE,
    shifts: [
      { name: "Night", startTime: "00:00", endTime: "08:00" },
      { name: "Day", startTime: "08:00", endTime: "16:00" },
      { name: "Evening", startTime: "16:00", endTime: "00:00" },
    ],
    signals: [],
    catalog: false,
  });
  const [a, b] = machines;
  if (!a || !b) throw new Error("no machines");
  // The metrics report stores the instances it reports on.
  const res = await api(co.key, "/v1/reports/metrics", {
    method: "POST",
    json: { startDate: { between: { start: `${DAY}T00:00:00Z`, end: `${DAY}T23:59:00Z` } } },
  });
  expect(res.status).toBe(200);
  const d1 = await shardD1(co.id);
  const db = await shardDb(co.id);
  const names = new Map([
    [a.id, "A"],
    [b.id, "B"],
  ]);
  const { results: instances } = await d1
    .prepare(
      `SELECT id, machine_id AS machineId, start, "end" FROM shift_instances
       WHERE company_id = ? AND start >= ? AND start < ? ORDER BY machine_id, start`,
    )
    .bind(co.id, ms("00:00"), ms("00:00") + 86_400_000)
    .all<{ id: number; machineId: number; start: number; end: number }>();
  expect(instances).toHaveLength(6);
  const label = (machineId: number, start: number) =>
    `${names.get(machineId)} ${new Date(start).toISOString().slice(11, 13)}`;

  const writes = async () => {
    const counts = await machineWriteCounts(db, [a.id, b.id]);
    return { A: counts.get(a.id) ?? 0, B: counts.get(b.id) ?? 0 };
  };
  /** Keeps a figure for every instance (as a report would, with the counts read now). */
  const keepAll = async () => {
    const counts = await machineWriteCounts(db, [a.id, b.id]);
    await keep(
      scopeIn(db, co.id),
      instances.map((i) => ({
        instanceId: i.id,
        machineId: i.machineId,
        start: i.start,
        end: i.end,
        parts: [{ key: [null, null, null], figures: zeroFigures() }],
        writeCount: counts.get(i.machineId) ?? 0,
      })),
    );
    expect(await kept()).toHaveLength(6);
  };
  const kept = async () => {
    const { results } = await d1
      .prepare(
        "SELECT machine_id AS machineId, start FROM instance_figures WHERE company_id = ? ORDER BY machine_id, start",
      )
      .bind(co.id)
      .all<{ machineId: number; start: number }>();
    return results.map((r) => label(r.machineId, r.start));
  };
  const run = (sql: string, ...params: unknown[]) =>
    d1
      .prepare(sql)
      .bind(...params)
      .run();

  /** A production log of `machineId` over [from, to), written before the figures are kept. */
  const log = async (machineId: number, from: string, to: string) => {
    const id = crypto.randomUUID();
    await run(
      `INSERT INTO production_logs (id, company_id, machine_id, count, sensor_count, nominal_speed, start, "end")
       VALUES (?, ?, ?, 10, 10, 1, ?, ?)`,
      id,
      co.id,
      machineId,
      ms(from),
      ms(to),
    );
    return id;
  };
  /** A stop of `machineId` from `from`, open when `to` is null. */
  const stop = async (machineId: number, from: string, to: string | null) => {
    const row = await d1
      .prepare(
        `INSERT INTO stops (company_id, machine_id, start_time, end_time, is_programmed)
         VALUES (?, ?, ?, ?, 0) RETURNING id`,
      )
      .bind(co.id, machineId, ms(from), to === null ? null : ms(to))
      .first<{ id: number }>();
    if (!row) throw new Error("no stop");
    return row.id;
  };
  return { co, a, b, run, log, stop, keepAll, kept, writes };
}

const ALL = ["A 00", "A 08", "A 16", "B 00", "B 08", "B 16"];
const without = (...gone: string[]) => ALL.filter((k) => !gone.includes(k));

describe("figure triggers on updates", () => {
  it("a log whose end grows forgets what its new span overlaps and counts one write", async () => {
    const p = await plant();
    const id = await p.log(p.a.id, "09:00", "10:00");
    await p.keepAll();
    const before = await p.writes();
    await p.run(`UPDATE production_logs SET "end" = ? WHERE id = ?`, ms("17:00"), id);
    expect(await p.kept()).toEqual(without("A 08", "A 16"));
    // One count: the old span lies inside the new one, so its half does not run.
    expect(await p.writes()).toEqual({ A: before.A + 1, B: before.B });
    // A change that leaves the span as it is (the count of a live log) counts too.
    await p.keepAll();
    const again = await p.writes();
    await p.run("UPDATE production_logs SET count = 20 WHERE id = ?", id);
    expect(await p.kept()).toEqual(without("A 08", "A 16"));
    expect(await p.writes()).toEqual({ A: again.A + 1, B: again.B });
  });

  it("a log moved to another machine forgets the figures of both and counts both", async () => {
    const p = await plant();
    const id = await p.log(p.a.id, "09:00", "10:00");
    await p.keepAll();
    const before = await p.writes();
    await p.run("UPDATE production_logs SET machine_id = ? WHERE id = ?", p.b.id, id);
    expect(await p.kept()).toEqual(without("A 08", "B 08"));
    const after = await p.writes();
    expect(after.A).toBeGreaterThan(before.A);
    expect(after.B).toBeGreaterThan(before.B);
  });

  it("a log moved later, moved earlier or cut at either end forgets its old span's figures", async () => {
    const p = await plant();
    const id = await p.log(p.a.id, "09:00", "10:00");
    const move = async (from: string, to: string) => {
      await p.keepAll();
      const before = await p.writes();
      await p.run(
        `UPDATE production_logs SET start = ?, "end" = ? WHERE id = ?`,
        ms(from),
        ms(to),
        id,
      );
      expect((await p.writes()).A).toBeGreaterThan(before.A);
      return p.kept();
    };
    expect(await move("17:00", "18:00"), "later").toEqual(without("A 08", "A 16"));
    expect(await move("01:00", "02:00"), "earlier").toEqual(without("A 16", "A 00"));
    expect(await move("07:00", "09:00"), "grown").toEqual(without("A 00", "A 08"));
    expect(await move("07:00", "07:30"), "end cut").toEqual(without("A 00", "A 08"));
    await move("07:00", "09:00");
    expect(await move("08:30", "09:00"), "start cut").toEqual(without("A 00", "A 08"));
  });

  it("a stop closed, reopened, moved or extended forgets what either span overlaps", async () => {
    const p = await plant();
    const open = await p.stop(p.a.id, "09:00", null);
    const update = async (sql: string, ...params: unknown[]) => {
      await p.keepAll();
      const before = await p.writes();
      await p.run(sql, ...params);
      expect((await p.writes()).A).toBeGreaterThan(before.A);
      return p.kept();
    };
    // An open stop reaches to the end of time: closing it forgets what lies after its end.
    expect(
      await update("UPDATE stops SET end_time = ? WHERE id = ?", ms("10:00"), open),
      "closed",
    ).toEqual(without("A 08", "A 16"));
    expect(await update("UPDATE stops SET end_time = NULL WHERE id = ?", open), "reopened").toEqual(
      without("A 08", "A 16"),
    );
    const closed = await p.stop(p.a.id, "01:00", "02:00");
    expect(
      await update("UPDATE stops SET end_time = ? WHERE id = ?", ms("09:00"), closed),
      "extended",
    ).toEqual(without("A 00", "A 08"));
    expect(
      await update(
        "UPDATE stops SET start_time = ?, end_time = ? WHERE id = ?",
        ms("17:00"),
        ms("18:00"),
        closed,
      ),
      "moved later",
    ).toEqual(without("A 00", "A 08", "A 16"));
    await p.keepAll();
    const before = await p.writes();
    await p.run("UPDATE stops SET machine_id = ? WHERE id = ?", p.b.id, closed);
    expect(await p.kept(), "moved to B").toEqual(without("A 16", "B 16"));
    const after = await p.writes();
    expect(after.A).toBeGreaterThan(before.A);
    expect(after.B).toBeGreaterThan(before.B);
  });

  it("a classification moved to another stop forgets the figures of both stops", async () => {
    const p = await plant();
    const first = await p.stop(p.a.id, "09:00", "10:00");
    const second = await p.stop(p.b.id, "17:00", "18:00");
    const row = await (await shardD1(p.co.id))
      .prepare(
        "INSERT INTO stop_classifications (company_id, stop_id, description) VALUES (?, ?, 'Jam') RETURNING id",
      )
      .bind(p.co.id, first)
      .first<{ id: number }>();
    if (!row) throw new Error("no classification");
    await p.keepAll();
    const before = await p.writes();
    await p.run("UPDATE stop_classifications SET description = 'Belt' WHERE id = ?", row.id);
    expect(await p.kept(), "described").toEqual(without("A 08"));
    expect(await p.writes()).toEqual({ A: before.A + 1, B: before.B });
    await p.keepAll();
    const again = await p.writes();
    await p.run("UPDATE stop_classifications SET stop_id = ? WHERE id = ?", second, row.id);
    expect(await p.kept(), "moved").toEqual(without("A 08", "B 16"));
    const after = await p.writes();
    expect(after.A).toBeGreaterThan(again.A);
    expect(after.B).toBeGreaterThan(again.B);
  });
});
