/**
 * Every CSV stays a table (RFC 4180: a field holding a CR or an LF is quoted): a text with a
 * bare line break, however it ends, is one cell of one row when a CSV parser reads it back,
 * in the CSV answers (`Accept: text/csv`) and in the export files. What a user checks: the
 * row count equals the JSON's, and the cell reads back as it was written. csv-parse reads
 * the answers; DuckDB (test/node/duckdb-bridge.ts) reads the export files, as a data team's
 * tools would.
 */
import { parse } from "csv-parse/browser/esm/sync";
import { describe, expect, it } from "vitest";
import { csvRecords } from "../../src/http/csv";
import { CsvColumnWriter, type CsvKind } from "../../src/http/csv-column-writer";
import { isoInstant } from "../../src/http/instants";
import { download, finishExport, readExport, startExport } from "../fixtures/export-harness";
import {
  api,
  apiPost,
  createCompany,
  createMachines,
  operatorJson,
  type TestCompany,
} from "../harness";

/** A reason typed at the scanner: a line break, then a line that is a formula. */
const REASON = "belt jam\n=cmd|' /C calc'!A0";
/** A bare carriage return, a CRLF inside a cell, and a line break that begins a cell. */
const BREAKS = [REASON, "line 1\rline 2", "a\r\nb", "\n=1+1", "\r\n@SUM(A1)"];
/** A text that is a formula from its first character: written with a leading `'`. */
const FORMULA = "=cmd|' /C calc'!A0\nbelt jam";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * CSV text as a spreadsheet reads it: a CR, an LF or a CRLF outside quotes ends a record
 * (csv-parse alone would take the first line's ending as the only one, and read a bare LF
 * inside an unquoted cell as text, where Excel or LibreOffice start a new row).
 */
const readCsv = (text: string) =>
  parse(text, { record_delimiter: ["\r\n", "\n", "\r"] }) as string[][];

