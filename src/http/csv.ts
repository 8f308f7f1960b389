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
import { DAY_MS, SECOND_MS } from "../time/units";
import { unprocessable } from "./errors";
import { isoInstant } from "./instants";

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

/** What a column holds, for `CsvColumnWriter`: text, numbers, instants (ms) or booleans. */
export type CsvKind = "text" | "number" | "instant" | "boolean";

/** Distinct texts a `CsvColumnWriter` keeps written (it forgets them all past this). */
const TEXT_CELLS_KEPT = 4096;

const utf8 = new TextEncoder();
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;
const MINUS = 0x2d;
const DOT = 0x2e;
const COLON = 0x3a;
const Z = 0x5a;
/** Room a number, an instant or a boolean cell always fits in, with its separator. */
const SHORT_CELL_BYTES = 40;
/** Largest magnitude of a number written by the decimal path below (its ulp is under 1e-9). */
const DECIMAL_MAX = 2 ** 31 / 1000;

/**
 * Writes a non-negative safe integer's decimal digits at `at`.
 *
 * @returns the index after the last digit.
 */
function writeDigits(out: Uint8Array, at: number, n: number): number {
  let end = at + 1;
  for (let p = 10; p <= n; p *= 10) end++;
  for (let k = end - 1; k >= at; k--) {
    const q = Math.floor(n / 10);
    out[k] = ZERO + (n - q * 10);
    n = q;
  }
  return end;
}

/** Writes `n` (0 to 10^width - 1) as `width` digits, zeros first. */
function writeFixed(out: Uint8Array, at: number, n: number, width: number): void {
  for (let k = at + width - 1; k >= at; k--) {
    const q = Math.floor(n / 10);
    out[k] = ZERO + (n - q * 10);
    n = q;
  }
}

/**
 * Writes a finite number as `String(value)` does (ECMA-262 Number::toString: the shortest
 * decimal that reads back as the same double), without building the string for the common
 * cases: a safe integer, or a number of at most three decimals under 2^31 / 1000 (a sensor's
 * value at a resolution of 0.01: `50.25`), whose shortest decimal is that one. For such a
 * number `v`, `h = v * 1000` is an integer and `h / 1000 === v` says that `v` is the double
 * nearest the decimal `h / 1000`; any other decimal of as few digits is at least 0.001 away,
 * far more than the ulp of `v` there (under 1e-9), so it does not read back as `v`, and the
 * decimal is what `String` writes (plain notation: its magnitude is between 0.001 and 1e21).
 * Anything else goes through `String`.
 *
 * @returns the index after the cell.
 */
function writeNumber(out: Uint8Array, at: number, value: number): number {
  if (Number.isSafeInteger(value)) {
    // -0 is written "0", as String writes it.
    if (value < 0) {
      out[at++] = MINUS;
      return writeDigits(out, at, -value);
    }
    return writeDigits(out, at, value);
  }
  const thousandths = value * 1000;
  if (
    Number.isInteger(thousandths) &&
    Math.abs(value) < DECIMAL_MAX &&
    thousandths / 1000 === value
  ) {
    let n = thousandths;
    if (n < 0) {
      out[at++] = MINUS;
      n = -n;
    }
    const whole = Math.floor(n / 1000);
    let fraction = n - whole * 1000;
    at = writeDigits(out, at, whole);
    out[at++] = DOT;
    // Not an integer: the fraction is not 0; its trailing zeros are not written.
    let width = 3;
    while (fraction % 10 === 0) {
      fraction /= 10;
      width--;
    }
    writeFixed(out, at, fraction, width);
    return at + width;
  }
  const text = String(value);
  for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
  return at;
}

/**
 * The same writer as `csvRecords`, for rows given as columns of known kinds (an export's
 * batches), writing UTF-8 bytes directly: the bytes of the text `csvRecords` writes for the
 * same rows (instants, given as ms, first written as ISO 8601 as the JSON does), ten times
 * faster than building that text and encoding it (docs/benchmarks.md, "Bulk exports"). A
 * number, an instant or a boolean needs no quoting and is no formula (digits, `-`, `.`, `e`,
 * `+`, `:`, `T`, `Z`, ASCII all; numbers are never guarded), so its cell is written directly,
 * as the `CAST` above would write it: a number's digits and an instant's time of day by
 * arithmetic, with no string built (`writeNumber`; an instant's date once a day); every
 * other value, text first of all, is written by csv-stringify, once per distinct text (an
 * export's machine, signal and shift names repeat row after row), so quoting and the formula
 * guard stay csv-stringify's. `test/http/csv-line-breaks.test.ts` compares both writers.
 */
