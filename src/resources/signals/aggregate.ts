/**
 * Aggregation of a signal's blocks into fixed-width buckets, inside the machine's
 * `SignalStore`: buckets aligned to multiples of their width since the epoch (UTC), a bucket's
 * timestamp its start, empty buckets left out. A block wholly inside the window gives its
 * hour or minute rollups where the width is a multiple of theirs, else its samples; the
 * blocks cut by the window's edges give their samples (docs/signal-storage.md, "Reads").
 */
import { hourStart, MINUTE_MS } from "../../time/units";
import {
  BLOCK_MS,
  type DecodedSamples,
  decodeMinutes,
  decodeSamples,
  MINUTES_PER_BLOCK,
} from "./blocks";

export const AGG_FUNCTIONS = ["avg", "max", "min", "sum", "count"] as const;
export type AggFunction = (typeof AGG_FUNCTIONS)[number];

/** What serves the blocks inside the window: hour rollups, minute rollups or samples. */
export type ReadMode = "hours" | "minutes" | "raw";

/**
 * The coarsest source that serves a bucket width.
 *
 * @param bucketWidthMs the bucket width, ms.
 * @param useRollups false reads samples only (the naive design, kept for the operator
 *   diagnostics and the benchmark).
 */
export function readMode(bucketWidthMs: number, useRollups = true): ReadMode {
  if (!useRollups) return "raw";
  if (bucketWidthMs % BLOCK_MS === 0) return "hours";
  if (bucketWidthMs % MINUTE_MS === 0) return "minutes";
  return "raw";
}

/** One block as the store's query returns it; a BLOB is null when the query left it out. */
export interface BlockRow {
  /** The block's start, ms. */
  hour: number;
  n: number;
  sum: number;
  lo: number;
  hi: number;
  minutes: ArrayBuffer | null;
  samples: ArrayBuffer | null;
  /** The archive object holding the hour's samples (null: none; see archive.ts). */
  archive_id?: number | null;
  /** The hour's samples read from the archive, when the row no longer holds them. */
  decoded?: DecodedSamples;
}

/**
 * Whether aggregating `row` over the window in `mode` needs its samples while the row holds
 * none because the archive has them (the caller reads them from R2 into `decoded`).
 */
export function needsArchivedSamples(
  row: BlockRow,
  q: { from: number; to: number },
  mode: ReadMode,
): boolean {
  if (row.samples !== null || row.archive_id === null || row.archive_id === undefined) return false;
  const inner = row.hour >= q.from && row.hour + BLOCK_MS <= q.to;
  if (inner && mode === "hours") return false;
  return mode === "raw" || !inner || row.minutes === null;
}

/** The result: bucket starts (ms, ascending) and the function's value in each. */
export interface Series {
  buckets: number[];
  values: number[];
}

/** Bucket partial aggregates, fed in ascending time (so a bucket's parts arrive together). */
class Accumulator {
  readonly buckets: number[] = [];
  readonly values: number[] = [];
  // The current bucket is [bucket, end); the first add opens one (every t >= -Infinity).
  private bucket = Number.POSITIVE_INFINITY;
  private end = Number.NEGATIVE_INFINITY;
  private n = 0;
  // -0, not 0: -0 + v is v for every v, so a sum of one -0 sample stays -0.
  private s = -0;
  private lo = 0;
  private hi = 0;

  constructor(
    private readonly width: number,
    private readonly fn: AggFunction,
  ) {}

  add(t: number, n: number, s: number, lo: number, hi: number): void {
    // Parts arrive in ascending time: a bucket ends at the first part at or after its end.
    if (t >= this.end) {
      this.emit();
      this.bucket = Math.floor(t / this.width) * this.width;
      this.end = this.bucket + this.width;
      this.n = n;
      this.s = s;
      this.lo = lo;
      this.hi = hi;
      return;
    }
    this.n += n;
    this.s += s;
    if (lo < this.lo) this.lo = lo;
    if (hi > this.hi) this.hi = hi;
  }

  private emit(): void {
    if (this.n === 0) return;
    this.buckets.push(this.bucket);
    const fn = this.fn;
    this.values.push(
      fn === "avg"
        ? this.s / this.n
        : fn === "sum"
          ? this.s
          : fn === "count"
            ? this.n
            : fn === "min"
              ? this.lo
              : this.hi,
    );
    this.n = 0;
  }

  finish(): Series {
    this.emit();
    return { buckets: this.buckets, values: this.values };
  }
}

/**
 * Aggregates blocks over `[from, to)`.
 *
 * @param rows the signal's blocks overlapping the window, ascending by hour, with the
 *   BLOBs `blockQuery` selects for the mode.
 * @param q window in ms (`from` inclusive, `to` exclusive) and bucket width in ms.
 * @param fn the aggregation function.
 * @param mode from `readMode`.
 * @returns the non-empty buckets in ascending time with their values.
 */
