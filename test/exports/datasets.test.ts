/**
 * Every dataset exported as Parquet and as CSV, read back with DuckDB and compared with its
 * JSON endpoint row for row: same rows, same order, same values (instants to the
 * millisecond, doubles to the last bit), with Parquet's typed columns (timestamps, BIGINT,
 * DOUBLE, BOOLEAN) where the JSON has instants, integers, numbers and booleans.
 */
import { describe, expect, it } from "vitest";
import { finishExport, type ReadBack, readExport, startExport } from "../fixtures/export-harness";
import { ROME_WEEK, rome, romePlant } from "../fixtures/rome-plant";
import {
  api,
  apiPost,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operatorJson,
  type TestCompany,
} from "../harness";

const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Every row of a paged endpoint, page after page (100 a page), as a client reads them. */
async function allPages(key: string, path: string, listKey: string, body: object) {
  const rows: unknown[] = [];
  for (let page = 1; ; page += 1) {
    const answer = await apiPost<Record<string, unknown> & { totalPages: number }>(key, path, {
      ...body,
      page,
      limit: 100,
    });
    rows.push(...(answer[listKey] as unknown[]));
    if (page >= answer.totalPages) return rows;
  }
}

/** The value at a dotted column name in a JSON row (undefined past a null). */
function at(row: unknown, column: string): unknown {
  let v: unknown = row;
  for (const step of column.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}

/**
 * Asserts that a file read back equals the JSON rows: one column per dotted leaf of the
 * rows, each value as the JSON has it, in the format's terms.
 *
 * @returns the DuckDB type of each column, by name.
 */
function expectSameRows(
  back: ReadBack,
  json: readonly unknown[],
  format: "parquet" | "csv",
): Record<string, string> {
  expect(back.rows.length).toBe(json.length);
  expect(json.length).toBeGreaterThan(0);
  const types = Object.fromEntries(back.columns.map((c) => [c.name, c.type]));
  back.rows.forEach((fileRow, i) => {
    back.columns.forEach((column, j) => {
      const expected = at(json[i], column.name);
      const actual = fileRow[j];
      const where = `row ${i} ${column.name} (${column.type})`;
      if (expected === null || expected === undefined) {
        expect(actual, where).toBeNull();
      } else if (format === "csv") {
        expect(actual, where).toBe(String(expected));
      } else if (column.type === "TIMESTAMP WITH TIME ZONE") {
        expect(typeof expected === "string" && ISO_INSTANT.test(expected), where).toBe(true);
        expect(Number(actual), where).toBe(Date.parse(expected as string));
      } else if (column.type === "BIGINT") {
        expect(Number.isInteger(expected), where).toBe(true);
        expect(actual, where).toBe(String(expected));
      } else {
        expect(actual, where).toBe(expected);
      }
    });
  });
  if (format === "parquet") {
    // Every instant of the JSON is a timestamp column, never text.
    for (const column of back.columns) {
      const sample = json.map((r) => at(r, column.name)).find((v) => v !== null && v !== undefined);
      if (typeof sample === "string" && ISO_INSTANT.test(sample)) {
        expect(column.type, column.name).toBe("TIMESTAMP WITH TIME ZONE");
      }
    }
  }
  return types;
}

/** Exports a dataset in both formats and compares each with the JSON rows. */
async function expectExportEqualsJson(
  co: TestCompany,
  request: { dataset: string; filters?: unknown },
  json: readonly unknown[],
): Promise<Record<string, string>> {
  let parquetTypes: Record<string, string> = {};
  for (const format of ["parquet", "csv"] as const) {
    const started = await startExport(co.key, { ...request, format });
    expect(started.state).toBe("queued");
    const done = await finishExport(co.key, co.id, started.id);
    expect(done.state, done.error ?? "").toBe("succeeded");
    expect(done.progress).toBe(1);
    expect(done.rows).toBe(json.length);
    expect(done.files.reduce((n, f) => n + f.rows, 0)).toBe(json.length);
    const back = await readExport(co.key, done);
    const types = expectSameRows(back, json, format);
    if (format === "parquet") parquetTypes = types;
  }
  return parquetTypes;
}

/**
 * The Rome plant with names a CSV must quote or escape (a comma, quotes, a leading "=") and
 * a nominal speed with no exact binary form; its first jam classified, and a stop of the
 * filler on 8 March.
 */
async function plant() {
  const plant = await romePlant({
    nominalSpeed: 10.3,
    fillerName: 'Filler "2", =line',
    skuXName: "Cap, blue",
  });
  await operatorJson("PUT", `/stops/${plant.capperStops[0]}/classification`, {
    description: "Belt jam",
    component: { name: "Feeder" },
    specificCause: { name: "Jammed belt" },
    generalCause: { name: "Mechanical" },
  });
  await operatorJson("POST", `/machines/${plant.filler}/stops`, [
    { startTime: rome("08", "09:00"), endTime: rome("08", "09:20"), isProgrammed: false },
  ]);
  return plant;
}

describe("exports equal their JSON endpoints, row for row", () => {
  it("production logs: the search's rows, expanded, in its order", async () => {
    const { co, capper } = await plant();
    const filters = { machines: { include: [capper] } };
    const json = await allPages(co.key, "/v1/production-logs/filters", "productionLogs", filters);
    expect(json).toHaveLength(5);
    const types = await expectExportEqualsJson(co, { dataset: "production_logs", filters }, json);
    expect(types).toMatchObject({
      id: "VARCHAR",
      start: "TIMESTAMP WITH TIME ZONE",
      count: "BIGINT",
      nominalSpeed: "DOUBLE",
      isReviewed: "BOOLEAN",
      "machine.name": "VARCHAR",
      "shift.start": "TIMESTAMP WITH TIME ZONE",
      "operator.firstName": "VARCHAR",
    });
  });

  it("stops: the stops report's rows, classification and shift included", async () => {
    const { co } = await plant();
    const json = await allPages(co.key, "/v1/reports/stops", "stops", {});
    expect(json).toHaveLength(4);
    const types = await expectExportEqualsJson(co, { dataset: "stops" }, json);
    expect(types).toMatchObject({
      "classification.component.name": "VARCHAR",
      "stop.id": "BIGINT",
      "stop.startTime": "TIMESTAMP WITH TIME ZONE",
      "stop.durationInMinutes": "DOUBLE",
      "stop.isProgrammed": "BOOLEAN",
    });
  });

  it("metrics: the metrics report's rows over a window", async () => {
    const { co } = await plant();
    const json = await allPages(co.key, "/v1/reports/metrics", "metrics", ROME_WEEK);
    expect(json).toHaveLength(8 * 2 * 2);
    const types = await expectExportEqualsJson(
      co,
      { dataset: "metrics", filters: ROME_WEEK },
      json,
    );
    expect(types).toMatchObject({
      "shift.startTime": "TIMESTAMP WITH TIME ZONE",
      "shiftIndicators.indicatorId": "BIGINT",
      "productionMetrics.oee": "DOUBLE",
      "shift.isActive": "BOOLEAN",
    });
  });

  it("metrics: five months, more than one page of the report", async () => {
    const { co } = await plant();
    const filters = {
      machines: { search: "er" },
      startDate: { between: { start: "2026-01-01T00:00:00Z", end: "2026-05-30T23:59:59Z" } },
    };
    const json = await allPages(co.key, "/v1/reports/metrics", "metrics", filters);
    expect(json.length).toBeGreaterThan(500);
    await expectExportEqualsJson(co, { dataset: "metrics", filters }, json);
  });

  it("kpis: the KPI report's groups, with the columns of its groupBy", async () => {
    const { co } = await plant();
    const filters = { ...ROME_WEEK, groupBy: ["machine", "day", "sku"] };
    const json = await allPages(co.key, "/v1/reports/kpis", "kpis", filters);
    expect(json.length).toBeGreaterThan(8);
    const types = await expectExportEqualsJson(co, { dataset: "kpis", filters }, json);
    expect(Object.keys(types)).toEqual(
      expect.arrayContaining(["machine.id", "day", "sku.id", "sku.name", "oee", "minutes.runTime"]),
    );
    expect(Object.keys(types)).not.toContain("operator.id");
  });

  it("signals: a window longer than the endpoint's allows equals its windows put together", async () => {
    const co = await createCompany();
    const uuid = crypto.randomUUID();
    const [machine] = await createMachines(co.id, [{ name: "Press", uuid }]);
    const power = await createSignal(machine?.id ?? 0, { name: "power" });
    const count = await createSignal(machine?.id ?? 0, { name: "count" });
    const t0 = Date.UTC(2026, 0, 5);
    const DAY = 86_400_000;
    // power: a sample a minute for two days at each end of a 20-day window, full-precision
    // values; count: a sample a second for two hours on the second day.
    const minutes = (offsetDays: number, f: (i: number) => number) =>
      Array.from(
        { length: 2 * 1440 },
        (_, i) => [t0 + offsetDays * DAY + i * 60_000, f(i)] as const,
      );
    await ingest(power, [
      ...minutes(0, (i) => Math.sin(i / 7) * 31.7),
      ...minutes(17, (i) => i / 3),
    ]);
    await ingest(
      count,
      Array.from({ length: 7200 }, (_, i) => [t0 + DAY + 3_600_000 + i * 1000, i % 5] as const),
    );
    const variants = [
      // The endpoint's default (1 s buckets), and its windows of at most 10,000 points.
      { agg: {}, from: t0 + DAY, to: t0 + DAY + 4 * 3_600_000, step: 9_000_000 },
      { agg: { agg_unit: "m" }, from: t0, to: t0 + 20 * DAY, step: 5 * DAY },
      {
        agg: { agg_unit: "m", agg_period: 15, agg_function: "max" },
        from: t0,
        to: t0 + 20 * DAY,
        step: 14 * DAY,
      },
    ];
    for (const { agg, from, to, step } of variants) {
      // The JSON: each signal (in the signal list's order: by name) over consecutive
      // windows, each point with the answer's head fields.
      const json: unknown[] = [];
      for (const publicId of [count, power]) {
        for (let a = from; a < to; a += step) {
          const query = new URLSearchParams({
            start_time: new Date(a).toISOString(),
            end_time: new Date(Math.min(to, a + step)).toISOString(),
            ...Object.fromEntries(Object.entries(agg).map(([k, v]) => [k, String(v)])),
          });
          const res = await api(co.key, `/v1/machines/${uuid}/signals/${publicId}?${query}`);
          expect(res.status, await res.clone().text()).toBe(200);
          const body = (await res.json()) as {
            machine_uuid: string;
            public_id: string;
            name: string;
            data: { timestamp: string; value: number }[];
          };
          for (const point of body.data) {
            json.push({
              machine_uuid: body.machine_uuid,
              public_id: body.public_id,
              name: body.name,
              ...point,
            });
          }
        }
      }
      const window = {
        start_time: new Date(from).toISOString(),
        end_time: new Date(to).toISOString(),
      };
      const types = await expectExportEqualsJson(
        co,
        { dataset: "signals", filters: { machines: [uuid], ...window, ...agg } },
        json,
      );
      expect(types).toEqual({
        machine_uuid: "VARCHAR",
        public_id: "VARCHAR",
        name: "VARCHAR",
        timestamp: "TIMESTAMP WITH TIME ZONE",
        value: "DOUBLE",
      });
    }
  });
});
