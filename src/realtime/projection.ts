/**
 * The D1 statements that show a machine's timeline as production logs.
 *
 * Each SKU segment of the running instance is one `production_logs` row with
 * `live = 1`, `is_automated = 1`, `type = 'total'`, written by the machine's
 * Durable Object (never by the public production-log endpoints, which refuse
 * the running shift). The row's `sensor_count` is computed inside the same
 * statement, from the machine's `count` signal: the sum of its samples with
 * `start <= ts < end`, read from the hourly rollups where whole hours fit and
 * raw samples at the edges (the plan of `planWindow`, as the signal-data
 * route does), so that a long segment costs a few index lookups.
 * `count = sensorCount x countingFactor`, rounded to an integer (the spec's
 * definition of `count`; `sensor_count` and `count` are integer columns).
 */
import { planWindow } from "../resources/signals/aggregate";

/** Name of the signal whose samples are the machine's sensor pulses. */
export const COUNT_SIGNAL_NAME = "count";

/** What one production log row of a segment holds; instants in ms. */
export interface LiveLogRow {
  id: string;
  companyId: number;
  machineId: number;
  skuId: string;
  shiftInstanceId: number;
  operatorId: number | null;
  simpleWorkOrderId: string | null;
  nominalSpeed: number;
  countingFactor: number;
  start: number;
  end: number;
  /** true while the instance runs; false once it is closed. */
  live: boolean;
  /** `updated_at` (and `created_at` of a new row), ms. */
  now: number;
}

/** The counts the database computed for a log. */
export interface LogCounts {
  id: string;
  sensorCount: number;
  count: number;
}

/**
 * The sum of the machine's `count` samples in `[from, to)` as a SQL
 * expression over a CTE `sig(id)` (the signal), with its parameters numbered
 * from `firstParam`. The signal is the machine's lowest-id non-deleted signal
 * named `count` (a second one, if any, is a different sensor, not more pulses).
 */
function sampleSumSql(
  from: number,
  to: number,
  firstParam: number,
): { sql: string; params: number[] } {
  // Any multiple of 3,600 s lets both rollup levels serve the single result bucket.
  const parts = planWindow(from, to, 3_600_000);
  const params: number[] = [];
  const selects = parts.map((part) => {
    params.push(part.from, part.to);
    const a = firstParam + params.length - 2;
    const b = firstParam + params.length - 1;
    if (part.source === "raw") {
      return `SELECT SUM(value) AS v FROM signal_samples
        WHERE company_id = ?2 AND signal_id = (SELECT id FROM sig)
          AND ts >= CAST(?${a} AS INTEGER) AND ts < CAST(?${b} AS INTEGER)`;
    }
    return `SELECT SUM(value_sum) AS v FROM signal_rollups
      WHERE company_id = ?2 AND signal_id = (SELECT id FROM sig) AND width_seconds = ${part.source}
        AND bucket_start >= CAST(?${a} AS INTEGER) AND bucket_start < CAST(?${b} AS INTEGER)`;
  });
  const union = selects.length > 0 ? selects.join(" UNION ALL ") : "SELECT 0 AS v";
  return { sql: `(SELECT COALESCE(SUM(v), 0) FROM (${union}))`, params };
}

/**
 * An upsert of a segment's log that computes its counts from the samples and
 * returns them. A row deleted through the public API stays deleted (its
 * `deleted_at` is not touched); `is_reviewed` and `work_order_id` belong to
 * the log's reviewers and are not touched either.
 *
 * @param d1 the D1 binding.
 * @param row the log.
 * @returns the statement; its result rows are `{id, sensor_count, count}`.
 */
export function upsertLiveLog(d1: D1Database, row: LiveLogRow): D1PreparedStatement {
  const sum = sampleSumSql(row.start, row.end, 14);
  const sql = `WITH sig(id) AS (
      SELECT id FROM signals
      WHERE company_id = ?2 AND machine_id = ?3 AND name = '${COUNT_SIGNAL_NAME}' AND deleted_at IS NULL
      ORDER BY id LIMIT 1
    )
    INSERT INTO production_logs (id, company_id, machine_id, sku_id, shift_instance_id, operator_id,
      simple_work_order_id, type, count, sensor_count, nominal_speed, counting_factor, start, "end",
      is_reviewed, is_automated, live, created_at, updated_at)
    SELECT ?1, CAST(?2 AS INTEGER), CAST(?3 AS INTEGER), ?4, CAST(?5 AS INTEGER), CAST(?6 AS INTEGER),
      ?7, 'total', CAST(ROUND(ROUND(n) * ?9) AS INTEGER), CAST(ROUND(n) AS INTEGER), ?8, ?9,
      CAST(?10 AS INTEGER), CAST(?11 AS INTEGER), 0, 1, CAST(?12 AS INTEGER),
      CAST(?13 AS INTEGER), CAST(?13 AS INTEGER)
    FROM (SELECT ${sum.sql} AS n) WHERE true
    ON CONFLICT (id) DO UPDATE SET
      sku_id = excluded.sku_id, shift_instance_id = excluded.shift_instance_id,
      operator_id = excluded.operator_id, simple_work_order_id = excluded.simple_work_order_id,
      count = excluded.count, sensor_count = excluded.sensor_count,
      nominal_speed = excluded.nominal_speed, counting_factor = excluded.counting_factor,
      start = excluded.start, "end" = excluded."end", live = excluded.live,
      updated_at = excluded.updated_at
    RETURNING id, sensor_count, count`;
  return d1
    .prepare(sql)
    .bind(
      row.id,
      row.companyId,
      row.machineId,
      row.skuId,
      row.shiftInstanceId,
      row.operatorId,
      row.simpleWorkOrderId,
      row.nominalSpeed,
      row.countingFactor,
      row.start,
      row.end,
      row.live ? 1 : 0,
      row.now,
      ...sum.params,
    );
}

/**
 * Removes the live log of a segment that no longer has one (it has not begun
 * at `now`). Only a live row is removed: a closed log is history.
 */
export function deleteLiveLog(d1: D1Database, companyId: number, id: string): D1PreparedStatement {
  return d1
    .prepare(
      "DELETE FROM production_logs WHERE company_id = CAST(?1 AS INTEGER) AND id = ?2 AND live = 1",
    )
    .bind(companyId, id);
}