export class CsvColumnWriter {
  private readonly texts = new Map<string, Uint8Array>();
  /** Per column, the last text written and its bytes (a column often repeats its value). */
  private readonly lastText: (string | undefined)[];
  private readonly lastBytes: Uint8Array[];
  private out = new Uint8Array(1 << 16);
  /** The day (ms since the epoch / DAY_MS) of the last instant, and its `YYYY-MM-DDT`. */
  private day = Number.NaN;
  private dayPrefix: Uint8Array = new Uint8Array(0);

  /** @param kinds each column's kind, in column order. */
  constructor(private readonly kinds: readonly CsvKind[]) {
    this.lastText = kinds.map(() => undefined);
    this.lastBytes = kinds.map(() => new Uint8Array(0));
  }

  /**
   * The CRLF-ended records of rows `from` to `to` (exclusive), UTF-8.
   *
   * @param columns one array of values per column, in the order of `kinds`.
   */
  rows(columns: readonly (readonly unknown[])[], from: number, to: number): Uint8Array {
    const kinds = this.kinds;
    const width = kinds.length;
    let out = this.out;
    let at = 0;
    for (let i = from; i < to; i++) {
      for (let j = 0; j < width; j++) {
        const value = columns[j]?.[i];
        const bytes =
          value === null ||
          value === undefined ||
          typeof value === "number" ||
          typeof value === "boolean"
            ? null
            : this.textBytes(j, value);
        // Room for the cell (a text's bytes, else at most SHORT_CELL_BYTES) and its separator.
        const need = (bytes === null ? SHORT_CELL_BYTES : bytes.length) + 2;
        if (at + need > out.length) {
          const grown = new Uint8Array(Math.max(out.length * 2, at + need));
          grown.set(out.subarray(0, at));
          out = grown;
          this.out = grown;
        }
        if (bytes !== null) {
          if (bytes.length > 16) {
            out.set(bytes, at);
            at += bytes.length;
          } else for (let k = 0; k < bytes.length; k++) out[at++] = bytes[k] as number;
        } else if (typeof value === "number") {
          if (kinds[j] === "instant") at = this.instant(out, at, value);
          else if (Number.isFinite(value)) at = writeNumber(out, at, value);
        } else if (typeof value === "boolean") {
          const text = value ? "true" : "false";
          for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
        }
        if (j === width - 1) {
          out[at++] = CR;
          out[at++] = LF;
        } else out[at++] = COMMA;
      }
    }
    return out.slice(0, at);
  }

  /**
   * Writes an instant (ms) as `isoInstant` does: the date as `toISOString` wrote it for the
   * day's first instant, the time of day by arithmetic.
   *
   * @returns the index after the cell.
   * @throws RangeError for an instant `Date` cannot represent (as `toISOString` does).
   */
  private instant(out: Uint8Array, at: number, ms: number): number {
    const day = Math.floor(ms / DAY_MS);
    const rest = ms - day * DAY_MS;
    if (!(Math.abs(ms) <= 8.64e15) || !Number.isInteger(rest)) {
      // Out of Date's range (isoInstant throws as toISOString does) or fractional ms.
      const text = isoInstant(ms);
      for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
      return at;
    }
    if (day !== this.day) {
      this.dayPrefix = utf8.encode(new Date(day * DAY_MS).toISOString().slice(0, -13));
      this.day = day;
    }
    const prefix = this.dayPrefix;
    for (let k = 0; k < prefix.length; k++) out[at++] = prefix[k] as number;
    const seconds = Math.floor(rest / SECOND_MS);
    writeFixed(out, at, Math.floor(seconds / 3600), 2);
    out[at + 2] = COLON;
    writeFixed(out, at + 3, Math.floor(seconds / 60) % 60, 2);
    out[at + 5] = COLON;
    writeFixed(out, at + 6, seconds % 60, 2);
    out[at + 8] = DOT;
    writeFixed(out, at + 9, rest - seconds * SECOND_MS, 3);
    out[at + 12] = Z;
    return at + 13;
  }

  /** The UTF-8 bytes of a text cell (or of any other value) as csv-stringify writes it. */
  private textBytes(column: number, value: unknown): Uint8Array {
    if (typeof value !== "string") return utf8.encode(csvRecords([[value]]).slice(0, -2));
    if (value === this.lastText[column]) return this.lastBytes[column] as Uint8Array;
    let bytes = this.texts.get(value);
    if (bytes === undefined) {
      bytes = utf8.encode(csvRecords([[value]]).slice(0, -2));
      if (this.texts.size >= TEXT_CELLS_KEPT) this.texts.clear();
      this.texts.set(value, bytes);
    }
    this.lastText[column] = value;
    this.lastBytes[column] = bytes;
    return bytes;
  }
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
