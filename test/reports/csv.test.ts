/**
 * CSV answers (`Accept: text/csv`): parsed with a standard parser (csv-parse) and compared
 * field by field with the JSON answers, every page of them.
 */
import { parse } from "csv-parse/browser/esm/sync";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { CSV_MAX_ROWS, checkCsvSize, wantsCsv } from "../../src/http/csv";
import { ApiError } from "../../src/http/errors";
import { IN_SERVICE_SINCE } from "../fixtures/machine-history";
import { plant as buildPlant } from "../fixtures/plant";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operatorJson,
  type TestCompany,
} from "../harness";

const CSV = { accept: "text/csv" };

async function csv(co: TestCompany, path: string, body?: unknown) {
  const res = await api(co.key, path, {
    method: body === undefined ? "GET" : "POST",
    headers: CSV,
    ...(body === undefined ? {} : { json: body }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/csv; charset=utf-8/);
  expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="[^"]+\.csv"$/);
  expect(text.endsWith("\r\n")).toBe(true);
  const [header, ...rows] = parse(text) as string[][];
  return { text, header: header ?? [], rows };
}

async function allJson<T>(co: TestCompany, path: string, list: string, body: object): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page += 1) {
    const res = await api(co.key, path, { method: "POST", json: { ...body, page, limit: 3 } });
    const p = (await res.json()) as { totalPages: number } & Record<string, T[]>;
    out.push(...(p[list] ?? []));
    if (page >= p.totalPages) return out;
  }
}

/** The JSON value under a dotted column, as its CSV cell reads. */
function cellOf(row: unknown, column: string): string {
  let v: unknown = row;
  for (const step of column.split(".")) {
    v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[step] : undefined;
  }
  return v === null || v === undefined ? "" : String(v);
}

function expectSame(header: string[], rows: string[][], json: unknown[]) {
  expect(rows).toHaveLength(json.length);
  json.forEach((row, i) => {
    header.forEach((column, j) => {
      expect(rows[i]?.[j], `row ${i} ${column}`).toBe(cellOf(row, column));
      if (/(Time|Downtime|oee|availability|quality|effectiveness)$/i.test(column)) {
        // Numbers come back exactly (shortest round-trip digits).
        expect(Number(rows[i]?.[j])).toBe(Number(cellOf(row, column)));
      }
    });
  });
}

async function plant() {
  const { co, machines } = await buildPlant(2, {
    timezone: "Europe/Rome",
    machineNames: ['Press "A", east', "Lathe"],
    inServiceSince: IN_SERVICE_SINCE,
    shifts: [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Night", startTime: "22:00", endTime: "06:00" },
    ],
    signals: [],
    catalog: false,
  });
  const [m1, m2] = machines;
  if (!m1 || !m2) throw new Error("no machines");
  const [sku] = (await (
    await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "CSV-1" }] })
  ).json()) as { id: string }[];
  const logs = [];
  for (const day of ["02", "03", "04"]) {
    logs.push({
      machine: { id: m1?.id },
      sku: { id: sku?.id },
      start: `2026-03-${day}T07:00:00+01:00`,
      end: `2026-03-${day}T12:00:00+01:00`,
      count: 2000,
      nominalSpeed: 7,
    });
  }
  await api(co.key, "/v1/production-logs", { method: "POST", json: logs });
  const [s1] = await operatorJson<{ id: number }[]>("POST", `/machines/${m1?.id}/stops`, [
    {
      startTime: "2026-03-02T08:00:00+01:00",
      endTime: "2026-03-02T08:20:00+01:00",
      isProgrammed: false,
    },
    {
      startTime: "2026-03-03T09:00:00+01:00",
      endTime: "2026-03-03T09:05:00+01:00",
      isProgrammed: true,
    },
  ]);
  await operatorJson("PUT", `/stops/${s1?.id}/classification`, {
    description: 'Jam,\n"quoted"',
    generalCause: { name: "Jam" },
  });
  return { co, m1, m2 };
}

const WINDOW = {
  startDate: { between: { start: "2026-03-01T00:00:00Z", end: "2026-03-05T00:00:00Z" } },
};