export function aggregateBlocks(
  rows: Iterable<BlockRow>,
  q: { from: number; to: number; bucketWidthMs: number },
  fn: AggFunction,
  mode: ReadMode,
): Series {
  const acc = new Accumulator(q.bucketWidthMs, fn);
  for (const row of rows) {
    const inner = row.hour >= q.from && row.hour + BLOCK_MS <= q.to;
    if (inner && mode === "hours") {
      acc.add(row.hour, row.n, row.sum, row.lo, row.hi);
    } else if (
      (row.decoded !== undefined || row.samples !== null) &&
      (mode === "raw" || !inner || row.minutes === null)
    ) {
      const { ts, values } =
        row.decoded ?? decodeSamples(row.hour, row.n, row.samples ?? new ArrayBuffer(0));
      for (let i = 0; i < ts.length; i++) {
        const t = ts[i] ?? 0;
        if (t < q.from || t >= q.to) continue;
        const v = values[i] ?? 0;
        acc.add(t, 1, v, v, v);
      }
    } else if (row.minutes !== null && mode !== "raw") {
      // Minute rollups: of an inner block, or of a block whose samples retention removed
      // (then only its minutes wholly inside the window count).
      const m = decodeMinutes(row.minutes);
      for (let i = 0; i < MINUTES_PER_BLOCK; i++) {
        const n = m[4 * i] ?? 0;
        const start = row.hour + i * MINUTE_MS;
        if (n === 0 || start < q.from || start + MINUTE_MS > q.to) continue;
        acc.add(start, n, m[4 * i + 1] ?? 0, m[4 * i + 2] ?? 0, m[4 * i + 3] ?? 0);
      }
    }
  }
  return acc.finish();
}

/**
 * The SQL (for the store's `blocks` table) that reads the blocks overlapping a window
 * with only the BLOBs the mode needs: samples for the edge blocks, for `raw`, and for
 * blocks without minute rollups; minute rollups for `minutes` and for the edges (used
 * when retention removed their samples). Parameters: ?1 signal, ?2 from, ?3 to, ?4 mode.
 */
export const BLOCK_QUERY_SQL = `SELECT hour, n, sum, lo, hi, archive_id,
    CASE WHEN ?4 = 'minutes' OR hour < ?2 OR hour + ${BLOCK_MS} > ?3 THEN minutes END AS minutes,
    CASE WHEN ?4 = 'raw' OR hour < ?2 OR hour + ${BLOCK_MS} > ?3
      OR (?4 = 'minutes' AND minutes IS NULL) THEN samples END AS samples
  FROM blocks
  WHERE signal_id = ?1 AND hour > ?2 - ${BLOCK_MS} AND hour < ?3
  ORDER BY hour`;

/**
 * Sum of the values with `from <= t < to`, from the blocks overlapping the window (read
 * with `BLOCK_QUERY_SQL` in mode `hours`): whole hours from their rollups, edges from
 * their samples (read from the archive into `decoded` when it has them; once retention
 * removed them, from their whole minutes).
 */
export function sumBlocks(rows: Iterable<BlockRow>, from: number, to: number): number {
  let sum = 0;
  for (const row of rows) {
    if (row.hour >= from && row.hour + BLOCK_MS <= to) {
      sum += row.sum;
      continue;
    }
    // An edge: one bucket as wide as the window cannot be aligned, so add the parts here.
    const part = aggregateBlocks([row], { from, to, bucketWidthMs: BLOCK_MS }, "sum", "minutes");
    for (const v of part.values) sum += v;
  }
  return sum;
}

/** One part of a window as `aggregateBlocks` reads it (for the operator diagnostics). */
interface WindowPart {
  /** `raw` (decoded samples), `60` (minute rollups) or `3600` (hour rollups). */
  source: "raw" | "60" | "3600";
  /** Inclusive start, ms. */
  from: number;
  /** Exclusive end, ms. */
  to: number;
}

/**
 * How `aggregateBlocks` reads `[from, to)`: the whole hours inside it from the mode's
 * source, the ragged edges from samples.
 *
 * @returns contiguous, non-overlapping parts covering exactly `[from, to)`, in time order.
 */
export function planWindow(from: number, to: number, mode: ReadMode): WindowPart[] {
  const innerFrom = Math.ceil(from / BLOCK_MS) * BLOCK_MS;
  const innerTo = hourStart(to);
  const source = mode === "hours" ? "3600" : mode === "minutes" ? "60" : "raw";
  if (source === "raw" || innerFrom >= innerTo) return [{ source: "raw", from, to }];
  const parts: WindowPart[] = [];
  if (from < innerFrom) parts.push({ source: "raw", from, to: innerFrom });
  parts.push({ source, from: innerFrom, to: innerTo });
  if (innerTo < to) parts.push({ source: "raw", from: innerTo, to });
  return parts;
}
