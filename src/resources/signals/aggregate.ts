/**
 * Aggregation of signal samples into fixed-width buckets.
 *
 * Buckets are `width` ms wide and aligned to multiples of the width since the
 * Unix epoch (UTC); a bucket's timestamp is its start. Samples with
 * `start <= t < end` count; buckets without samples are left out.
 *
 * Long windows do not scan raw samples: the window is split into parts that
 * whole rollup buckets cover (3,600 s, then 60 s) and the ragged edges, which
 * are read raw. A rollup can serve a bucket width only when the width is a
 * multiple of the rollup's width, so that no rollup bucket straddles two
 * result buckets. The partial aggregates (count, sum, min, max) of all parts
 * combine exactly for the five functions.
 */

export const AGG_FUNCTIONS = ["avg", "max", "min", "sum", "count"] as const;
export type AggFunction = (typeof AGG_FUNCTIONS)[number];

/** Rollup widths maintained on ingestion, in seconds, coarsest first. */
export const ROLLUP_WIDTHS_SECONDS = [3600, 60] as const;

/** One part of a window: read raw samples, or rollups of one width. */
export interface WindowPart {
  source: "raw" | (typeof ROLLUP_WIDTHS_SECONDS)[number];
  /** Inclusive start, ms since the epoch. */
  from: number;
  /** Exclusive end, ms since the epoch. */
  to: number;
}

const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;
const floorTo = (t: number, step: number) => Math.floor(t / step) * step;

/**
 * Splits `[from, to)` into parts served by the coarsest usable rollup and raw edges.
 *
 * @param from window start, ms (inclusive).
 * @param to window end, ms (exclusive).
 * @param bucketWidthMs result bucket width in ms; rollups whose width does not divide it are not used.
 * @returns contiguous, non-overlapping parts covering exactly `[from, to)`, in time order.
 */
export function planWindow(from: number, to: number, bucketWidthMs: number): WindowPart[] {
  const usable = ROLLUP_WIDTHS_SECONDS.filter((w) => bucketWidthMs % (w * 1000) === 0);
  const split = (
    a: number,
    b: number,
    levels: readonly (typeof ROLLUP_WIDTHS_SECONDS)[number][],
  ): WindowPart[] => {
    if (a >= b) return [];
    const [level, ...finer] = levels;
    if (level === undefined) return [{ source: "raw", from: a, to: b }];
    const step = level * 1000;
    const innerFrom = ceilTo(a, step);
    const innerTo = floorTo(b, step);
    if (innerFrom >= innerTo) return split(a, b, finer);
    return [
      ...split(a, innerFrom, finer),
      { source: level, from: innerFrom, to: innerTo },
      ...split(innerTo, b, finer),
    ];
  };
  return split(from, to, usable);
}

/** One result bucket: start (ms) and the partial aggregates of its samples. */
export interface BucketAggregate {
  bucket: number;
  count: number;
  sum: number;
  min: number;
  max: number;
}

/**
 * Builds the single SQL statement that aggregates all parts of a window.
 *
 * Bucket arithmetic binds integers with an explicit `CAST(... AS INTEGER)`:
 * D1 binds JavaScript numbers as REAL, which would make `ts / width` a
 * fractional division.
 *
 * @returns SQL text and its positional parameters.
 */
export function buildAggregateSql(
  companyId: number,
  signalId: number,
  parts: readonly WindowPart[],
  bucketWidthMs: number,
): { sql: string; params: number[] } {
  const params: number[] = [companyId, signalId, bucketWidthMs];
  const selects = parts.map((part) => {
    params.push(part.from, part.to);
    const fromIdx = params.length - 1;
    const toIdx = params.length;
    if (part.source === "raw") {
      return `SELECT (ts / W.w) * W.w AS bucket, COUNT(*) AS n, SUM(value) AS s, MIN(value) AS lo, MAX(value) AS hi
        FROM signal_samples, W
        WHERE company_id = ?1 AND signal_id = ?2 AND ts >= CAST(?${fromIdx} AS INTEGER) AND ts < CAST(?${toIdx} AS INTEGER)
        GROUP BY bucket`;
    }
    return `SELECT (bucket_start / W.w) * W.w AS bucket, SUM(sample_count) AS n, SUM(value_sum) AS s,
          MIN(value_min) AS lo, MAX(value_max) AS hi
        FROM signal_rollups, W
        WHERE company_id = ?1 AND signal_id = ?2 AND width_seconds = ${part.source}
          AND bucket_start >= CAST(?${fromIdx} AS INTEGER) AND bucket_start < CAST(?${toIdx} AS INTEGER)
        GROUP BY bucket`;
  });
  const union = selects.length > 0 ? selects.join("\nUNION ALL\n") : "SELECT 0, 0, 0, 0, 0 WHERE 0";
  const sql = `WITH W(w) AS (SELECT CAST(?3 AS INTEGER))
    SELECT bucket, SUM(n) AS count, SUM(s) AS sum, MIN(lo) AS min, MAX(hi) AS max
    FROM (${union})
    GROUP BY bucket ORDER BY bucket`;
  return { sql, params };
}

/**
 * Aggregates one signal's samples over `[from, to)` into buckets.
 *
 * @param d1 the D1 binding.
 * @param q company and signal (internal ids), window in ms, bucket width in ms.
 * @returns the non-empty buckets in ascending time, with partial aggregates.
 */
export async function aggregateSignal(
  d1: D1Database,
  q: { companyId: number; signalId: number; from: number; to: number; bucketWidthMs: number },
): Promise<BucketAggregate[]> {
  const parts = planWindow(q.from, q.to, q.bucketWidthMs);
  const { sql, params } = buildAggregateSql(q.companyId, q.signalId, parts, q.bucketWidthMs);
  const { results } = await d1
    .prepare(sql)
    .bind(...params)
    .all<BucketAggregate>();
  return results;
}

/**
 * The value of one bucket for an aggregation function.
 *
 * @returns avg = sum / count; sum; count; min; max.
 */
export function bucketValue(b: BucketAggregate, fn: AggFunction): number {
  switch (fn) {
    case "avg":
      return b.sum / b.count;
    case "sum":
      return b.sum;
    case "count":
      return b.count;
    case "min":
      return b.min;
    case "max":
      return b.max;
  }
}
