/**
 * Every time window of the API is half-open, `[start, end)` (docs/api-guide.md, "Time
 * windows"): a one-day `between` returns that day's records only, never the shift, stop or
 * log that starts at the next midnight. Checked at midnight boundaries on every endpoint
 * that takes a date filter: the metrics, KPI, stops and downtime reports, the production-log
 * search, its pull sync, and the MCP tools that run them.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { connect } from "../fixtures/mcp-client";
import { ALL_DAY, type Plant, plant } from "../fixtures/plant";
import { api, operatorJson, type TestCompany } from "../harness";

const DAY_1 = "2026-03-02T00:00:00Z";
const DAY_2 = "2026-03-03T00:00:00Z";
const DAY_3 = "2026-03-04T00:00:00Z";
/** The window of 2 March 2026 (UTC). */
const ONE_DAY = { between: { start: DAY_1, end: DAY_2 } };

let p: Plant;
let machineId: number;

async function post<T>(co: TestCompany, path: string, json: unknown): Promise<T> {
  const res = await api(co.key, path, { method: "POST", json });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

beforeAll(async () => {
  // UTC, a 24-hour shift from every midnight: instances start at DAY_1, DAY_2, DAY_3.
  p = await plant(1, { timezone: "UTC", shifts: ALL_DAY });
  const m = p.machines[0];
  if (!m) throw new Error("no machine");
  machineId = m.id;
  // A stop and a log at each midnight, one hour long.
  const hourAfter = (iso: string) => new Date(Date.parse(iso) + 3_600_000).toISOString();
  await operatorJson(
    "POST",
    `/machines/${machineId}/stops`,
    [DAY_1, DAY_2, DAY_3].map((at) => ({
      startTime: at,
      endTime: hourAfter(at),
      isProgrammed: false,
    })),
  );
  await post(
    p.co,
    "/v1/production-logs",
    [DAY_1, DAY_2, DAY_3].map((at) => ({
      start: at,
      end: hourAfter(at),
      count: 900,
      machine: { id: machineId },
      sku: { id: p.b.id },
    })),
  );
});

describe("half-open windows [start, end)", () => {
  it("metrics report: one day's between is that day's instance only", async () => {
    const page = await post<{ metrics: { shift: { startTime: string } }[] }>(
      p.co,
      "/v1/reports/metrics",
      { startDate: ONE_DAY },
    );
    expect(page.metrics.map((r) => r.shift.startTime)).toEqual(["2026-03-02T00:00:00.000Z"]);
    // On the instance's end: the instance that ends at DAY_2 is the one of DAY_1.
    const byEnd = await post<{ metrics: { shift: { startTime: string } }[] }>(
      p.co,
      "/v1/reports/metrics",
      {
        startDate: { between: { start: DAY_1, end: DAY_3 } },
        endDate: { between: { start: DAY_2, end: DAY_3 } },
      },
    );
    expect(byEnd.metrics.map((r) => r.shift.startTime)).toEqual(["2026-03-02T00:00:00.000Z"]);
  });

  it("KPI report: one day's between groups that day's instance only", async () => {
    const page = await post<{
      kpis: { day: string; instances: number; counts: { total: number } }[];
    }>(p.co, "/v1/reports/kpis", { startDate: ONE_DAY, groupBy: ["day"] });
    expect(page.kpis.map((r) => [r.day, r.instances, r.counts.total])).toEqual([
      ["2026-03-02", 1, 900],
    ]);
  });

  it("stops and downtime reports: the stop at the next midnight is out", async () => {
    const stops = await post<{ stops: { stop: { startTime: string } }[] }>(
      p.co,
      "/v1/reports/stops",
      { startDate: ONE_DAY },
    );
    expect(stops.stops.map((r) => r.stop.startTime)).toEqual(["2026-03-02T00:00:00.000Z"]);
    // On the stop's end: the stop that ends at 01:00 of DAY_2 is in [DAY_2, DAY_2 + 1 h].
    const byEnd = await post<{ stops: { stop: { startTime: string } }[] }>(
      p.co,
      "/v1/reports/stops",
      { endDate: { between: { start: "2026-03-02T01:00:00Z", end: "2026-03-03T01:00:00Z" } } },
    );
    expect(byEnd.stops.map((r) => r.stop.startTime)).toEqual(["2026-03-02T00:00:00.000Z"]);
    const downtime = await post<{ downtime: { stops: number; minutes: number }[] }>(
      p.co,
      "/v1/reports/downtime",
      { startDate: ONE_DAY, groupBy: ["machine"] },
    );
    expect(downtime.downtime.map((r) => [r.stops, r.minutes])).toEqual([[1, 60]]);
  });

  it("production-log search and its pull sync: the log at the next midnight is out", async () => {
    const page = await post<{ productionLogs: { start: string; updatedAt: string }[] }>(
      p.co,
      "/v1/production-logs/filters",
      { start: ONE_DAY },
    );
    expect(page.productionLogs.map((l) => l.start)).toEqual(["2026-03-02T00:00:00.000Z"]);
    // updatedAt: the window ending at the logs' own instant leaves them out.
    const stamp = page.productionLogs[0]?.updatedAt ?? "";
    const before = await post<{ productionLogs: unknown[] }>(p.co, "/v1/production-logs/filters", {
      updatedAt: { between: { start: "2026-01-01T00:00:00Z", end: stamp } },
    });
    expect(before.productionLogs).toEqual([]);
    const from = await post<{ productionLogs: unknown[] }>(p.co, "/v1/production-logs/filters", {
      updatedAt: { between: { start: stamp, end: "2100-01-01T00:00:00Z" } },
    });
    expect(from.productionLogs.length).toBeGreaterThan(0);
  });

  it("MCP tools take the same windows", async () => {
    const client = await connect({ "x-api-key": p.co.key }, "2026-07-28");
    const answer = (await client.callTool({
      name: "metrics_report",
      arguments: { startDate: ONE_DAY },
    })) as { structuredContent?: { metrics: { shift: { startTime: string } }[] } };
    expect(answer.structuredContent?.metrics.map((r) => r.shift.startTime)).toEqual([
      "2026-03-02T00:00:00.000Z",
    ]);
    const stops = (await client.callTool({
      name: "stops_report",
      arguments: { startDate: ONE_DAY },
    })) as { structuredContent?: { stops: unknown[] } };
    expect(stops.structuredContent?.stops).toHaveLength(1);
    await client.close();
  });

  it("refuses an empty window: end must be after start", async () => {
    const res = await api(p.co.key, "/v1/reports/metrics", {
      method: "POST",
      json: { startDate: { between: { start: DAY_1, end: DAY_1 } } },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(body.detail[0]?.loc).toEqual(["body", "startDate", "between", "end"]);
    expect(body.detail[0]?.msg).toContain("[start, end)");
  });
});
