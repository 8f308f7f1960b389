/**
 * CSV cells that a spreadsheet would run as formulas (OWASP "CSV injection"): every CSV the
 * API writes goes through one writer (`csvRecords`, src/http/csv.ts) that neutralises a text
 * cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return with a leading `'`
 * (csv-stringify's `escape_formulas`), and leaves numbers as numbers (`-2.5` is a number, not
 * a formula). Read back with a standard CSV parser (csv-parse), as a user's program would.
 */
import { parse } from "csv-parse/browser/esm/sync";
import { describe, expect, it } from "vitest";
import { csvRecords } from "../../src/http/csv";
import { inServiceSince } from "../fixtures/machine-history";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operatorJson,
  type TestCompany,
} from "../harness";

const HOSTILE = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(1)", "\tTAB", "\rCR"];

async function csvOf(co: TestCompany, path: string, body?: unknown): Promise<string[][]> {
  const res = await api(co.key, path, {
    method: body === undefined ? "GET" : "POST",
    headers: { accept: "text/csv" },
    ...(body === undefined ? {} : { json: body }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return parse(text) as string[][];
}

describe("the CSV writer", () => {
  it("writes formula-like text with a leading quote, and numbers as numbers", () => {
    const text = csvRecords([
      ["text", "number", "empty"],
      ...HOSTILE.map((cell) => [cell, -2.5, null]),
      ["plain", 0, undefined],
      ["-", Number.NaN, true],
    ]);
    const [header, ...rows] = parse(text) as string[][];
    expect(header).toEqual(["text", "number", "empty"]);
    expect(rows.map((r) => r[0])).toEqual([...HOSTILE.map((cell) => `'${cell}`), "plain", "'-"]);
    // A negative number is written as a number; a spreadsheet reads it as one.
    expect(rows.map((r) => r[1])).toEqual([...HOSTILE.map(() => "-2.5"), "0", ""]);
    expect(rows.map((r) => r[2])).toEqual([...HOSTILE.map(() => ""), "", "true"]);
    const typed = parse(text, { cast: true, from_line: 2 }) as unknown[][];
    expect(typed[0]?.[1]).toBe(-2.5);
  });
});

describe("every CSV the API writes", () => {
  it("neutralises formulas in names that reach the reports and keeps negative samples numbers", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [
      { name: '=HYPERLINK("http://x","y")', uuid: crypto.randomUUID() },
    ]);
    if (!m) throw new Error("no machine");
    await inServiceSince(co.id, [m.id]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "@SUM(1)", startTime: "06:00", endTime: "14:00" },
    ]);
    const skus = await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "+1+1" }] });
    const [sku] = (await skus.json()) as { id: string }[];
    const log = await api(co.key, "/v1/production-logs", {
      method: "POST",
      json: [
        {
          machine: { id: m.id },
          sku: { id: sku?.id },
          start: "2026-03-02T07:00:00Z",
          end: "2026-03-02T08:00:00Z",
          count: 60,
          nominalSpeed: 1,
        },
      ],
    });
    expect(log.status, await log.clone().text()).toBe(200);
    const window = {
      startDate: { between: { start: "2026-03-02T00:00:00Z", end: "2026-03-03T00:00:00Z" } },
    };

    const kpis = await csvOf(co, "/v1/reports/kpis", {
      ...window,
      groupBy: ["machine", "shift", "sku"],
    });
    const [kpiHeader, kpiRow] = kpis;
    const at = (column: string) => kpiRow?.[kpiHeader?.indexOf(column) ?? -1];
    expect(at("machine.name")).toBe(`'=HYPERLINK("http://x","y")`);
    expect(at("shift")).toBe("'@SUM(1)");
    expect(at("sku.name")).toBe("'+1+1");
    expect(at("counts.total")).toBe("60");

    const metrics = await csvOf(co, "/v1/reports/metrics", window);
    const [metricsHeader, metricsRow] = metrics;
    expect(metricsRow?.[metricsHeader?.indexOf("machine.name") ?? -1]).toBe(
      `'=HYPERLINK("http://x","y")`,
    );
    expect(metricsRow?.[metricsHeader?.indexOf("shift.name") ?? -1]).toBe("'@SUM(1)");

    // Signal data: a temperature below zero is a number, written as one.
    const publicId = await createSignal(m.id, { name: "temperature" });
    const t0 = Date.parse("2026-03-02T00:00:00Z");
    await ingest(publicId, [
      [t0, -2.5],
      [t0 + 3_600_000, -12],
    ]);
    const points = await csvOf(
      co,
      `/v1/machines/${m.uuid}/signals/${publicId}?start_time=2026-03-02T00:00:00Z&end_time=2026-03-02T02:00:00Z&agg_unit=h`,
    );
    expect(points.slice(1).map((r) => r[1])).toEqual(["-2.5", "-12"]);
  });
});
