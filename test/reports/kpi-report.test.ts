/**
 * The KPI report through HTTP, checked as a user would: against the metrics report's
 * rows aggregated by their times, SKU groups adding up to their machine's row, every
 * ratio recomputed from the row's own minutes and counts, and a hand-computed split.
 */

import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import {
  allMetrics,
  close,
  expectSumsOfMetrics,
  type Keying,
  SHIFT_TIMES,
} from "../fixtures/kpi-checks";
import { ROME_WEEK, rome, romePlant } from "../fixtures/rome-plant";
import {
  api,
  apiPost,
  createCompany,
  createMachines,
  operatorJson,
  type TestCompany,
} from "../harness";

type KpiRow = Api["KpiReportRow"];
type MetricsRow = Api["MetricsReportRow"];

async function kpis(co: TestCompany, body: Record<string, unknown>): Promise<KpiRow[]> {
  return (await apiPost<{ kpis: KpiRow[] }>(co.key, "/v1/reports/kpis", { limit: 100, ...body }))
    .kpis;
}

/** Every ratio of a row recomputed from its own minutes and counts. */
function expectOwnRatios(r: KpiRow) {
  const m = r.minutes;
  // docs/metrics.md: a ratio without a denominator is null.
  const q = (a: number, b: number) => (b === 0 ? null : a / b);
  const run = (m.availableTime ?? 0) - (m.programmedDowntime ?? 0) - (m.unavailableTime ?? 0);
  close(m.runTime, run, "runTime");
  close(m.plannedTime, (m.availableTime ?? 0) - (m.programmedDowntime ?? 0), "plannedTime");
  close(r.availability, q(run, m.availableTime ?? 0), "availability");
  close(r.netAvailability, q(run, m.plannedTime ?? 0), "netAvailability");
  close(r.effectiveness, q(m.idealTime ?? 0, run), "effectiveness");
  close(r.quality, q(r.counts.good, r.counts.total), "quality");
  // The product of the factors where they exist, else fully productive time over the base.
  const { total, good } = r.counts;
  const goodIdeal = total === 0 ? 0 : ((m.idealTime ?? 0) * good) / total;
  const product = (...factors: (number | null)[]) =>
    factors.every((f) => f !== null) ? factors.reduce<number>((p, f) => p * (f ?? 0), 1) : null;
  close(
    r.oee,
    product(r.availability, r.effectiveness, r.quality) ?? q(goodIdeal, m.availableTime ?? 0),
    "oee",
  );
  close(
    r.netOee,
    product(r.netAvailability, r.effectiveness, r.quality) ?? q(goodIdeal, m.plannedTime ?? 0),
    "netOee",
  );
  close(
    r.teep,
    r.oee === null ? null : q(r.oee * (m.availableTime ?? 0), m.calendarTime ?? 0),
    "teep",
  );
  close(r.mtbf, q(run, r.counts.unplannedStops), "mtbf");
  close(r.mttr, q(m.nonProgrammedDowntime ?? 0, r.counts.unplannedStops), "mttr");
  close(r.scrapRatio, q(r.counts.defects, r.counts.total), "scrapRatio");
}

