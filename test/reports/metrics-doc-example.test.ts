/**
 * The worked example of docs/metrics.md, replayed: the same company, shifts, stops and
 * production logs, created through the public and operator APIs as a user would, and
 * the report rows compared with the numbers printed in the doc (to 1e-9). If the doc or
 * the formulas change, this test says which figure no longer matches.
 */
import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { api, createCompany, createMachines, operator, operatorJson } from "../harness";

type Row = Api["MetricsReportRow"];

/** Every field given of a row group (named as the generated type names it), each to 1e-9 (the doc prints exact fractions). */
function expectFigures<Group extends object>(
  actual: Group,
  expected: Partial<Record<keyof Group, number | null>>,
) {
  for (const [field, value] of Object.entries(expected) as [
    keyof Group & string,
    number | null,
  ][]) {
    const got: unknown = actual[field];
    if (value === null) {
      expect(got, field).toBeNull();
      continue;
    }
    expect(typeof got, field).toBe("number");
    expect(Math.abs((got as number) - value), `${field}: ${got} vs ${value}`).toBeLessThan(1e-9);
  }
}

async function publicJson<T>(key: string, path: string, body: unknown): Promise<T> {
  const res = await api(key, path, { method: "POST", json: body });
  if (res.status !== 200) throw new Error(`POST ${path} -> ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** The single report row of the instance starting at `start` (an ISO instant). */
async function rowStarting(key: string, start: string): Promise<Row> {
  const page = await publicJson<Api["MetricsReportPage"]>(key, "/v1/reports/metrics", {
    startDate: { equal: start },
  });
  expect(page.totalCount).toBe(1);
  return page.metrics[0] as Row;
}

/** Local Rome time on 2026-03-02 (winter time, UTC+1) as an ISO instant with offset. */
const at = (hhmm: string) => `2026-03-02T${hhmm}:00+01:00`;

describe("docs/metrics.md, worked example", () => {
  it("gives the printed figures for the Morning instance of 2 March 2026", async () => {
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [machine] = await createMachines(co.id, [{ name: "Capper 1" }]);
    if (!machine) throw new Error("no machine");
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Night", startTime: "22:00", endTime: "06:00", weekdays: [6] },
    ]);
    const [sku] = await publicJson<{ id: string }[]>(co.key, "/v1/skus", [{ sku: "CAP-500" }]);
    if (!sku) throw new Error("no sku");
    await publicJson(co.key, "/v1/nominal-speeds", [
      { machine: { id: machine.id }, sku: { id: sku.id }, nominalSpeed: 15 },
    ]);

    const [s1, , , s4] = await operatorJson<{ id: number }[]>(
      "POST",
      `/machines/${machine.id}/stops`,
      [
        { startTime: at("08:00"), endTime: at("08:45"), isProgrammed: false },
        { startTime: at("10:00"), endTime: at("10:30"), isProgrammed: true },
        {
          startTime: at("11:00"),
          endTime: at("11:15"),
          isProgrammed: false,
          isIncludedInAvailability: false,
          isIncludedInStops: false,
        },
        { startTime: at("09:00"), endTime: at("09:10"), isProgrammed: false },
      ],
    );
    if (!s1 || !s4) throw new Error("no stops");
    await operatorJson("PUT", `/stops/${s1.id}/classification`, {
      description: "Cap feeder jam",
      generalCause: { name: "Jam" },
    });
    expect((await operator("DELETE", `/stops/${s4.id}`)).status).toBe(204);

    const log = (type: string, from: string, to: string, count: number) => ({
      machine: { id: machine.id },
      sku: { id: sku.id },
      type,
      start: at(from),
      end: at(to),
      count,
    });
    const logs = await publicJson<{ id: string; nominalSpeed: number }[]>(
      co.key,
      "/v1/production-logs",
      [
        log("total", "06:20", "09:00", 1650),
        log("total", "09:10", "13:30", 3000),
        log("defects", "12:00", "13:00", 93),
        log("total", "13:30", "14:00", 500),
      ],
    );
    expect(logs.map((l) => l.nominalSpeed)).toEqual([15, 15, 15, 15]);
    const deleted = logs[3];
    if (!deleted) throw new Error("no log D");
    const del = await api(co.key, `/v1/production-logs/${deleted.id}`, { method: "DELETE" });
    expect(del.status).toBe(204);

    const row = await rowStarting(co.key, "2026-03-02T05:00:00Z");
    expect(row.shift).toMatchObject({
      name: "Morning",
      startTime: "2026-03-02T05:00:00.000Z",
      endTime: "2026-03-02T13:00:00.000Z",
      isActive: false,
    });
    expect(row.shiftIndicators.indicatorId).toBe(row.shift.id);
    expectFigures(row.shiftIndicators, {
      availableTime: 480,
      programmedDowntime: 30,
      nonProgrammedDowntime: 45,
      otherStopsTime: 15,
      lateStartTime: 20,
      earlyStopTime: 30,
      noDataTime: 10,
      unavailableTime: 105,
      annotatedDowntime: 45,
      availability: 0.71875,
      netAvailability: 345 / 450,
    });
    expectFigures(row.productionMetrics, {
      availability: 0.71875,
      netAvailability: 345 / 450,
      effectiveness: 310 / 345,
      quality: 0.98,
      oee: (310 / 480) * 0.98,
      netOee: (310 / 450) * 0.98,
      minutesLostByLowSpeed: 35,
      minutesLostByLowQuality: 6.2,
    });
    // The decimals the doc prints, so that a typo in the doc fails here too.
    expect(row.productionMetrics.effectiveness).toBeCloseTo(0.898550724637, 11);
    expect(row.productionMetrics.oee).toBeCloseTo(0.632916666666, 11);
    expect(row.productionMetrics.netOee).toBeCloseTo(0.675111111111, 11);

    // The empty Night instances across the DST changes: 7 and 9 hours, nothing run or made:
    // availability and OEE 0 of the planned time, no effectiveness and no quality.
    const spring = await rowStarting(co.key, "2026-03-28T21:00:00Z");
    expect(spring.shift).toMatchObject({ name: "Night", endTime: "2026-03-29T04:00:00.000Z" });
    expectFigures(spring.shiftIndicators, {
      availableTime: 420,
      noDataTime: 420,
      unavailableTime: 420,
      availability: 0,
      netAvailability: 0,
    });
    expectFigures(spring.productionMetrics, {
      availability: 0,
      netAvailability: 0,
      effectiveness: null,
      quality: null,
      oee: 0,
      netOee: 0,
      minutesLostByLowSpeed: 0,
      minutesLostByLowQuality: 0,
    });
    const autumn = await rowStarting(co.key, "2026-10-24T20:00:00Z");
    expect(autumn.shift.endTime).toBe("2026-10-25T05:00:00.000Z");
    expectFigures(autumn.shiftIndicators, { availableTime: 540 });
  });
});