describe("Accept: text/csv", () => {
  it("gives every metrics row (not one page) with dotted columns, equal to the JSON", async () => {
    const { co } = await plant();
    const json = await allJson(co, "/v1/reports/metrics", "metrics", WINDOW);
    expect(json.length).toBe(4 * 2 * 2);
    const { header, rows } = await csv(co, "/v1/reports/metrics", { ...WINDOW, limit: 3 });
    expect(header.slice(0, 5)).toEqual([
      "company.id",
      "company.name",
      "machine.id",
      "machine.name",
      "shift.id",
    ]);
    expect(header).toContain("productionMetrics.oee");
    expect(header).toContain("shiftIndicators.availableTime");
    expectSame(header, rows, json);
  });

  it("gives the stops report with empty cells for nulls and quoted text", async () => {
    const { co } = await plant();
    const json = await allJson(co, "/v1/reports/stops", "stops", WINDOW);
    const { header, rows, text } = await csv(co, "/v1/reports/stops", WINDOW);
    expect(header).toContain("classification.generalCause.name");
    expect(header).toContain("stop.durationInMinutes");
    expect(text).toContain('"Jam,\n""quoted"""');
    expectSame(header, rows, json);
    const unclassified = rows[1] ?? [];
    expect(unclassified[header.indexOf("classification.generalCause.id")]).toBe("");
  });

  it("gives the downtime and KPI groups with the groupBy keys as columns", async () => {
    const { co } = await plant();
    const body = { ...WINDOW, groupBy: ["machine", "generalCause"] };
    const down = await csv(co, "/v1/reports/downtime", body);
    expect(down.header).toEqual([
      "generalCause.id",
      "generalCause.name",
      "machine.id",
      "machine.name",
      "stops",
      "minutes",
      "share",
      "cumulativeShare",
    ]);
    expectSame(down.header, down.rows, await allJson(co, "/v1/reports/downtime", "downtime", body));
    const kpiBody = { ...WINDOW, groupBy: ["day", "sku"] };
    const kpis = await csv(co, "/v1/reports/kpis", kpiBody);
    expect(kpis.header.slice(0, 4)).toEqual(["day", "sku.id", "sku.name", "instances"]);
    expect(kpis.header).toContain("minutes.runTime");
    expect(kpis.header).toContain("counts.good");
    expect(kpis.header).not.toContain("machine.id");
    expectSame(kpis.header, kpis.rows, await allJson(co, "/v1/reports/kpis", "kpis", kpiBody));
  });

  it("gives signal data as timestamp,value", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "M", uuid: crypto.randomUUID() }]);
    const publicId = await createSignal(m?.id ?? 0, { name: "power" });
    const t0 = Date.parse("2026-03-02T00:00:00Z");
    await ingest(publicId, [
      [t0, 1.5],
      [t0 + 3_600_000, 2.25],
    ]);
    const path = `/v1/machines/${m?.uuid}/signals/${publicId}?start_time=2026-03-02T00:00:00Z&end_time=2026-03-03T00:00:00Z&agg_unit=h`;
    const { header, rows } = await csv(co, path);
    const json = (await (await api(co.key, path)).json()) as { data: unknown[] };
    expect(header).toEqual(["timestamp", "value"]);
    expectSame(header, rows, json.data);
  });

  it("answers JSON unless CSV is preferred, and refuses a CSV above the maximum", async () => {
    const negotiated = new Hono().get("/", (c) => c.text(wantsCsv(c) ? "csv" : "json"));
    const answer = async (accept?: string) =>
      (await negotiated.request("/", { headers: accept ? { accept } : {} })).text();
    expect(await answer()).toBe("json");
    expect(await answer("application/json")).toBe("json");
    expect(await answer("*/*")).toBe("json");
    expect(await answer("text/csv")).toBe("csv");
    expect(await answer("text/*")).toBe("csv");
    expect(await answer("text/csv, application/json;q=0.5")).toBe("csv");
    expect(await answer("application/json, text/csv;q=0.9")).toBe("json");
    expect(await answer("*/*;q=0.1, text/csv")).toBe("csv");
    expect(await answer("text/csv;q=0")).toBe("json");
    // Equal quality: the type listed first.
    expect(await answer("text/csv, application/json")).toBe("csv");
    expect(await answer("application/json, text/csv")).toBe("json");
    expect(() => checkCsvSize(CSV_MAX_ROWS)).not.toThrow();
    try {
      checkCsvSize(CSV_MAX_ROWS + 1);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(422);
      expect((error as ApiError).detail).toEqual([
        expect.objectContaining({ loc: ["header", "accept"], type: "csv_too_many_rows" }),
      ]);
    }
    const co = await createCompany();
    const res = await api(co.key, "/v1/reports/kpis", {
      method: "POST",
      json: {},
      headers: { accept: "application/json, text/csv;q=0.5" },
    });
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
});