/** A CSV answer read as a spreadsheet reads it: its header and rows. */
async function csvAnswer(co: TestCompany, path: string, body: unknown) {
  const res = await api(co.key, path, {
    method: "POST",
    headers: { accept: "text/csv" },
    json: body,
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const [header = [], ...rows] = readCsv(text);
  return { header, rows };
}

describe("the CSV writer", () => {
  it("quotes every field that holds a CR or an LF, so that each record stays one row", () => {
    const text = csvRecords([["id", "text"], ...BREAKS.map((cell, i) => [i, cell])]);
    const [header, ...rows] = readCsv(text);
    expect(header).toEqual(["id", "text"]);
    expect(rows).toHaveLength(BREAKS.length);
    // A cell that begins with a line break begins with a control character: still guarded
    // (a leading CR gets the leading quote); the others keep their text as written.
    expect(rows.map((r) => r[0])).toEqual(BREAKS.map((_, i) => String(i)));
    expect(rows.map((r) => r[1])).toEqual([
      REASON,
      "line 1\rline 2",
      "a\r\nb",
      "\n=1+1",
      "'\r\n@SUM(A1)",
    ]);
    // The line inside a quoted cell is not a record of its own: the field is quoted whole.
    expect(text).toContain(`\r\n0,"${REASON}"\r\n`);
    expect(text).toContain(`\r\n1,"line 1\rline 2"\r\n`);
  });
});

describe("the column writer of the exports", () => {
  it("writes what csvRecords writes for the same rows", () => {
    const kinds: CsvKind[] = ["text", "number", "instant", "boolean", "text", "instant"];
    const texts = [
      ...BREAKS,
      'Filler "2", =line',
      "Cap, blue",
      "-123",
      "\tTAB",
      "ｰfull-width",
      "＝SUM(1)",
      "",
      "plain",
      "naïve ünïcode 日本",
    ];
    const numbers = [
      0,
      -0,
      -2.5,
      1e21,
      1.5e-7,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      42,
      0.1 + 0.2,
      // Sensor values (the decimal path) and its edges: thousandths, trailing zeros, negative
      // and near 2^31 / 1000, integers past 2^31 and past 2^53.
      50.25,
      -0.05,
      0.001,
      1234.5,
      -99.999,
      2_147_483.647,
      2_147_484.001,
      4_294_967_296,
      -(2 ** 53) - 2,
      1e-4,
    ];
    const rows = 200;
    // Every value of the lists in every column, in a scrambled order.
    const pick = <T>(list: readonly T[], i: number, salt: number) =>
      list[(Math.imul(i + salt * 1_000, 2_654_435_761) >>> 0) % list.length] as T;
    const columns: unknown[][] = [
      Array.from({ length: rows }, (_, i) => (i % 11 === 0 ? null : pick(texts, i, 1))),
      Array.from({ length: rows }, (_, i) => (i % 13 === 0 ? undefined : pick(numbers, i, 2))),
      // Across days (a day's date is kept) and with a fraction of a ms (written as Date does).
      Array.from({ length: rows }, (_, i) =>
        i % 17 === 0 ? Date.UTC(2025, 5, 1) + i * 0.5 : Date.UTC(2025, 5, 1) + i * 9_000_001,
      ),
      Array.from({ length: rows }, (_, i) => (i % 5 === 0 ? null : i % 2 === 0)),
      // A text column may hold a number (a KPI key): written as a number, never guarded.
      Array.from({ length: rows }, (_, i) => (i % 3 === 0 ? -7 : pick(texts, i, 3))),
      // Report rows carry their instants as ISO text already.
      Array.from({ length: rows }, (_, i) => (i % 4 === 0 ? null : isoInstant(i * 86_400_123))),
    ];
    const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    const written = text(new CsvColumnWriter(kinds).rows(columns, 0, rows));
    const records = Array.from({ length: rows }, (_, i) =>
      columns.map((column, j) =>
        kinds[j] === "instant" && typeof column[i] === "number"
          ? isoInstant(column[i] as number)
          : column[i],
      ),
    );
    for (const list of [texts, numbers]) {
      for (const value of list) expect(records.some((r) => r.includes(value))).toBe(true);
    }
    expect(written).toBe(csvRecords(records));
    expect(readCsv(written)).toHaveLength(rows);
    // A part of the rows, as an export writes a batch slice by slice.
    expect(text(new CsvColumnWriter(kinds).rows(columns, 17, 42))).toBe(
      csvRecords(records.slice(17, 42)),
    );
    // The same writer again: its kept texts give the same bytes.
    const writer = new CsvColumnWriter(kinds);
    writer.rows(columns, 0, rows);
    expect(text(writer.rows(columns, 0, rows))).toBe(written);
  });
});

/** A company whose machine has an open stop, a 24-hour shift and a catalog cause. */
async function plantWithOpenStop() {
  const co = await createCompany({ timezone: "UTC" });
  const [m] = await createMachines(co.id, [{ name: "Press\n=1+1" }]);
  if (!m) throw new Error("no machine");
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Day", startTime: "00:00", endTime: "00:00" },
  ]);
  await operatorJson("POST", `/companies/${co.id}/stop-causes`, [
    { kind: "generalCause", name: "Jam" },
  ]);
  const [closed, open] = await operatorJson<{ id: number }[]>("POST", `/machines/${m.id}/stops`, [
    {
      startTime: iso(Date.now() - 3 * HOUR),
      endTime: iso(Date.now() - 2 * HOUR),
      isProgrammed: false,
    },
    { startTime: iso(Date.now() - HOUR), endTime: null, isProgrammed: false },
  ]);
  return { co, machine: m, stops: [closed?.id ?? 0, open?.id ?? 0] };
}

