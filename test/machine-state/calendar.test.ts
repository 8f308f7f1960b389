/**
 * The plant calendar (docs/metrics.md, "The plant calendar"): a closed date has no planned
 * time, so a flat count signal makes no detected stop there, and the reports leave it out
 * (the KPI report keeps its day as calendar time); a closure written after the samples takes
 * the stop it covers away; a machine's closure closes that machine only.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { observedStore } from "../fixtures/observed-signal-store";
import { detectionPlant, HOUR, iso, MIN, series } from "../fixtures/plant";
import { api, createMachines, createSignal, ingest, operator, operatorJson } from "../harness";

const DAY = 24 * HOUR;
/** Monday 2025-04-07 00:00 UTC: day 1 of three. */
const D1 = Date.UTC(2025, 3, 7);
const date = (ms: number) => iso(ms).slice(0, 10);
/** Zeros every 5 minutes over the three days: the machine never makes a piece. */
const flat = series(D1, D1 + 3 * DAY, 5 * MIN, () => 0);
const window = { between: { start: iso(D1), end: iso(D1 + 3 * DAY) } };

async function post<T>(key: string, path: string, json: unknown): Promise<T> {
  const res = await api(key, path, { method: "POST", json });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

describe("a non-working day of the plant calendar", () => {
  it("has no planned time and no detected stop, even with the count signal flat", async () => {
    const plant = await detectionPlant();
    const [closure] = await operatorJson<{ id: string; start: string; end: string }[]>(
      "POST",
      `/companies/${plant.co.id}/closures`,
      [{ name: "Plant holiday", startDate: date(D1 + DAY) }],
    );
    expect(closure).toMatchObject({ start: iso(D1 + DAY), end: iso(D1 + 2 * DAY) });
    await plant.send(flat);

    // Days 1 and 3 are one detected stop each; day 2, between them, none.
    const stops = await plant.stops();
    expect(stops.map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(D1), iso(D1 + DAY)],
      [iso(D1 + 2 * DAY), iso(D1 + 3 * DAY)],
    ]);

    const machines = { include: [plant.machineId] };
    const metrics = await post<Api["MetricsReportPage"]>(plant.co.key, "/v1/reports/metrics", {
      machines,
      startDate: window,
      limit: 100,
    });
    expect(metrics.metrics.map((r) => r.shift.startTime)).toEqual([iso(D1), iso(D1 + 2 * DAY)]);

    const byDay = await post<Api["KpiReportPage"]>(plant.co.key, "/v1/reports/kpis", {
      machines,
      startDate: window,
      groupBy: ["day"],
    });
    const holiday = byDay.kpis.find((r) => r.day === date(D1 + DAY));
    expect(holiday).toMatchObject({
      instances: 0,
      minutes: { calendarTime: 1440, availableTime: 0, plannedTime: 0, nonProgrammedDowntime: 0 },
    });
    // The machine over the three days: the closed day only in calendar time.
    const week = await post<Api["KpiReportPage"]>(plant.co.key, "/v1/reports/kpis", {
      machines,
      startDate: window,
    });
    expect(week.kpis[0]).toMatchObject({
      instances: 2,
      minutes: { calendarTime: 3 * 1440, availableTime: 2 * 1440, nonProgrammedDowntime: 2 * 1440 },
    });
    const pareto = await post<{ downtime: { minutes: number }[] }>(
      plant.co.key,
      "/v1/reports/downtime",
      { machines },
    );
    expect(pareto.downtime.reduce((sum, g) => sum + g.minutes, 0)).toBe(2 * 1440);
  });

  it("written after the samples, takes away the detected stop it covers; deleted, gives it back", async () => {
    const plant = await detectionPlant();
    await plant.send(flat);
    // Planned time that follows itself is one stretch: three days down are one stop.
    expect((await plant.stops()).map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(D1), iso(D1 + 3 * DAY)],
    ]);

    const [closure] = await operatorJson<{ id: string }[]>(
      "POST",
      `/companies/${plant.co.id}/closures`,
      [{ name: "Shutdown", startDate: date(D1 + DAY), endDate: date(D1 + DAY) }],
    );
    await plant.settle();
    expect((await plant.stops()).map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(D1), iso(D1 + DAY)],
      [iso(D1 + 2 * DAY), iso(D1 + 3 * DAY)],
    ]);

    const res = await api(plant.co.key, "/v1/reports/metrics", {
      method: "POST",
      json: { machines: { include: [plant.machineId] }, startDate: window, limit: 100 },
    });
    expect(((await res.json()) as { totalCount: number }).totalCount).toBe(2);

    const deleted = await operator("DELETE", `/companies/${plant.co.id}/closures/${closure?.id}`);
    expect(deleted.status).toBe(204);
    await plant.settle();
    expect((await plant.stops()).map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(D1), iso(D1 + 3 * DAY)],
    ]);
  });

  it("given as two instants, closes the shifts that start inside it, and only those", async () => {
    const plant = await detectionPlant([
      { name: "Day", startTime: "06:00", endTime: "18:00" },
      { name: "Night", startTime: "18:00", endTime: "06:00" },
    ]);
    // The night of day 2 is not run: from its start to a minute after.
    const night = D1 + DAY + 18 * HOUR;
    const [closure] = await operatorJson<{ startDate: string | null; start: string }[]>(
      "POST",
      `/companies/${plant.co.id}/closures`,
      [{ name: "Night off", start: iso(night), end: iso(night + MIN) }],
    );
    expect(closure).toMatchObject({ startDate: null, start: iso(night) });
    await plant.send(flat);
    const metrics = await post<Api["MetricsReportPage"]>(plant.co.key, "/v1/reports/metrics", {
      machines: { include: [plant.machineId] },
      startDate: window,
      limit: 100,
    });
    const starts = metrics.metrics.map((r) => r.shift.startTime);
    expect(starts).toHaveLength(5);
    expect(starts).not.toContain(iso(night));
    // The stop that ran through it ends where the night begins, and starts again at 06:00.
    const stops = await plant.stops();
    expect(
      stops.some(
        (s) => Date.parse(s.startTime) < night + 12 * HOUR && Date.parse(s.endTime ?? "") > night,
      ),
    ).toBe(false);
    expect(stops.map((s) => s.endTime)).toContain(iso(night));
    expect(stops.map((s) => s.startTime)).toContain(iso(night + 12 * HOUR));
  });

  it("of one machine leaves the company's other machines working", async () => {
    const plant = await detectionPlant();
    const [other] = await createMachines(plant.co.id, [{ name: "Other press" }]);
    if (!other) throw new Error("no machine");
    const otherCount = await createSignal(other.id, { name: "count", kind: "counter" });
    await operatorJson("POST", `/companies/${plant.co.id}/closures`, [
      { name: "Retooling", startDate: date(D1 + DAY), machineId: plant.machineId },
    ]);
    await ingest(otherCount, flat);
    await plant.send(flat);
    await plant.settle();
    // Old samples wait for the burst's one evaluation (docs/machine-state.md): settle it.
    await observedStore(env, plant.co.id, other.id).settleDetection();

    const metrics = await post<Api["MetricsReportPage"]>(plant.co.key, "/v1/reports/metrics", {
      startDate: window,
      limit: 100,
    });
    const startsOf = (machineId: number) =>
      metrics.metrics.filter((r) => r.machine.id === machineId).map((r) => r.shift.startTime);
    expect(startsOf(plant.machineId)).toEqual([iso(D1), iso(D1 + 2 * DAY)]);
    expect(startsOf(other.id)).toEqual([iso(D1), iso(D1 + DAY), iso(D1 + 2 * DAY)]);

    const listed = await operatorJson<{ machineId: number | null }[]>(
      "GET",
      `/companies/${plant.co.id}/closures?machine_id=${other.id}`,
    );
    expect(listed).toEqual([]);
  });

  it("of one company changes nothing of another's", async () => {
    const closed = await detectionPlant();
    const open = await detectionPlant();
    await operatorJson("POST", `/companies/${closed.co.id}/closures`, [
      { name: "Holiday", startDate: date(D1 + DAY) },
    ]);
    await closed.send(flat);
    await open.send(flat);
    expect(await open.stops()).toHaveLength(1);
    expect(await closed.stops()).toHaveLength(2);
    const metrics = await post<{ totalCount: number }>(open.co.key, "/v1/reports/metrics", {
      startDate: window,
    });
    expect(metrics.totalCount).toBe(3);
  });
});
