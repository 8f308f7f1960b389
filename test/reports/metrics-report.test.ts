/**
 * The metrics report through HTTP: scenarios built with the operator API (shifts,
 * stops, classifications) and production-log rows (test/fixtures/production-logs.ts,
 * until the public create endpoint exists), compared with figures worked out by
 * hand from docs/metrics.md.
 */

import { describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import type { Api } from "../fixtures/api-types";
import { inServiceSince } from "../fixtures/machine-history";
import {
  deleteProductionLog,
  insertProductionLogs,
  updateProductionLog,
} from "../fixtures/production-logs";
import {
  api,
  call,
  createCompany,
  createKey,
  createMachines,
  operator,
  operatorJson,
  type TestCompany,
} from "../harness";

type Row = Api["MetricsReportRow"];

type ReportPage = Api["MetricsReportPage"];

const MIN = 60_000;
const HOUR = 60 * MIN;
const ms = (iso: string) => Date.parse(iso);

async function report(key: string, body?: unknown): Promise<ReportPage> {
  const res = await api(key, "/v1/reports/metrics", { method: "POST", json: body ?? {} });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as ReportPage;
}

/** The one row of the instance starting at `start` (ISO) on `machineId`. */
async function rowAt(key: string, machineId: number, start: string): Promise<Row> {
  const page = await report(key, {
    machines: { include: [machineId] },
    startDate: { equal: start },
  });
  expect(page.metrics).toHaveLength(1);
  return page.metrics[0] as Row;
}

async function defineShifts(
  companyId: number,
  items: Record<string, unknown>[],
): Promise<{ id: number; name: string }[]> {
  return operatorJson("POST", `/companies/${companyId}/shifts`, items);
}

async function addStops(
  machineId: number,
  items: Record<string, unknown>[],
): Promise<{ id: number }[]> {
  return operatorJson("POST", `/machines/${machineId}/stops`, items);
}

/** Each expected figure, to 6 decimals; a ratio without a denominator is null (docs/metrics.md). */
function expectClose(
  actual: Record<string, number | null | boolean>,
  expected: Record<string, number | null>,
) {
  for (const [field, value] of Object.entries(expected)) {
    if (value === null) expect(actual[field], field).toBeNull();
    else expect(actual[field], field).toBeCloseTo(value, 6);
  }
}

async function plant(options: { timezone?: string } = {}): Promise<{
  co: TestCompany;
  machineId: number;
}> {
  const co = await createCompany(options);
  const [m] = await createMachines(co.id, [{ name: "Line 1" }]);
  if (!m) throw new Error("no machine");
  await inServiceSince(co.id, [m.id]);
  return { co, machineId: m.id };
}

describe("POST /v1/reports/metrics: the figures of docs/metrics.md", () => {
  it("reproduces a basic example (one total log, two stops) to 1e-6", async () => {
    const { co, machineId } = await plant();
    const [def] = await defineShifts(co.id, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
    ]);
    // 2026-03-02 is in winter time in Rome (UTC+1).
    await addStops(machineId, [
      {
        startTime: "2026-03-02T10:00:00+01:00",
        endTime: "2026-03-02T10:30:00+01:00",
        isProgrammed: true,
      },
      {
        startTime: "2026-03-02T08:00:00+01:00",
        endTime: "2026-03-02T09:00:00+01:00",
        isProgrammed: false,
      },
    ]);
    await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T06:00:00+01:00"),
        end: ms("2026-03-02T14:00:00+01:00"),
        type: "total",
        count: 5400,
        nominalSpeed: 15,
      },
      {
        machineId,
        start: ms("2026-03-02T06:00:00+01:00"),
        end: ms("2026-03-02T14:00:00+01:00"),
        type: "defects",
        count: 270,
        nominalSpeed: 15,
      },
    ]);
    const page = await report(co.key, { startDate: { equal: "2026-03-02T05:00:00Z" } });
    expect(page).toMatchObject({ totalCount: 1, totalPages: 1, currentPage: 1 });
    const row = page.metrics[0] as Row;
    expect(row.company).toEqual({ id: co.id, name: co.name });
    expect(row.machine).toEqual({ id: machineId, name: "Line 1" });
    expect(row.shift).toEqual({
      id: row.shift.id,
      name: "Morning",
      startTime: "2026-03-02T05:00:00.000Z",
      endTime: "2026-03-02T13:00:00.000Z",
      isActive: false,
    });
    expect(Number.isInteger(row.shift.id)).toBe(true);
    expect(row.shiftIndicators.indicatorId).toBe(row.shift.id);
    expectClose(row.shiftIndicators, {
      availableTime: 480,
      programmedDowntime: 30,
      nonProgrammedDowntime: 60,
      otherStopsTime: 0,
      lateStartTime: 0,
      earlyStopTime: 0,
      noDataTime: 0,
      unavailableTime: 60,
      annotatedDowntime: 0,
      availability: 390 / 480,
      netAvailability: 390 / 450,
    });
    expectClose(row.productionMetrics, {
      availability: 390 / 480,
      netAvailability: 390 / 450,
      effectiveness: 360 / 390,
      quality: 5130 / 5400,
      oee: (390 / 480) * (360 / 390) * 0.95,
      netOee: (390 / 450) * (360 / 390) * 0.95,
      minutesLostByLowSpeed: 30,
      minutesLostByLowQuality: 18,
    });
    expect(row.productionMetrics.oee).toBeCloseTo(0.7125, 4);
    expect(row.productionMetrics.netOee).toBeCloseTo(0.76, 4);
    // The same instance keeps its id on every call.
    const again = await rowAt(co.key, machineId, "2026-03-02T06:00:00+01:00");
    expect(again.shift.id).toBe(row.shift.id);
    expect(def?.id).toBeGreaterThan(0);
  });

  it("counts a shift across midnight as one instance, with late start and early stop", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [{ name: "Night", startTime: "22:00", endTime: "06:00" }]);
    // Production 23:00 to 05:00 the next day: 60 min late start, 60 min early stop.
    await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T23:00:00+01:00"),
        end: ms("2026-03-03T05:00:00+01:00"),
        count: 720,
        nominalSpeed: 2,
      },
    ]);
    const row = await rowAt(co.key, machineId, "2026-03-02T22:00:00+01:00");
    expect(row.shift.endTime).toBe("2026-03-03T05:00:00.000Z");
    expectClose(row.shiftIndicators, {
      availableTime: 480,
      lateStartTime: 60,
      earlyStopTime: 60,
      noDataTime: 0,
      unavailableTime: 120,
      availability: 360 / 480,
      netAvailability: 360 / 480,
    });
    // I = 720 / 2 = 360 min over a runTime of 360 min.
    expectClose(row.productionMetrics, {
      effectiveness: 1,
      quality: 1,
      oee: 0.75,
      minutesLostByLowSpeed: 0,
      minutesLostByLowQuality: 0,
    });
  });

  it("makes a night shift 7 hours long on the spring DST change and 9 on the autumn one (Europe/Rome)", async () => {
    const { co } = await plant({ timezone: "Europe/Rome" });
    await defineShifts(co.id, [
      { name: "Day", startTime: "06:00", endTime: "14:00" },
      { name: "Night", startTime: "22:00", endTime: "06:00" },
    ]);
    const spring = await report(co.key, {
      startDate: { between: { start: "2026-03-28T00:00:00Z", end: "2026-03-29T23:59:59Z" } },
    });
    const byName = (page: ReportPage) =>
      page.metrics.map((r) => [r.shift.name, r.shift.startTime, r.shiftIndicators.availableTime]);
    expect(byName(spring)).toEqual([
      ["Day", "2026-03-28T05:00:00.000Z", 480],
      ["Night", "2026-03-28T21:00:00.000Z", 420],
      ["Day", "2026-03-29T04:00:00.000Z", 480],
      ["Night", "2026-03-29T20:00:00.000Z", 480],
    ]);
    const autumn = await report(co.key, {
      startDate: { between: { start: "2026-10-24T12:00:00Z", end: "2026-10-25T12:00:00Z" } },
    });
    expect(byName(autumn)).toEqual([
      ["Night", "2026-10-24T20:00:00.000Z", 540],
      ["Day", "2026-10-25T05:00:00.000Z", 480],
    ]);
    // With nothing recorded, the whole 9 hours are no data.
    expectClose((autumn.metrics[0] as Row).shiftIndicators, { noDataTime: 540, availability: 0 });
  });

  it("classifies overlapping stops by priority: programmed, then non-programmed, then other", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    const [, nonProgrammed] = await addStops(machineId, [
      {
        startTime: "2026-03-02T08:00:00+01:00",
        endTime: "2026-03-02T09:00:00+01:00",
        isProgrammed: true,
      },
      {
        startTime: "2026-03-02T08:30:00+01:00",
        endTime: "2026-03-02T10:00:00+01:00",
        isProgrammed: false,
      },
      {
        startTime: "2026-03-02T09:30:00+01:00",
        endTime: "2026-03-02T11:00:00+01:00",
        isProgrammed: false,
        isIncludedInAvailability: false,
      },
    ]);
    const deleted = (
      await addStops(machineId, [
        {
          startTime: "2026-03-02T12:00:00+01:00",
          endTime: "2026-03-02T13:00:00+01:00",
          isProgrammed: true,
        },
      ])
    )[0];
    await operator("DELETE", `/stops/${deleted?.id}`);
    await operatorJson("PUT", `/stops/${nonProgrammed?.id}/classification`, {
      component: { name: "Feeder" },
    });
    await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T06:00:00+01:00"),
        end: ms("2026-03-02T14:00:00+01:00"),
        count: 3000,
        nominalSpeed: 10,
      },
    ]);
    const row = await rowAt(co.key, machineId, "2026-03-02T06:00:00+01:00");
    // programmed 08:00-09:00 (60; the deleted 12:00-13:00 stop adds nothing); non-programmed
    // 09:00-10:00 (60); other 10:00-11:00 (60). The classified stop covers 08:30-10:00:
    // 90 annotated minutes (minutes of classes 1-3 covered by a classified stop).
    expectClose(row.shiftIndicators, {
      programmedDowntime: 60,
      nonProgrammedDowntime: 60,
      otherStopsTime: 60,
      unavailableTime: 60,
      annotatedDowntime: 90,
      availability: 360 / 480,
      netAvailability: 360 / 420,
    });
    // runTime 360 (other stops do not reduce it); I = 3000 / 10 = 300.
    expectClose(row.productionMetrics, {
      effectiveness: 300 / 360,
      minutesLostByLowSpeed: 60,
      oee: (360 / 480) * (300 / 360),
    });
  });

  it("tells late start, no data and early stop apart, and reports zero for zero denominators", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T07:00:00+01:00"),
        end: ms("2026-03-02T09:00:00+01:00"),
        type: "correct",
        count: 100,
        nominalSpeed: 1,
      },
      {
        machineId,
        start: ms("2026-03-02T10:00:00+01:00"),
        end: ms("2026-03-02T12:00:00+01:00"),
        type: "defects",
        count: 20,
        nominalSpeed: 1,
      },
    ]);
    const row = await rowAt(co.key, machineId, "2026-03-02T06:00:00+01:00");
    expectClose(row.shiftIndicators, {
      lateStartTime: 60,
      noDataTime: 60,
      earlyStopTime: 120,
      unavailableTime: 240,
      availability: 0.5,
    });
    // No total log: T = correct + defects = 120, B = 20, I = 120 min over runTime 240.
    expectClose(row.productionMetrics, {
      quality: 100 / 120,
      effectiveness: 0.5,
      minutesLostByLowSpeed: 120,
      minutesLostByLowQuality: 20,
    });

    // The next day: nothing at all. Everything is no data; every ratio is 0, not NaN.
    const empty = await rowAt(co.key, machineId, "2026-03-03T06:00:00+01:00");
    expectClose(empty.shiftIndicators, {
      noDataTime: 480,
      lateStartTime: 0,
      earlyStopTime: 0,
      availability: 0,
      netAvailability: 0,
    });
    expectClose(empty.productionMetrics, {
      effectiveness: 0,
      quality: 0,
      oee: 0,
      netOee: 0,
      minutesLostByLowSpeed: 0,
      minutesLostByLowQuality: 0,
    });

    // The day after: one programmed stop over the whole shift: netAvailability's denominator is 0.
    await addStops(machineId, [
      {
        startTime: "2026-03-04T06:00:00+01:00",
        endTime: "2026-03-04T14:00:00+01:00",
        isProgrammed: true,
      },
    ]);
    const planned = await rowAt(co.key, machineId, "2026-03-04T06:00:00+01:00");
    expectClose(planned.shiftIndicators, {
      programmedDowntime: 480,
      availability: 0,
      netAvailability: 0,
    });
  });

  it("gives a log to the instance containing its start and counts live logs", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
    ]);
    await insertProductionLogs(co.id, [
      // 13:00 to 15:00: belongs to Morning, covers an hour of each shift.
      {
        machineId,
        start: ms("2026-03-02T13:00:00+01:00"),
        end: ms("2026-03-02T15:00:00+01:00"),
        count: 120,
        nominalSpeed: 1,
        live: true,
      },
    ]);
    const morning = await rowAt(co.key, machineId, "2026-03-02T06:00:00+01:00");
    const afternoon = await rowAt(co.key, machineId, "2026-03-02T14:00:00+01:00");
    expectClose(morning.shiftIndicators, { lateStartTime: 420, earlyStopTime: 0 });
    expectClose(morning.productionMetrics, { effectiveness: 120 / 60, quality: 1 });
    expectClose(afternoon.shiftIndicators, { lateStartTime: 0, earlyStopTime: 420 });
    // No log starts in the afternoon: T = 0.
    expectClose(afternoon.productionMetrics, { effectiveness: 0, quality: 0 });
  });

  it("shows an edited or deleted production log, and an edited stop, in the next call", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    const [logId] = await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T06:00:00+01:00"),
        end: ms("2026-03-02T14:00:00+01:00"),
        count: 240,
        nominalSpeed: 1,
      },
    ]);
    const start = "2026-03-02T06:00:00+01:00";
    expectClose((await rowAt(co.key, machineId, start)).productionMetrics, { effectiveness: 0.5 });
    await updateProductionLog(co.id, logId as string, { count: 480 });
    expectClose((await rowAt(co.key, machineId, start)).productionMetrics, { effectiveness: 1 });
    await updateProductionLog(co.id, logId as string, { nominalSpeed: 4 });
    expectClose((await rowAt(co.key, machineId, start)).productionMetrics, { effectiveness: 0.25 });

    const [stop] = await addStops(machineId, [
      { startTime: "2026-03-02T08:00:00+01:00", isProgrammed: false },
    ]);
    // Open: runs to the end of the (past) instance.
    expectClose((await rowAt(co.key, machineId, start)).shiftIndicators, {
      nonProgrammedDowntime: 360,
    });
    const close = await operator("PATCH", `/stops/${stop?.id}`, {
      endTime: "2026-03-02T09:00:00+01:00",
    });
    expect(close.status).toBe(204);
    expectClose((await rowAt(co.key, machineId, start)).shiftIndicators, {
      nonProgrammedDowntime: 60,
    });
    expect((await operator("PATCH", `/stops/${stop?.id}`, { isProgrammed: true })).status).toBe(
      204,
    );
    expectClose((await rowAt(co.key, machineId, start)).shiftIndicators, {
      nonProgrammedDowntime: 0,
      programmedDowntime: 60,
    });

    await deleteProductionLog(co.id, logId as string);
    const after = await rowAt(co.key, machineId, start);
    expectClose(after.productionMetrics, { effectiveness: 0, quality: 0 });
    // Only the stop is left: 08:00-09:00 is covered, the rest is late start and early stop.
    expectClose(after.shiftIndicators, { lateStartTime: 120, earlyStopTime: 300, noDataTime: 0 });
  });

  it("reports a running instance with an open stop up to now, and defaults to the last 7 days", async () => {
    const { co, machineId } = await plant({ timezone: "UTC" });
    const now = Date.now();
    const start = Math.floor(now / HOUR) * HOUR - 2 * HOUR;
    const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
    await defineShifts(co.id, [
      { name: "Current", startTime: hhmm(start), endTime: hhmm(start + 4 * HOUR) },
    ]);
    await addStops(machineId, [
      { startTime: new Date(start + 30 * MIN).toISOString(), isProgrammed: false },
    ]);
    await insertProductionLogs(co.id, [
      { machineId, start, end: start + 30 * MIN, count: 30, nominalSpeed: 1 },
    ]);
    const before = Date.now();
    const page = await report(co.key);
    const after = Date.now();
    // One instance a day; the 7 that started in the last 7 days, oldest first.
    expect(page.totalCount).toBe(7);
    expect(page.metrics.map((r) => Date.parse(r.shift.startTime))).toEqual(
      [6, 5, 4, 3, 2, 1, 0].map((d) => start - d * 24 * HOUR),
    );
    const current = page.metrics[6] as Row;
    expect(current.shift.isActive).toBe(true);
    expect(page.metrics[5]?.shift.isActive).toBe(false);
    const i = current.shiftIndicators;
    // So far: the elapsed part of the 4-hour instance, about 2 hours (docs/metrics.md).
    expect(i.availableTime).toBeGreaterThanOrEqual((before - start) / MIN - 1e-6);
    expect(i.availableTime).toBeLessThanOrEqual((after - start) / MIN + 1e-6);
    // The open stop runs until now: nothing after now is late, early or no data yet.
    expect(i.nonProgrammedDowntime).toBeGreaterThanOrEqual(
      (before - start - 30 * MIN) / MIN - 1e-6,
    );
    expect(i.nonProgrammedDowntime).toBeLessThanOrEqual((after - start - 30 * MIN) / MIN + 1e-6);
    expect(i.lateStartTime).toBe(0);
    expect(i.earlyStopTime).toBe(0);
    expect(i.noDataTime).toBe(0);
  });
});

