/**
 * The logs a metrics-report page reads (src/reports/page-spans.ts) travel as
 * packed JSON texts: the report must still see every log exactly as stored
 * (nominal speeds to the last bit, logs in every slice of the span, logs that
 * start before the span), and the read must go by the (machine, start) index.
 */
import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { computeProductionMetrics } from "../../src/reports/oee";
import { packedLogsQuery, SLICE_MS } from "../../src/reports/packed-logs";
import { computeShiftIndicators } from "../../src/reports/shift-time";
import { insertProductionLogs } from "../fixtures/production-logs";
import { api, createCompany, createMachines, operatorJson } from "../harness";

const MIN = 60_000;
const HOUR = 60 * MIN;
const SHIFT_START = Date.parse("2026-03-02T06:00:00Z");
const SHIFT_END = SHIFT_START + 8 * HOUR;

interface Row {
  shiftIndicators: Record<string, number>;
  productionMetrics: Record<string, number>;
}

async function morningRow(key: string, machineId: number): Promise<Row> {
  const res = await api(key, "/v1/reports/metrics", {
    method: "POST",
    json: {
      machines: { include: [machineId] },
      startDate: { equal: new Date(SHIFT_START).toISOString() },
    },
  });
  expect(res.status).toBe(200);
  const page = (await res.json()) as { metrics: Row[] };
  expect(page.metrics).toHaveLength(1);
  return page.metrics[0] as Row;
}

describe("the packed log read of a metrics-report page", () => {
  it("gives the same figures, to the last bit, as the logs computed in code", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Packed" }]);
    if (!m) throw new Error("no machine");
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
    ]);
    // Nominal speeds whose shortest decimal needs 16 or 17 digits (SQLite's JSON
    // writes 15), a log starting 3 h before the shift and reaching into it, logs
    // in several slices of the span and one ending exactly where a slice ends.
    const logs = [
      { start: SHIFT_START - 3 * HOUR, end: SHIFT_START + 10 * MIN, count: 7, nominalSpeed: 1 / 3 },
      {
        start: SHIFT_START + 20 * MIN,
        end: SHIFT_START + SLICE_MS,
        count: 1001,
        nominalSpeed: 0.1 + 0.2,
      },
      ...Array.from({ length: 40 }, (_, i) => ({
        start: SHIFT_START + SLICE_MS + i * 11 * MIN,
        end: SHIFT_START + SLICE_MS + i * 11 * MIN + 9 * MIN,
        count: 100 + i,
        nominalSpeed: 7 / 3 + i,
        type: i % 5 === 4 ? ("defects" as const) : ("total" as const),
      })),
    ].map((l) => ({ machineId: m.id, type: "total" as const, ...l }));
    await insertProductionLogs(co.id, logs);

    const row = await morningRow(co.key, m.id);
    const window = { start: SHIFT_START, end: SHIFT_END };
    const indicators = computeShiftIndicators(window, [], logs, Date.now());
    const own = logs.filter((l) => l.start >= SHIFT_START && l.start < SHIFT_END);
    const { indicatorId, ...shiftIndicators } = row.shiftIndicators;
    expect(indicatorId).toBeTypeOf("number");
    expect(shiftIndicators).toEqual(indicators);
    expect(row.productionMetrics).toEqual(computeProductionMetrics(indicators, own));
  });

  it("reads a machine's logs by (machine, start), from the span start less its longest log", async () => {
    const db = createDb(env.DB);
    const windows: [number, number | null, number][] = [
      [1, null, 100],
      [1, 100, 200],
    ];
    const rows = await db.all<{ detail: string }>(
      sql`EXPLAIN QUERY PLAN ${packedLogsQuery(1, 100, windows)}`,
    );
    const plan = rows.map((r) => r.detail).join("\n");
    expect(plan).toContain("USING INDEX production_logs_machine_start_idx");
    expect(plan).toMatch(/USING (COVERING )?INDEX production_logs_machine_duration_idx\b/);
    expect(plan).not.toMatch(/SCAN (l|production_logs)\b/);
  });
});