describe("every CSV the API writes", () => {
  it("reads a reason given at the scanner back from the stops CSV, row for row", async () => {
    const { co, machine, stops } = await plantWithOpenStop();
    const given = await api(co.key, `/v1/realtime/${machine.id}/stop-reason`, {
      method: "POST",
      json: { generalCause: { name: "Jam" }, description: REASON },
    });
    expect(given.status, await given.clone().text()).toBe(200);
    const json = await apiPost<{
      stops: { stop: { id: number }; classification: { description: string | null } }[];
    }>(co.key, "/v1/reports/stops", {});
    expect(json.stops).toHaveLength(2);

    const { header, rows } = await csvAnswer(co, "/v1/reports/stops", {});
    expect(rows).toHaveLength(json.stops.length);
    const col = (name: string) => header.indexOf(name);
    expect(rows.map((r) => Number(r[col("stop.id")]))).toEqual(json.stops.map((s) => s.stop.id));
    expect(rows.map((r) => r[col("classification.description")])).toEqual(
      json.stops.map((s) => s.classification.description ?? ""),
    );
    const classified = rows.find((r) => Number(r[col("stop.id")]) === stops[1]);
    expect(classified?.[col("classification.description")]).toBe(REASON);
    expect(classified?.[col("machine.name")]).toBe("Press\n=1+1");

    // The formula guard is kept: a reason that is a formula from its first character is
    // read back with the leading quote a spreadsheet shows as text.
    const formula = await api(co.key, `/v1/realtime/${machine.id}/stop-reason`, {
      method: "POST",
      json: { stopId: stops[0], generalCause: { name: "Jam" }, description: FORMULA },
    });
    expect(formula.status, await formula.clone().text()).toBe(200);
    const again = await csvAnswer(co, "/v1/reports/stops", {});
    expect(again.rows).toHaveLength(2);
    expect(
      again.rows.find((r) => Number(r[col("stop.id")]) === stops[0])?.[
        col("classification.description")
      ],
    ).toBe(`'${FORMULA}`);
  });

  it("reads a reason and a SKU description with line breaks back from the export files", async () => {
    const { co, machine, stops } = await plantWithOpenStop();
    const given = await api(co.key, `/v1/realtime/${machine.id}/stop-reason`, {
      method: "POST",
      json: { stopId: stops[0], generalCause: { name: "Jam" }, description: REASON },
    });
    expect(given.status, await given.clone().text()).toBe(200);
    const skus = await api(co.key, "/v1/skus", {
      method: "POST",
      json: [...BREAKS, FORMULA].map((description, i) => ({ sku: `SKU-${i}`, description })),
    });
    expect(skus.status, await skus.clone().text()).toBe(200);
    const made = (await skus.json()) as { id: string }[];
    // In yesterday's shift (a log of the running shift is the realtime endpoints' to write).
    const start = Math.floor(Date.now() / (24 * HOUR)) * 24 * HOUR - 20 * HOUR;
    const logs = await api(co.key, "/v1/production-logs", {
      method: "POST",
      json: made.map((sku, i) => ({
        machine: { id: machine.id },
        sku: { id: sku.id },
        start: iso(start + i * HOUR),
        end: iso(start + (i + 1) * HOUR - 60_000),
        count: 10 + i,
        nominalSpeed: 1,
      })),
    });
    expect(logs.status, await logs.clone().text()).toBe(200);

    const exported = async (dataset: string) => {
      const started = await startExport(co.key, { dataset, format: "csv" });
      const done = await finishExport(co.key, co.id, started.id);
      expect(done.state, done.error ?? "").toBe("succeeded");
      const back = await readExport(co.key, done);
      // The same files read by csv-parse as a spreadsheet reads them: a header, then as
      // many records as the export counts, the same cells as DuckDB reads.
      const parsed: string[][] = [];
      for (const file of done.files) {
        const [header = [], ...rows] = readCsv(
          new TextDecoder().decode(await download(co.key, file)),
        );
        expect(header).toEqual(back.columns.map((c) => c.name));
        parsed.push(...rows);
      }
      expect(parsed).toHaveLength(done.rows);
      expect(parsed).toEqual(
        back.rows.map((r) => r.map((cell) => (cell === null ? "" : String(cell)))),
      );
      return { done, back, col: (name: string) => back.columns.findIndex((c) => c.name === name) };
    };

    const stopsFile = await exported("stops");
    expect(stopsFile.back.rows).toHaveLength(2);
    expect(stopsFile.done.rows).toBe(2);
    const reason = stopsFile.back.rows.find(
      (r) => Number(r[stopsFile.col("stop.id")]) === stops[0],
    );
    expect(reason?.[stopsFile.col("classification.description")]).toBe(REASON);
    expect(reason?.[stopsFile.col("machine.name")]).toBe("Press\n=1+1");

    const logsFile = await exported("production_logs");
    expect(logsFile.back.rows).toHaveLength(BREAKS.length + 1);
    // The formula guard kept: the text that is a formula from its first character gets `'`.
    expect(logsFile.back.rows.map((r) => r[logsFile.col("sku.description")])).toEqual([
      REASON,
      "line 1\rline 2",
      "a\r\nb",
      "\n=1+1",
      "'\r\n@SUM(A1)",
      `'${FORMULA}`,
    ]);
    expect(logsFile.back.rows.map((r) => r[logsFile.col("count")])).toEqual(
      [...BREAKS, FORMULA].map((_, i) => String(10 + i)),
    );
  });
});
