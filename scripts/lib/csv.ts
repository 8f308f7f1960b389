/**
 * Minimal CSV reading for the plain data files of `data/` (comma-separated, no quoted
 * fields, a header line) and for `timestamp,value` sample files.
 */
import type { Sample } from "./operator-api";

/** A parsed CSV file: the header and the data rows, each row as named fields. */
export interface CsvTable {
  header: string[];
  rows: Record<string, string>[];
}

/**
 * Parses CSV text with a header line. Fields must not contain commas or quotes
 * (true of every file in `data/`); blank lines are skipped; CRLF is accepted.
 *
 * @param text the file content.
 * @param requiredColumns columns that must be in the header.
 * @returns the header and one record per data row.
 * @throws Error when a required column is missing or a row has the wrong number of fields
 *   (the message names the 1-based line).
 */
export function parseCsv(text: string, requiredColumns: readonly string[] = []): CsvTable {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? "").split(",").map((name) => name.trim());
  const missing = requiredColumns.filter((column) => !header.includes(column));
  if (missing.length > 0) throw new Error(`CSV header lacks column(s): ${missing.join(", ")}`);
  const rows: Record<string, string>[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (line.trim() === "") continue;
    const fields = line.split(",");
    if (fields.length !== header.length) {
      throw new Error(`CSV line ${i + 1}: ${fields.length} fields, expected ${header.length}`);
    }
    const row: Record<string, string> = {};
    header.forEach((name, column) => {
      row[name] = (fields[column] ?? "").trim();
    });
    rows.push(row);
  }
  return { header, rows };
}

const TIMESTAMP_PATTERN =
  /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Turns a timestamp of the data files into an ISO 8601 UTC string.
 *
 * Accepts `YYYY-MM-DD HH:mm:ss+00:00` (SME file), `YYYY-MM-DD HH:mm:ss` (Azure files,
 * no zone: read as UTC, as the source publishes them) and plain ISO 8601.
 *
 * @param text the timestamp as written in the file.
 * @returns the same instant as `YYYY-MM-DDTHH:mm:ss.sssZ`.
 * @throws Error when the text is not such a timestamp or not a real date.
 */
export function toIsoUtc(text: string): string {
  const match = TIMESTAMP_PATTERN.exec(text.trim());
  if (!match) throw new Error(`Not a timestamp: "${text}"`);
  const [, date, time, zone] = match;
  const offset = zone ? (zone.toUpperCase() === "Z" ? "Z" : normaliseOffset(zone)) : "Z";
  const instant = new Date(`${date}T${time}${offset}`);
  // Date rolls 2022-02-30 over to March: check the calendar date survives a round trip.
  const calendarDay = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(instant.getTime()) || calendarDay.toISOString().slice(0, 10) !== date) {
    throw new Error(`Not a valid date: "${text}"`);
  }
  return instant.toISOString();
}

function normaliseOffset(zone: string): string {
  return zone.includes(":") ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
}

/**
 * Parses a number field.
 *
 * @param text the field (for example `4.0`).
 * @param where where the field comes from, for the error message.
 * @returns the finite number.
 * @throws Error when the field is empty or not a finite number.
 */
export function toNumber(text: string, where: string): number {
  const value = text.trim() === "" ? Number.NaN : Number(text);
  if (!Number.isFinite(value)) throw new Error(`${where}: not a number: "${text}"`);
  return value;
}

/**
 * Keeps one sample per instant (the last one given wins, as the API would do when
 * the same instant is sent twice) and sorts the result by time.
 *
 * @param samples samples with ISO 8601 UTC timestamps as made by {@link toIsoUtc}.
 * @returns a new, time-ordered array without repeated timestamps.
 */
export function latestPerTimestamp(samples: Iterable<Sample>): Sample[] {
  const byTimestamp = new Map<string, number>();
  for (const sample of samples) byTimestamp.set(sample.timestamp, sample.value);
  return [...byTimestamp]
    .map(([timestamp, value]) => ({ timestamp, value }))
    .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
}

/**
 * Parses a `timestamp,value` file (for `samples:load`). A first line whose value is
 * not a number is taken as a header and skipped. Timestamps without a zone are UTC.
 *
 * @param text the file content.
 * @returns time-ordered samples, one per instant (the later line wins).
 * @throws Error naming the line of the first malformed row.
 */
export function parseSamplesCsv(text: string): Sample[] {
  const samples: Sample[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const fields = line.split(",");
    const where = `line ${index + 1}`;
    if (fields.length !== 2) throw new Error(`${where}: expected "timestamp,value"`);
    const [timestamp = "", value = ""] = fields;
    if (index === 0 && !Number.isFinite(Number(value))) return;
    try {
      samples.push({ timestamp: toIsoUtc(timestamp), value: toNumber(value, "value") });
    } catch (error) {
      throw new Error(`${where}: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  return latestPerTimestamp(samples);
}
