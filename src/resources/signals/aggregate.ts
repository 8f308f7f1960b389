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
 * @param levels the rollup widths that may be used, coarsest first; `[]` plans one raw part
 *   (the naive design, kept for the operator diagnostics and the benchmark).
 * @returns contiguous, non-overlapping parts covering exactly `[from, to)`, in time order.
 */
export function planWindow(
  from: number,
  to: number,
  bucketWidthMs: number,
  levels: readonly (typeof ROLLUP_WIDTHS_SECONDS)[number][] = ROLLUP_WIDTHS_SECONDS,
): WindowPart[] {
  const usable = levels.filter((w) => bucketWidthMs % (w * 1000) === 0);
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

/**
 * One SELECT per part giving `(bucket, n, s, lo, hi)`, joined by UNION ALL.
 *
 * @param params positional parameters so far (?1 company, ?2 signal, ?3 width); each part's
 *   bounds are appended.
 */
function unionOfParts(parts: readonly WindowPart[], params: number[]): string {
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
  return selects.length > 0 ? selects.join("\nUNION ALL\n") : "SELECT 0, 0, 0, 0, 0 WHERE 0";
}

/** One result point: bucket start (ms) and the value of the aggregation function. */
export interface BucketValue {
  bucket: number;
  value: number;
}

/** The function's value over the rows of one part: raw samples or rollups. */
const PART_VALUE: Record<"raw" | "rollup", Record<AggFunction, string>> = {
  raw: {
    avg: "CAST(SUM(value) AS REAL) / COUNT(*)",
    sum: "SUM(value)",
    count: "COUNT(*)",
    min: "MIN(value)",
    max: "MAX(value)",
  },
  rollup: {
    avg: "CAST(SUM(value_sum) AS REAL) / SUM(sample_count)",
    sum: "SUM(value_sum)",
    count: "SUM(sample_count)",
    min: "MIN(value_min)",
    max: "MAX(value_max)",
  },
};

/** The function's value over the partial aggregates (n, s, lo, hi) of several parts. */
const COMBINED_VALUE: Record<AggFunction, string> = {
  avg: "CAST(SUM(s) AS REAL) / SUM(n)",
  sum: "SUM(s)",
  count: "SUM(n)",
  min: "MIN(lo)",
  max: "MAX(hi)",
};

/**
 * Builds the single SQL statement that returns `(bucket, value)` for one function.
 *
 * Every part yields partial aggregates `(bucket, n, s, lo, hi)`; the outer query combines
 * them per bucket and applies the function in SQL (avg = sum / count), so that two columns,
 * not five, cross from D1 to the isolate (D1's cost grows with the cells it returns). A
 * window served by one part skips the outer GROUP BY (a second temporary B-tree over every
 * bucket). Bucket arithmetic binds integers with an explicit `CAST(... AS INTEGER)`: D1
 * binds JavaScript numbers as REAL, which would make `ts / width` a fractional division.
 *
 * @returns SQL text and its positional parameters; rows are `[bucket ms, value]`, ascending.
 */
export function buildValueSql(
  companyId: number,
  signalId: number,
  parts: readonly WindowPart[],
  bucketWidthMs: number,
  fn: AggFunction,
): { sql: string; params: number[] } {
  const [only] = parts;
  if (parts.length !== 1 || only === undefined) {
    const params: number[] = [companyId, signalId, bucketWidthMs];
    const union = unionOfParts(parts, params);
    const sql = `WITH W(w) AS (SELECT CAST(?3 AS INTEGER))
      SELECT bucket, ${COMBINED_VALUE[fn]} AS value
      FROM (${union})
      GROUP BY bucket ORDER BY bucket`;
    return { sql, params };
  }
  const params = [companyId, signalId, bucketWidthMs, only.from, only.to];
  const sql =
    only.source === "raw"
      ? `SELECT (ts / W.w) * W.w AS bucket, ${PART_VALUE.raw[fn]} AS value
        FROM signal_samples, (SELECT CAST(?3 AS INTEGER) AS w) AS W
        WHERE company_id = ?1 AND signal_id = ?2 AND ts >= CAST(?4 AS INTEGER) AND ts < CAST(?5 AS INTEGER)
        GROUP BY bucket ORDER BY bucket`
      : `SELECT (bucket_start / W.w) * W.w AS bucket, ${PART_VALUE.rollup[fn]} AS value
        FROM signal_rollups, (SELECT CAST(?3 AS INTEGER) AS w) AS W
        WHERE company_id = ?1 AND signal_id = ?2 AND width_seconds = ${only.source}
          AND bucket_start >= CAST(?4 AS INTEGER) AND bucket_start < CAST(?5 AS INTEGER)
        GROUP BY bucket ORDER BY bucket`;
  return { sql, params };
}

/**
 * Aggregates one signal's samples over `[from, to)` and applies one function per bucket.
 *
 * See `buildValueSql` for the statement and `planWindow` for the split into parts.
 *
 * @param d1 the D1 binding.
 * @param q company and signal (internal ids), window in ms, bucket width in ms.
 * @param fn the aggregation function.
 * @param options `useRollups: false` scans raw samples only (the naive design).
 * @returns the non-empty buckets in ascending time with their values.
 */
export async function aggregateSignalValues(
  d1: D1Database,
  q: { companyId: number; signalId: number; from: number; to: number; bucketWidthMs: number },
  fn: AggFunction,
  options: { useRollups?: boolean } = {},
): Promise<BucketValue[]> {
  const levels = options.useRollups === false ? [] : ROLLUP_WIDTHS_SECONDS;
  const parts = planWindow(q.from, q.to, q.bucketWidthMs, levels);
  if (parts.length === 0) return [];
  const { sql, params } = buildValueSql(q.companyId, q.signalId, parts, q.bucketWidthMs, fn);
  // raw(): arrays instead of one object per row.
  const rows = await d1
    .prepare(sql)
    .bind(...params)
    .raw<[number, number]>();
  return rows.map(([bucket, value]) => ({ bucket, value }));
}
