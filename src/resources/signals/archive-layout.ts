/**
 * Where the signal archive's objects are and what each covers (docs/signal-storage.md, "The
 * archive"): the spans (a UTC hour, day, month or year), the rule that picks one by a day's
 * samples, and the Hive-style keys. No I/O and no codec here (the Parquet form is in
 * archive-format.ts), so the benchmark can apply the same rule.
 */
import { DAY_MS, hourStart } from "../../time/units";
import { BLOCK_MS } from "./blocks";

/**
 * A day with at least this many samples of a signal (one every 30 s) gets an object of its
 * own; sparser days share their month's object, so that no object is mostly footer (a
 * Parquet footer and page headers are about 300 bytes).
 */
export const DAY_OBJECT_MIN_SAMPLES = 2_880;
/**
 * A day with fewer samples than this (one every 15 minutes) shares its year's object: a
 * month of such days is a few hundred samples, too few for their footer and for zstd's
 * tables (the demo's hourly Fleet B: 7.1-7.3 bytes a sample in month objects, 6.6 in year
 * objects).
 */
export const MONTH_OBJECT_MIN_DAY_SAMPLES = 96;
/**
 * A day with more samples than this (about 6 Hz) gets an object per hour instead: encoding
 * a day object holds its samples several times over in the Worker's 128 MB.
 */
export const DAY_OBJECT_MAX_SAMPLES = 500_000;

/** Where a store's objects go: its company and machine (internal ids, which never change). */
export interface ArchivePlace {
  companyId: number;
  machineId: number;
}

/** What one object covers. */
export type ArchiveKind = "hour" | "day" | "month" | "year";

/** The span of one object: a UTC hour, day or month, `[start, end)` in ms. */
export interface ArchiveSpan {
  kind: ArchiveKind;
  start: number;
  end: number;
}

/** The hour, day, month or year of an instant as an object span. */
export function spanOf(kind: ArchiveKind, t: number): ArchiveSpan {
  if (kind === "hour") {
    const start = hourStart(t);
    return { kind, start, end: start + BLOCK_MS };
  }
  if (kind === "day") {
    const start = Math.floor(t / DAY_MS) * DAY_MS;
    return { kind, start, end: start + DAY_MS };
  }
  const d = new Date(t);
  if (kind === "year") {
    const year = d.getUTCFullYear();
    return { kind, start: Date.UTC(year, 0, 1), end: Date.UTC(year + 1, 0, 1) };
  }
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { kind, start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/**
 * The object's key: `archive/signals/`, then one Hive partition a level (the company, machine
 * and signal ids, the year), then `YYYY-MM-DD.parquet` (a day), `YYYY-MM.parquet` (a month's
 * sparse days), `YYYY.parquet` (a year's very sparse days) or `YYYY-MM-DDTHH.parquet` (an
 * hour of a very dense day). Read with `hive_partitioning`, the whole archive is one table
 * whose partition columns are `company_id`, `machine_id`, `signal_id` and `year`.
 */
export function archiveKey(place: ArchivePlace, signalId: number, span: ArchiveSpan): string {
  const iso = new Date(span.start).toISOString();
  const length = { hour: 13, day: 10, month: 7, year: 4 }[span.kind];
  return `${archivePrefix(place)}${partition("signal_id", signalId)}${partition("year", iso.slice(0, 4))}${iso.slice(0, length)}.parquet`;
}

/** The key prefix of every object of one machine's store. */
function archivePrefix(place: ArchivePlace): string {
  return `archive/signals/${partition("company_id", place.companyId)}${partition("machine_id", place.machineId)}`;
}

/** One level of a Hive-style path: `name=value/`. */
const partition = (name: string, value: string | number): string => `${name}=${value}/`;
