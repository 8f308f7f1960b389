/**
 * The CSV writer of an export's batches: rows given as columns of known kinds, written as
 * UTF-8 bytes, the same bytes `csvRecords` (./csv.ts) writes for the same rows.
 */
import { DAY_MS, SECOND_MS } from "../time/units";
import { csvRecords } from "./csv";
import { isoInstant } from "./instants";

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
 * as `CAST` in ./csv.ts would write it: a number's digits and an instant's time of day by
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