describe("POST /v1/reports/kpis", () => {
  it("by machine, day, week and shift equals the metrics rows aggregated by their times", async () => {
    const { co } = await romePlant();
    const rows = await allMetrics(co, ROME_WEEK);
    expect(rows).toHaveLength(8 * 2 * 2);
    const localDay = (iso: string) =>
      new Date(Date.parse(iso) + 3_600_000).toISOString().slice(0, 10);
    const keyings: Keying[] = [
      ["machine", (r) => String(r.machine.id), (k) => String(k.machine?.id)],
      ["day", (r) => localDay(r.shift.startTime), (k) => String(k.day)],
      [
        "week",
        (r) => (localDay(r.shift.startTime) < "2026-03-09" ? "2026-W10" : "2026-W11"),
        (k) => String(k.week),
      ],
      ["shift", (r) => r.shift.name, (k) => String(k.shift)],
    ];
    for (const keying of keyings) {
      const [key] = keying;
      const got = await kpis(co, { ...ROME_WEEK, groupBy: [key] });
      for (const [k, members] of expectSumsOfMetrics(got, rows, keying)) {
        const sum = (f: (r: MetricsRow) => number) => members.reduce((s, r) => s + f(r), 0);
        const run = (r: MetricsRow) =>
          (r.shiftIndicators.availableTime ?? 0) -
          (r.shiftIndicators.programmedDowntime ?? 0) -
          (r.shiftIndicators.unavailableTime ?? 0);
        const avail = sum((r) => r.shiftIndicators.availableTime ?? 0);
        // Weighted by their times: availability by available time, effectiveness by run time.
        close(
          k.availability,
          sum(
            (r) => (r.shiftIndicators.availability ?? 0) * (r.shiftIndicators.availableTime ?? 0),
          ) / avail,
          `${key} availability`,
        );
        const runs = sum(run);
        close(
          k.effectiveness,
          runs === 0 ? null : sum((r) => (r.productionMetrics.effectiveness ?? 0) * run(r)) / runs,
          `${key} effectiveness`,
        );
        expectOwnRatios(k);
      }
    }
  });

  it("splits a shift by the SKU, operator and work order of the log covering each minute", async () => {
    const { co, capper, x, y } = await romePlant();
    const morning = { startDate: { equal: rome("02", "06:00") }, machines: { include: [capper] } };
    const [whole] = await kpis(co, morning);
    const parts = await kpis(co, { ...morning, groupBy: ["sku"] });
    expect(parts.map((p) => p.sku?.name ?? null)).toEqual(
      ["CAP-X", "CAP-Y", null].sort((a, b) =>
        a === null ? 1 : b === null ? -1 : a.localeCompare(b),
      ),
    );
    const bySku = new Map(parts.map((p) => [p.sku?.id ?? null, p]));
    const px = bySku.get(x?.id ?? "");
    const py = bySku.get(y?.id ?? "");
    const none = bySku.get(null);
    // By hand: X covers 06:00-10:00 with a 30-minute jam; Y 10:00-13:00 with a
    // 15-minute programmed stop; nothing covers 13:00-14:00 (a 10-minute jam, 30 min of
    // no data, 20 min of early stop).
    expect(px?.minutes).toMatchObject({
      availableTime: 240,
      nonProgrammedDowntime: 30,
      runTime: 210,
      idealTime: 240,
    });
    expect(px?.counts).toEqual({ total: 2400, good: 2400, defects: 0, unplannedStops: 1 });
    expect(py?.minutes).toMatchObject({
      availableTime: 180,
      programmedDowntime: 15,
      runTime: 165,
      idealTime: 150,
    });
    expect(py?.counts).toEqual({ total: 1500, good: 1470, defects: 30, unplannedStops: 0 });
    expect(none?.minutes).toMatchObject({
      availableTime: 60,
      nonProgrammedDowntime: 10,
      noDataTime: 30,
      earlyStopTime: 20,
      runTime: 0,
    });
    expect(none?.counts.unplannedStops).toBe(1);
    // The parts add up to the shift.
    for (const f of [...SHIFT_TIMES, "runTime", "idealTime", "calendarTime"] as const) {
      if (f === "calendarTime") continue;
      close(
        parts.reduce((s, p) => s + (p.minutes[f] ?? 0), 0),
        whole?.minutes[f] ?? 0,
        f,
      );
    }
    for (const c of ["total", "good", "defects", "unplannedStops"] as const) {
      expect(parts.reduce((s, p) => s + p.counts[c], 0)).toBe(whole?.counts[c]);
    }
    for (const p of parts) expectOwnRatios(p);
    const byOperator = await kpis(co, { ...morning, groupBy: ["operator"] });
    expect(byOperator.map((r) => [r.operator?.name ?? null, r.minutes.availableTime])).toEqual([
      ["Ann Lee", 420],
      [null, 60],
    ]);
  });

  it("gives each machine's SKU groups adding up to its row over the whole window", async () => {
    const { co } = await romePlant();
    const machines = await kpis(co, { ...ROME_WEEK, groupBy: ["machine"] });
    const split = await kpis(co, { ...ROME_WEEK, groupBy: ["machine", "month", "sku"] });
    for (const m of machines) {
      const mine = split.filter((s) => s.machine?.id === m.machine?.id);
      expect(mine.length).toBeGreaterThan(1);
      for (const t of [...SHIFT_TIMES, "idealTime", "runTime"] as const) {
        close(
          mine.reduce((s, p) => s + (p.minutes[t] ?? 0), 0),
          m.minutes[t] ?? 0,
          t,
        );
      }
      expect(mine.reduce((s, p) => s + p.counts.total, 0)).toBe(m.counts.total);
      expect(mine.every((s) => s.month === "2026-03")).toBe(true);
    }
    // Calendar time: 8 local days of 24 h per machine.
    expect(machines.map((m) => m.minutes.calendarTime)).toEqual([8 * 1440, 8 * 1440]);
  });

  it("shows an edited log in the next call", async () => {
    const { co, capper } = await romePlant();
    const morning = { startDate: { equal: rome("02", "06:00") }, machines: { include: [capper] } };
    const [before] = await kpis(co, morning);
    const found = await apiPost<{ productionLogs: { id: string; count: number }[] }>(
      co.key,
      "/v1/production-logs/filters",
      { count: { equal: 2400 } },
    );
    const id = found.productionLogs[0]?.id;
    const res = await api(co.key, `/v1/production-logs/${id}`, {
      method: "PATCH",
      json: { count: 1200 },
    });
    expect(res.status).toBe(204);
    const [after] = await kpis(co, morning);
    expect(after?.counts.total).toBe((before?.counts.total ?? 0) - 1200);
    close(after?.minutes.idealTime, (before?.minutes.idealTime ?? 0) - 120, "idealTime");
  });

  it("attributes a realtime segment's time to its simple work order", async () => {
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [machine] = await createMachines(co.id, [{ name: "Line" }]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "All day", startTime: "00:00", endTime: "00:00" },
    ]);
    const [sku] = await apiPost<{ id: string }[]>(co.key, "/v1/skus", [{ sku: "RT-1" }]);
    await apiPost(co.key, "/v1/nominal-speeds", [
      { machine: { id: machine?.id }, sku: { id: sku?.id }, nominalSpeed: 10 },
    ]);
    const state = (await (await api(co.key, `/v1/realtime/${machine?.id}`)).json()) as {
      shift: { start: string };
    };
    const start = Math.max(Date.parse(state.shift.start), Date.now() - 30 * 60_000);
    const res = await api(co.key, `/v1/realtime/${machine?.id}/sku`, {
      method: "POST",
      json: { skuId: sku?.id, simpleWorkOrderName: "WO-RT", start: new Date(start).toISOString() },
    });
    expect(res.status, await res.clone().text()).toBe(204);
    const rows = await kpis(co, { groupBy: ["simpleWorkOrder", "sku"] });
    const mine = rows.find((r) => r.simpleWorkOrder?.name === "WO-RT");
    expect(mine?.sku?.name).toBe("RT-1");
    expect(mine?.minutes.availableTime).toBeGreaterThan(0);
    expect(rows.at(-1)?.simpleWorkOrder).toBeNull();
  });

  it("refuses an unknown key with a 422 naming groupBy", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/reports/kpis", {
      method: "POST",
      json: { groupBy: ["year"] },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[] }[] };
    expect(body.detail[0]?.loc.slice(0, 2)).toEqual(["body", "groupBy"]);
  });
});