describe("POST /v1/reports/metrics: filters, order, pages", () => {
  async function twoMachinesTwoShifts() {
    const co = await createCompany();
    const machines = await createMachines(co.id, [{ name: "Prensa Número 1" }, { name: "Lathe" }]);
    const [m1, m2] = machines.map((m) => m.id) as [number, number];
    await inServiceSince(co.id, [m1, m2]);
    const defs = await defineShifts(co.id, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
      { name: "Ignored", startTime: "22:00", endTime: "23:00", isConsidered: false },
    ]);
    const [morning, afternoon, ignored] = defs.map((d) => d.id) as [number, number, number];
    return { co, m1, m2, morning, afternoon, ignored };
  }
  // Two days of instances: 2026-03-02 and 03 (Rome, UTC+1).
  const TWO_DAYS = { between: { start: "2026-03-02T00:00:00Z", end: "2026-03-03T23:59:59Z" } };
  const key = (r: Row) => `${r.shift.startTime.slice(5, 13)} ${r.shift.name} ${r.machine.name}`;

  it("orders by instance start then machine id, leaves out definitions not considered, and pages", async () => {
    const { co } = await twoMachinesTwoShifts();
    const all = await report(co.key, { startDate: TWO_DAYS, limit: 100 });
    expect(all.totalCount).toBe(8);
    expect(all.metrics.map(key)).toEqual([
      "03-02T05 Morning Prensa Número 1",
      "03-02T05 Morning Lathe",
      "03-02T13 Afternoon Prensa Número 1",
      "03-02T13 Afternoon Lathe",
      "03-03T05 Morning Prensa Número 1",
      "03-03T05 Morning Lathe",
      "03-03T13 Afternoon Prensa Número 1",
      "03-03T13 Afternoon Lathe",
    ]);
    const page2 = await report(co.key, { startDate: TWO_DAYS, limit: 3, page: 2 });
    expect(page2).toMatchObject({ totalCount: 8, totalPages: 3, currentPage: 2 });
    expect(page2.metrics.map(key)).toEqual(all.metrics.slice(3, 6).map(key));
    const past = await report(co.key, { startDate: TWO_DAYS, limit: 3, page: 9 });
    expect(past).toMatchObject({ totalCount: 8, totalPages: 3, currentPage: 9, metrics: [] });
    // Default limit 10.
    const wide = await report(co.key, {
      startDate: { between: { start: "2026-03-02T00:00:00Z", end: "2026-03-04T23:59:59Z" } },
    });
    expect(wide.totalCount).toBe(12);
    expect(wide.metrics).toHaveLength(10);
  });

  it("filters machines by fuzzy name, include and exclude", async () => {
    const { co, m1, m2 } = await twoMachinesTwoShifts();
    const names = async (machines: unknown) => [
      ...new Set(
        (await report(co.key, { startDate: TWO_DAYS, machines, limit: 100 })).metrics.map(
          (r) => r.machine.id,
        ),
      ),
    ];
    expect(await names({ search: "numero" })).toEqual([m1]);
    expect(await names({ search: "PRENSA" })).toEqual([m1]);
    expect(await names({ search: "nothing" })).toEqual([]);
    expect(await names({ include: [m2] })).toEqual([m2]);
    expect(await names({ exclude: [m2] })).toEqual([m1]);
    expect(await names({ include: [m1, m2], exclude: [m1] })).toEqual([m2]);
    expect(await names({ include: [] })).toEqual([m1, m2]);
    expect(await names({ search: "  " })).toEqual([m1, m2]);
  });

  it("filters shift definitions by include and exclude", async () => {
    const { co, morning, afternoon, ignored } = await twoMachinesTwoShifts();
    const shiftNames = async (shifts: unknown) => [
      ...new Set(
        (await report(co.key, { startDate: TWO_DAYS, shifts, limit: 100 })).metrics.map(
          (r) => r.shift.name,
        ),
      ),
    ];
    expect(await shiftNames({ include: [afternoon] })).toEqual(["Afternoon"]);
    expect(await shiftNames({ exclude: [afternoon] })).toEqual(["Morning"]);
    // A definition not considered stays out even when asked for.
    expect(await shiftNames({ include: [ignored] })).toEqual([]);
    expect(await shiftNames({ include: [morning, afternoon] })).toEqual(["Morning", "Afternoon"]);
  });

  it("filters on the instance start and end with after, before, between and equal", async () => {
    const { co, m1 } = await twoMachinesTwoShifts();
    const starts = async (body: Record<string, unknown>) =>
      (await report(co.key, { machines: { include: [m1] }, limit: 100, ...body })).metrics.map(
        (r) => r.shift.startTime.slice(5, 13),
      );
    // after and before are strict.
    expect(
      await starts({
        startDate: { after: "2026-03-02T05:00:00Z", before: "2026-03-03T13:00:00Z" },
      }),
    ).toEqual(["03-02T13", "03-03T05"]);
    // between is half-open, [start, end): the instance starting at its end is out.
    expect(
      await starts({
        startDate: { between: { start: "2026-03-02T05:00:00Z", end: "2026-03-02T13:00:00Z" } },
      }),
    ).toEqual(["03-02T05"]);
    expect(await starts({ startDate: { equal: "2026-03-03T05:00:00Z" } })).toEqual(["03-03T05"]);
    // endDate applies to the instance end: the Morning of 03-02 ends at 13:00Z.
    expect(await starts({ endDate: { equal: "2026-03-02T13:00:00Z" } })).toEqual(["03-02T05"]);
    expect(
      await starts({
        startDate: TWO_DAYS,
        endDate: { after: "2026-03-02T21:00:00Z", before: "2026-03-03T21:00:00Z" },
      }),
    ).toEqual(["03-03T05"]);
    // An upper bound alone covers the 7 days before it.
    expect(await starts({ startDate: { before: "2026-03-03T05:00:00Z" } })).toHaveLength(14);
  });

  it("counts a log and a stop that started days before the page, and an open stop", async () => {
    const { co, machineId } = await plant();
    await defineShifts(co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    // Rome is UTC+1: the 2026-03-05 Morning is 05:00Z-13:00Z. A 4-day log covers it
    // whole; a stop from 3 days earlier covers its first hour; an open stop its last.
    await insertProductionLogs(co.id, [
      {
        machineId,
        start: ms("2026-03-02T00:00:00Z"),
        end: ms("2026-03-06T00:00:00Z"),
        type: "total",
        count: 100,
        nominalSpeed: 1,
      },
    ]);
    await addStops(machineId, [
      { startTime: "2026-03-02T05:00:00Z", endTime: "2026-03-05T06:00:00Z", isProgrammed: true },
      { startTime: "2026-03-05T12:00:00Z", endTime: null, isProgrammed: false },
    ]);
    const row = await rowAt(co.key, machineId, "2026-03-05T05:00:00Z");
    expectClose(row.shiftIndicators, {
      programmedDowntime: 60,
      nonProgrammedDowntime: 60,
      noDataTime: 0,
      lateStartTime: 0,
      earlyStopTime: 0,
    });
  });

  it("reports a window of any length: 59 days of instances, first and last page", async () => {
    const { co } = await twoMachinesTwoShifts();
    const range = {
      startDate: { between: { start: "2026-01-01T00:00:00Z", end: "2026-02-28T23:59:59Z" } },
    };
    const first = await report(co.key, { ...range, limit: 100 });
    // 59 days x 2 considered shifts x 2 machines.
    expect(first.totalCount).toBe(59 * 2 * 2);
    expect(first.metrics[0]?.shift.startTime.slice(0, 13)).toBe("2026-01-01T05");
    const last = await report(co.key, { ...range, limit: 100, page: 3 });
    expect(last.metrics).toHaveLength(59 * 4 - 200);
    expect(last.metrics.at(-1)?.shift.startTime.slice(0, 13)).toBe("2026-02-28T13");
  });

  it("refuses invalid bodies with 422", async () => {
    const { co } = await twoMachinesTwoShifts();
    const bad = [
      { startDate: { between: { start: "2026-03-02T00:00:00Z", end: "2026-03-01T00:00:00Z" } } },
      { startDate: { after: "yesterday" } },
      { limit: 0 },
      { limit: 101 },
      { page: 0 },
      { machines: { include: ["a"] } },
      { unknown: true },
    ];
    for (const body of bad) {
      const res = await api(co.key, "/v1/reports/metrics", { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail[0]?.loc[0]).toBe("body");
    }
    // No body at all is the default request.
    const none = await api(co.key, "/v1/reports/metrics", { method: "POST" });
    expect(none.status).toBe(200);
  });

  it("never shows another company's machines, even when asked for by id", async () => {
    const a = await twoMachinesTwoShifts();
    const b = await createCompany();
    await defineShifts(b.id, [{ name: "B shift", startTime: "06:00", endTime: "14:00" }]);
    const page = await report(b.key, {
      startDate: TWO_DAYS,
      machines: { include: [a.m1, a.m2] },
    });
    expect(page).toMatchObject({ totalCount: 0, metrics: [] });
    const own = await report(b.key, { startDate: TWO_DAYS });
    expect(own.totalCount).toBe(0);
  });

  it("needs reports.read, and a credential", async () => {
    const co = await createCompany();
    const key = await createKey(
      co.id,
      ALL_SCOPES.filter((s) => s !== "reports.read"),
    );
    const res = await api(key, "/v1/reports/metrics", { method: "POST", json: {} });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      detail: "Not enough permissions. Missing scope: reports.read",
    });
    const anonymous = await call("/v1/reports/metrics", { method: "POST" });
    expect(anonymous.status).toBe(401);
  });
});

describe("reports in the OpenAPI document", () => {
  it("documents both reports with their scope and body schemas", async () => {
    const doc = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { "x-required-scope"?: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    for (const path of ["/v1/reports/metrics", "/v1/reports/stops"]) {
      expect(doc.paths[path]?.post?.["x-required-scope"], path).toBe("reports.read");
    }
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "MetricsReportFilters",
        "StopsReportFilters",
        "MetricsReportRow",
        "StopsReportRow",
      ]),
    );
  });
});
