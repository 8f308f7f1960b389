/**
 * The KPI worked example of docs/metrics.md ("Worked example (KPIs by SKU)"), replayed:
 * the same records created through the public and operator APIs, and every figure of
 * the doc's table compared with the report's rows (to 1e-9).
 */

import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { apiPost, createCompany, createMachines, operatorJson } from "../harness";

type KpiRow = Api["KpiReportRow"];

function expectFigures(what: string, actual: Record<string, unknown>, expected: object) {
  for (const [field, value] of Object.entries(expected)) {
    const got = actual[field];
    if (value === null) {
      expect(got, `${what} ${field}`).toBeNull();
      continue;
    }
    expect(typeof got, `${what} ${field}`).toBe("number");
    expect(Math.abs((got as number) - value), `${what} ${field}: ${got} vs ${value}`).toBeLessThan(
      1e-9,
    );
  }
}

const at = (hhmm: string) => `2026-03-02T${hhmm}:00+01:00`;

describe("docs/metrics.md, KPI worked example", () => {
  it("gives the printed figures per SKU and for the machine", async () => {
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [capper] = await createMachines(co.id, [{ name: "Capper" }]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
    ]);
    const [x, y] = await apiPost<{ id: string }[]>(co.key, "/v1/skus", [
      { sku: "CAP-X" },
      { sku: "CAP-Y" },
    ]);
    const ann = { firstName: "Ann", lastName: "Lee" };
    const log = (
      sku: string | undefined,
      type: string,
      from: string,
      to: string,
      count: number,
    ) => ({
      machine: { id: capper?.id },
      sku: { id: sku },
      operator: ann,
      type,
      start: at(from),
      end: at(to),
      count,
      nominalSpeed: 10,
    });
    await apiPost(co.key, "/v1/production-logs", [
      log(x?.id, "total", "06:00", "10:00", 1890),
      log(y?.id, "total", "10:00", "13:00", 1500),
      log(y?.id, "defects", "11:00", "12:00", 30),
    ]);
    await operatorJson("POST", `/machines/${capper?.id}/stops`, [
      { startTime: at("08:00"), endTime: at("08:30"), isProgrammed: false },
      { startTime: at("12:30"), endTime: at("12:45"), isProgrammed: true },
      { startTime: at("13:30"), endTime: at("13:40"), isProgrammed: false },
    ]);
    const body = { startDate: { equal: "2026-03-02T05:00:00Z" } };
    const { kpis: bySku } = await apiPost<{ kpis: KpiRow[] }>(co.key, "/v1/reports/kpis", {
      ...body,
      groupBy: ["sku"],
    });
    expect(bySku.map((r) => r.sku?.name ?? null)).toEqual(["CAP-X", "CAP-Y", null]);
    const [cx, cy, none] = bySku as [KpiRow, KpiRow, KpiRow];
    expectFigures("CAP-X", cx.minutes, {
      calendarTime: 1440,
      availableTime: 240,
      programmedDowntime: 0,
      nonProgrammedDowntime: 30,
      unavailableTime: 30,
      runTime: 210,
      idealTime: 189,
    });
    expect(cx.counts).toEqual({ total: 1890, good: 1890, defects: 0, unplannedStops: 1 });
    expectFigures("CAP-X", cx, {
      availability: 0.875,
      netAvailability: 0.875,
      effectiveness: 0.9,
      quality: 1,
      oee: 0.7875,
      teep: 0.13125,
      mtbf: 210,
      mttr: 30,
      scrapRatio: 0,
    });
    expectFigures("CAP-Y", cy.minutes, {
      availableTime: 180,
      programmedDowntime: 15,
      nonProgrammedDowntime: 0,
      runTime: 165,
      idealTime: 150,
    });
    expect(cy.counts).toEqual({ total: 1500, good: 1470, defects: 30, unplannedStops: 0 });
    expectFigures("CAP-Y", cy, {
      availability: 165 / 180,
      netAvailability: 1,
      effectiveness: 150 / 165,
      quality: 0.98,
      oee: (150 / 180) * 0.98,
      teep: ((150 / 180) * 0.98 * 180) / 1440,
      mtbf: null,
      mttr: null,
      scrapRatio: 0.02,
    });
    expectFigures("null", none.minutes, {
      availableTime: 60,
      nonProgrammedDowntime: 10,
      noDataTime: 30,
      earlyStopTime: 20,
      unavailableTime: 60,
      runTime: 0,
    });
    expectFigures("null", none, {
      availability: 0,
      netAvailability: 0,
      effectiveness: null,
      quality: null,
      oee: 0,
      teep: 0,
      mtbf: 0,
      mttr: 10,
      scrapRatio: null,
    });
    expect(none.counts.unplannedStops).toBe(1);

    const { kpis: byMachine } = await apiPost<{ kpis: KpiRow[] }>(co.key, "/v1/reports/kpis", body);
    const [machine] = byMachine as [KpiRow];
    expectFigures("machine", machine.minutes, {
      availableTime: 480,
      programmedDowntime: 15,
      nonProgrammedDowntime: 40,
      noDataTime: 30,
      earlyStopTime: 20,
      unavailableTime: 90,
      runTime: 375,
      idealTime: 339,
    });
    expect(machine.counts).toEqual({ total: 3390, good: 3360, defects: 30, unplannedStops: 2 });
    expectFigures("machine", machine, {
      availability: 0.78125,
      netAvailability: 375 / 465,
      effectiveness: 0.904,
      quality: 3360 / 3390,
      oee: 0.7,
      teep: 0.7 / 3,
      mtbf: 187.5,
      mttr: 20,
      scrapRatio: 30 / 3390,
    });
    // The decimals the doc prints, so that a typo in the doc fails here too.
    expect(String(machine.netAvailability)).toMatch(/^0\.806451/);
    expect(String(machine.quality)).toMatch(/^0\.991150/);
    expect(String(cy.teep)).toMatch(/^0\.102083/);
    expect(String(machine.scrapRatio)).toMatch(/^0\.008849/);
    // The machine row is the metrics report's row of the instance.
    const { metrics } = await apiPost<{ metrics: { productionMetrics: Record<string, number> }[] }>(
      co.key,
      "/v1/reports/metrics",
      body,
    );
    expectFigures("metrics", metrics[0]?.productionMetrics ?? {}, {
      availability: machine.availability as number,
      effectiveness: machine.effectiveness as number,
      oee: machine.oee as number,
    });
  });
});
