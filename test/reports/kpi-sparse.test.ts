/**
 * The KPI report over a long window where most shift instances have no record: those are
 * added as empty instances by arithmetic, without being stored, and their local days by
 * calendar arithmetic away from zone changes (src/reports/kpi-report.ts). Checked as a user
 * would: against the metrics report's rows of the same window aggregated by their times,
 * across both DST changes of Europe/Rome (a shift cut by the spring gap, one lengthened by
 * the autumn repeat), with the calendar time of each group's local days.
 */
import { TZDate } from "@date-fns/tz";
import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import {
  allKpis,
  allMetrics,
  close,
  expectSumsOfMetrics,
  type Keying,
  SHIFT_TIMES,
} from "../fixtures/kpi-checks";
import { inServiceSince } from "../fixtures/machine-history";
import { insertProductionLogs } from "../fixtures/production-logs";
import { apiPost, createCompany, createMachines, operatorJson, shardD1 } from "../harness";

type KpiRow = Api["KpiReportRow"];

const ZONE = "Europe/Rome";
const WINDOW = {
  startDate: { between: { start: "2025-03-01T00:00:00Z", end: "2025-11-15T00:00:00Z" } },
};
/** The local date of an instant, and the length of that local day in minutes. */
function localDay(iso: string): { date: string; minutes: number } {
  const at = new TZDate(Date.parse(iso), ZONE);
  const [y, m, d] = [at.getFullYear(), at.getMonth(), at.getDate()];
  const start = new TZDate(y, m, d, 0, 0, ZONE).getTime();
  const end = new TZDate(y, m, d + 1, 0, 0, ZONE).getTime();
  const date = `${y}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
  return { date, minutes: (end - start) / 60_000 };
}

/** ISO week `YYYY-Www` of a date. */
function isoWeek(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  const weekday = (new Date(t).getUTCDay() + 6) % 7;
  const thursday = new Date(t + (3 - weekday) * 86_400_000);
  const year = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * 86_400_000)) + 1;
  return `${year}-W${String(week).padStart(2, "0")}`;
}

/** Minutes here are sums over hundreds of instances: equal to 1e-6. */
const TOLERANCE = 1e-6;

describe("KPIs of a long window of mostly empty shifts", () => {
  it("equal the metrics rows aggregated, across both DST changes, storing only what records touch", async () => {
    const co = await createCompany({ timezone: ZONE });
    const [a, b] = (await createMachines(co.id, [{ name: "Press" }, { name: "Lathe" }])).map(
      (m) => m.id,
    ) as [number, number];
    await inServiceSince(co.id, [a, b], "2025-03-01T00:00:00Z");
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Night", startTime: "22:00", endTime: "06:00", weekdays: [1, 2, 3, 4, 5] },
      // Across the hour the clocks skip on 30 March (1 hour long) and repeat on 26 October (3).
      { name: "Sunday", startTime: "01:30", endTime: "03:30", weekdays: [7] },
    ]);
    const [x] = await apiPost<{ id: string }[]>(co.key, "/v1/skus", [{ sku: "ROD-1" }]);
    const at = (iso: string) => Date.parse(iso);
    // A few records in eight months: a log across the spring gap, a morning with a SKU and a
    // jam, a log over two instances, a stop in the autumn's repeated hour.
    await insertProductionLogs(co.id, [
      {
        machineId: a,
        start: at("2025-03-30T00:40:00Z"),
        end: at("2025-03-30T01:20:00Z"),
        count: 40,
        nominalSpeed: 1,
      },
      {
        machineId: b,
        start: at("2025-07-07T19:00:00Z"),
        end: at("2025-07-08T06:00:00Z"),
        count: 500,
        nominalSpeed: 1,
      },
    ]);
    await apiPost(co.key, "/v1/production-logs", [
      {
        machine: { id: a },
        sku: { id: x?.id },
        type: "total",
        start: "2025-06-10T04:30:00Z",
        end: "2025-06-10T10:00:00Z",
        count: 300,
        nominalSpeed: 1,
      },
    ]);
    await operatorJson("POST", `/machines/${a}/stops`, [
      { startTime: "2025-06-10T07:00:00Z", endTime: "2025-06-10T07:20:00Z", isProgrammed: false },
    ]);
    await operatorJson("POST", `/machines/${b}/stops`, [
      { startTime: "2025-10-26T00:45:00Z", endTime: "2025-10-26T01:30:00Z", isProgrammed: true },
    ]);

    const rows = await allMetrics(co, WINDOW);
    expect(rows.length).toBeGreaterThan(900);
    const lengths = (name: string) =>
      new Set(
        rows.filter((r) => r.shift.name === name).map((r) => r.shiftIndicators.availableTime),
      );
    expect(lengths("Sunday")).toEqual(new Set([60, 120, 180]));
    expect(lengths("Morning")).toEqual(new Set([480]));

    const keyings: Keying[] = [
      ["machine", (r) => String(r.machine.id), (k) => String(k.machine?.id)],
      ["shift", (r) => r.shift.name, (k) => String(k.shift)],
      ["day", (r) => localDay(r.shift.startTime).date, (k) => String(k.day)],
      ["week", (r) => isoWeek(localDay(r.shift.startTime).date), (k) => String(k.week)],
      ["month", (r) => localDay(r.shift.startTime).date.slice(0, 7), (k) => String(k.month)],
    ];
    for (const keying of keyings) {
      const [key, , ofKpi] = keying;
      const got = await allKpis(co, { ...WINDOW, groupBy: [key] });
      for (const [k, members] of expectSumsOfMetrics(got, rows, keying, TOLERANCE)) {
        // Calendar time: each machine's local days of the group's instance starts.
        const days = new Map<string, number>();
        for (const r of members) {
          const day = localDay(r.shift.startTime);
          days.set(`${r.machine.id}:${day.date}`, day.minutes);
        }
        close(
          k.minutes.calendarTime,
          [...days.values()].reduce((s, m) => s + m, 0),
          `${key} ${ofKpi(k)} calendarTime`,
          TOLERANCE,
        );
      }
    }
    // Split by SKU, each month adds up to its row.
    const months = await apiPost<{ kpis: KpiRow[] }>(co.key, "/v1/reports/kpis", {
      ...WINDOW,
      groupBy: ["month"],
      limit: 100,
    });
    const split = await apiPost<{ kpis: KpiRow[] }>(co.key, "/v1/reports/kpis", {
      ...WINDOW,
      groupBy: ["month", "sku"],
      limit: 100,
    });
    expect(split.kpis.filter((k) => k.sku !== null).map((k) => k.month)).toEqual(["2025-06"]);
    for (const m of months.kpis) {
      const parts = split.kpis.filter((k) => k.month === m.month);
      for (const t of SHIFT_TIMES) {
        close(
          parts.reduce((s, p) => s + (p.minutes[t] ?? 0), 0),
          m.minutes[t] ?? 0,
          `${m.month} ${t}`,
          TOLERANCE,
        );
      }
    }
    // The instances stored are the metrics pages' (every one here), but the KPI report
    // alone stores only those a record may touch: within two days of one.
    const d1 = await shardD1(co.id);
    const stored = await d1
      .prepare("SELECT count(*) AS n FROM instance_figures WHERE company_id = ?")
      .bind(co.id)
      .first<{ n: number }>();
    expect(stored?.n).toBeGreaterThan(0);
    expect(stored?.n).toBeLessThan(60);
  }, 120_000);
});
