/**
 * The kept figures of closed instances (src/reports/figure-cache.ts): kept after a KPI
 * call, and the KPI row still equal to the (never cached) metrics row after every kind of
 * edit of a log, a stop or a classification, whichever API writes it.
 */
import { describe, expect, it } from "vitest";
import { scopeIn } from "../../src/db/company-scope";
import { keep, machineWriteCounts, readKept } from "../../src/reports/figure-cache";
import { FIGURE_FIELDS, zeroFigures } from "../../src/reports/kpi-figures";
import type { Api } from "../fixtures/api-types";
import {
  api,
  createCompany,
  createMachines,
  operator,
  operatorJson,
  shardD1,
  shardDb,
} from "../harness";

/** A distinct value per figure, so that a field read back in the wrong place shows. */
const FIELD_VALUES = Object.fromEntries(FIGURE_FIELDS.map((f, i) => [f, i + 1]));

const at = (hhmm: string) => `2026-03-02T${hhmm}:00+01:00`;
const MORNING = { startDate: { equal: "2026-03-02T05:00:00Z" } };

async function post<T>(key: string, path: string, body: unknown): Promise<T> {
  const res = await api(key, path, { method: "POST", json: body });
  if (res.status !== 200 && res.status !== 201) {
    throw new Error(`${path} -> ${res.status}: ${await res.text()}`);
  }
  return (await res.json()) as T;
}

async function kept(companyId: number): Promise<number> {
  const row = await (await shardD1(companyId))
    .prepare("SELECT count(*) AS n FROM instance_figures WHERE company_id = ?")
    .bind(companyId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("kept figures of closed shift instances", () => {
  it("are kept once computed and stay exact after every kind of edit", async () => {
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [m] = await createMachines(co.id, [{ name: "Capper" }]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
    ]);
    const [sku] = await post<{ id: string }[]>(co.key, "/v1/skus", [{ sku: "K-1" }]);
    const log = (from: string, to: string, count: number) => ({
      machine: { id: m?.id },
      sku: { id: sku?.id },
      start: at(from),
      end: at(to),
      count,
      nominalSpeed: 10,
    });
    const [first] = await post<{ id: string }[]>(co.key, "/v1/production-logs", [
      log("06:00", "10:00", 2000),
    ]);

    /** The KPI row of the instance, checked against the metrics row computed from the records. */
    const check = async (): Promise<Api["KpiReportRow"]> => {
      const { kpis } = await post<Api["KpiReportPage"]>(co.key, "/v1/reports/kpis", MORNING);
      const { metrics } = await post<Api["MetricsReportPage"]>(
        co.key,
        "/v1/reports/metrics",
        MORNING,
      );
      const k = kpis[0];
      const row = metrics[0];
      if (!k || !row) throw new Error("no row");
      for (const f of [
        "availableTime",
        "programmedDowntime",
        "nonProgrammedDowntime",
        "noDataTime",
        "earlyStopTime",
        "annotatedDowntime",
      ] as const) {
        expect(k.minutes[f], f).toBeCloseTo(row.shiftIndicators[f], 9);
      }
      for (const f of ["availability", "effectiveness", "quality", "oee"] as const) {
        expect(k[f], f).toBeCloseTo(row.productionMetrics[f] ?? Number.NaN, 9);
      }
      return k;
    };

    const initial = await check();
    expect(await kept(co.id)).toBe(1);
    expect(await check()).toEqual(initial);

    // Each edit changes the row (so a kept row left in place would be caught by check()).
    let previous = [initial.availability, initial.effectiveness, initial.minutes.annotatedDowntime];
    const changed = async (what: string) => {
      const k = await check();
      const now = [k.availability, k.effectiveness, k.minutes.annotatedDowntime];
      expect(now, what).not.toEqual(previous);
      previous = now;
    };
    await post(co.key, "/v1/production-logs", [log("10:00", "12:00", 900)]);
    await changed("a log created");
    const patch = await api(co.key, `/v1/production-logs/${first?.id}`, {
      method: "PATCH",
      json: { count: 1500 },
    });
    expect(patch.status).toBe(204);
    await changed("a log changed");
    const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${m?.id}/stops`, [
      { startTime: at("07:00"), endTime: at("07:30"), isProgrammed: false },
    ]);
    await changed("a stop created");
    const stopPatch = await operator("PATCH", `/stops/${stop?.id}`, { endTime: at("07:45") });
    expect(stopPatch.status).toBeLessThan(300);
    await changed("a stop changed");
    await operatorJson("PUT", `/stops/${stop?.id}/classification`, {
      generalCause: { name: "Jam" },
    });
    await changed("a stop classified");
    expect((await operator("DELETE", `/stops/${stop?.id}/classification`)).status).toBe(204);
    await changed("a classification deleted");
    expect((await operator("DELETE", `/stops/${stop?.id}`)).status).toBe(204);
    await changed("a stop deleted");
    const del = await api(co.key, `/v1/production-logs/${first?.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    await changed("a log deleted");
    expect(await kept(co.id)).toBe(1);
  });

  it("are not kept when the machine was written after its records were read", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Racer" }]);
    const db = await shardDb(co.id);
    const machineId = m?.id ?? 0;
    const [shift] = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/shifts`, [
      { name: "All", startTime: "00:00", endTime: "00:00" },
    ]);
    expect(shift).toBeDefined();
    await post(co.key, "/v1/reports/metrics", { startDate: { equal: "2026-03-02T23:00:00Z" } });
    const instance = await (await shardD1(co.id))
      .prepare(
        'SELECT id, start, "end" FROM shift_instances WHERE machine_id = ? ORDER BY start LIMIT 1',
      )
      .bind(machineId)
      .first<{ id: number; start: number; end: number }>();
    if (!instance) throw new Error("no instance");
    const before = (await machineWriteCounts(db, [machineId])).get(machineId) ?? 0;
    // A stop written on another day (outside the instance) still counts as a write.
    await operatorJson("POST", `/machines/${machineId}/stops`, [
      { startTime: "2025-01-01T00:00:00Z", endTime: "2025-01-01T00:10:00Z", isProgrammed: false },
    ]);
    const item = {
      instanceId: instance.id,
      machineId,
      start: instance.start,
      end: instance.end,
      parts: [
        { key: [null, null, null] as [null, null, null], figures: zeroFigures() },
        {
          key: ["00000000-0000-4000-8000-000000000001", 7, null] as [string, number, null],
          figures: { ...zeroFigures(), ...FIELD_VALUES },
        },
      ],
    };
    await keep(scopeIn(db, co.id), [{ ...item, writeCount: before }]);
    expect(
      (await readKept(scopeIn(db, co.id), [machineId], instance.start, instance.end)).size,
    ).toBe(0);
    await keep(scopeIn(db, co.id), [{ ...item, writeCount: before + 1 }]);
    const read = await readKept(scopeIn(db, co.id), [machineId], instance.start, instance.end);
    expect(read.size).toBe(1);
    expect(read.get(instance.id)).toEqual(item.parts);
    const whole = await readKept(
      scopeIn(db, co.id),
      [machineId],
      instance.start,
      instance.end,
      true,
    );
    expect(whole.get(instance.id)).toEqual([
      { key: [null, null, null], figures: { ...zeroFigures(), ...FIELD_VALUES } },
    ]);
  });
});
