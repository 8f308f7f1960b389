/**
 * CSV answers (`Accept: text/csv`) of the reports and of signal data: RFC 4180
 * text in UTF-8 with a header row, nested fields as dotted column names
 * (`productionMetrics.oee`), every matching row rather than one page, streamed
 * batch by batch so that the Worker holds one batch at a time.
 *
 * Quoting and escaping are csv-stringify's (its browser build: the Node build
 * needs `Buffer`, which workerd lacks without the Node compatibility flag).
 * Columns come from the row's schema, so a column whose value is null in every
 * row (an unclassified stop's causes) is still there.
 */
import { z } from "@hono/zod-openapi";
import { stringify } from "csv-stringify/browser/esm/sync";
import type { Context } from "hono";
import { accepts } from "hono/accepts";
import { unprocessable } from "./errors";

/** Most rows one CSV answer may hold; above it the request is refused with a 422. */
export const CSV_MAX_ROWS = 100_000;

/** The media type of a CSV answer. */
export const CSV_MEDIA_TYPE = "text/csv; charset=utf-8; header=present";

/**
 * Whether the request's `Accept` header prefers CSV to JSON, negotiated by `hono/accepts`:
 * the highest quality wins, then the more specific type, then the one listed first
 * (`text/csv, application/json` is CSV); `*\/*` alone, no header or `text/csv;q=0` is JSON.
 *
 * @param c the request's context.
 */
export function wantsCsv(c: Context): boolean {
  return (
    accepts(c, {
      header: "Accept",
      supports: ["application/json", "text/csv"],
      default: "application/json",
    }) === "text/csv"
  );
}

/**
 * The dotted column names of a row schema: an object's fields in order, nested
 * objects (also optional, nullable or `X | null`) flattened with dots.
 *
 * @param schema a zod object schema.
 * @param keep optional filter on the top-level field names (the grouped reports
 *   show only the keys of their `groupBy`).
 */
export function csvColumns(schema: z.ZodType, keep?: (field: string) => boolean): string[] {
  const walk = (s: z.ZodType, prefix: string): string[] => {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) {
      return walk(s.unwrap() as z.ZodType, prefix);
    }
    if (s instanceof z.ZodUnion) {
      const objects = (s.options as z.ZodType[]).filter((o) => !(o instanceof z.ZodNull));
      if (objects.length === 1 && objects[0]) return walk(objects[0], prefix);
    }
    if (s instanceof z.ZodObject) {
      return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([field, inner]) =>
        prefix === "" && keep && !keep(field) ? [] : walk(inner, `${prefix}${field}.`),
      );
    }
    return [prefix.slice(0, -1)];
  };
  return walk(schema, "");
}

/**
 * How the writer turns values into cells: null and undefined empty (csv-stringify's own
 * rule), numbers as JSON writes them (a non-finite one empty), booleans `true`/`false`,
 * anything else by `String`. Numbers stay numbers here so that the formula guard below
 * leaves `-2.5` alone.
 */
const CAST = {
  number: (value: number) => (Number.isFinite(value) ? String(value) : ""),
  boolean: (value: boolean) => (value ? "true" : "false"),
  object: (value: object) => String(value),
  date: (value: Date) => String(value),
  bigint: (value: bigint) => String(value),
};

/** The value of a dotted column in a row (empty when a step is null or absent). */
function valueAt(row: unknown, path: readonly string[]): unknown {
  let v: unknown = row;
  for (const step of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}

/**
 * RFC 4180 text of rows (CRLF line ends), with the header row when asked.
 *
 * @param columns dotted column names (`csvColumns`).
 * @param rows the rows, nested as in the JSON answer.
 * @param header write the header row first.
 */
function csvText(columns: readonly string[], rows: readonly unknown[], header: boolean): string {
  const paths = columns.map((c) => c.split("."));
  const records = rows.map((row) => paths.map((p) => valueAt(row, p)));
  return csvRecords(header ? [columns, ...records] : records);
}

/**
 * RFC 4180 text of records already laid out as cells in column order (CRLF line ends):
 * the one writer behind every CSV the API writes (the answers above and the export
 * files, src/exports/), values cast as `CAST` says.
 *
 * A text cell that a spreadsheet would run as a formula (OWASP "CSV injection"): one
 * beginning with `=`, `+`, `-`, `@`, a tab or a carriage return (or their full-width forms)
 * is written with a leading `'`, csv-stringify's `escape_formulas`: a SKU named
 * `=HYPERLINK(...)` reads `'=HYPERLINK(...)` in the cell, as text. A number is not text:
 * `-2.5` stays `-2.5` (docs/decisions.md).
 *
 * A field holding a CR or an LF anywhere is quoted (RFC 4180), whatever the line break:
 * csv-stringify quotes only the record delimiter itself (CRLF) once one is set, unless
 * `quote_record_delimiter` says otherwise, and a spreadsheet ends a row at a bare LF or CR
 * too. Quoting is also what keeps a formula on a later line of the text harmless: the lines
 * of a quoted field are one cell, whose text begins with its first character, which the
 * guard above checks (docs/resources.md, "CSV").
 *
 * @param records one array of values per line, in column order.
 */
export function csvRecords(records: readonly (readonly unknown[])[]): string {
  return stringify(records as unknown[][], {
    record_delimiter: "\r\n",
    quote_record_delimiter: true,
    escape_formulas: true,
    cast: CAST,
  });
}

/**
 * Refuses a CSV answer of more than `CSV_MAX_ROWS` rows (422, before any row is sent).
 *
 * @param rows how many rows the answer would hold.
 * @throws ApiError 422 at `["header", "accept"]` naming the count and the maximum.
 */
export function checkCsvSize(rows: number): void {
  if (rows > CSV_MAX_ROWS) {
    throw unprocessable(
      ["header", "accept"],
      `A CSV answer holds at most ${CSV_MAX_ROWS} rows and this one would hold ${rows}: ` +
        "narrow the filters (for example startDate and endDate), or page through the JSON answer",
      "csv_too_many_rows",
    );
  }
}

/**
 * A streamed CSV response: the header row, then each batch as the client reads
 * (a pull stream: the next batch is computed only once the previous one is taken).
 *
 * @param columns dotted column names.
 * @param batches the rows, batch by batch.
 * @param filename offered in `Content-Disposition`.
 */
export function csvResponse(
  columns: readonly string[],
  batches: AsyncIterable<readonly unknown[]>,
  filename: string,
): Response {
  const encoder = new TextEncoder();
  const iterator = batches[Symbol.asyncIterator]();
  let header = true;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (header) {
        header = false;
        controller.enqueue(encoder.encode(csvText(columns, [], true)));
        return;
      }
      const next = await iterator.next();
      if (next.done) controller.close();
      else if (next.value.length > 0)
        controller.enqueue(encoder.encode(csvText(columns, next.value, false)));
    },
    async cancel() {
      await iterator.return?.();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "content-type": CSV_MEDIA_TYPE,
      "content-disposition": `attachment; filename="${filename}"`,
    },
  });
}

/** The batches of an array already in memory (the grouped reports). */
export async function* inBatches<T>(rows: readonly T[], size = 1000): AsyncGenerator<T[]> {
  for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size);
}

/** A response schema's content with the CSV alternative, for the OpenAPI document. */
export const csvContent = {
  "text/csv": {
    schema: z.string().openapi({
      description:
        `With \`Accept: text/csv\`: RFC 4180 CSV (UTF-8, CRLF, a header row), every matching row ` +
        `(not one page; at most ${CSV_MAX_ROWS}), nested fields as dotted column names.`,
    }),
  },
};
