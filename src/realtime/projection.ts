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
import { COUNT_SIGNAL_NAME } from "../resources/signals/count-sums";

/** What one production log row of a segment holds (besides its company and machine); instants in ms. */
export interface LiveLog {
  id: string;
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

/** Most logs per upsert statement: its one JSON parameter stays far below D1's 2 MB per value. */
export const LOGS_PER_STATEMENT = 500;

/** A rollup width in seconds, or 0 for raw samples: a part of `planWindow` as the SQL reads it. */
type PartRow = [source: number, from: number, to: number];

/**
 * Upserts of segments' logs, `LOGS_PER_STATEMENT` per statement, that compute
 * their counts from the samples and return them. Each statement reads its logs
 * from one JSON parameter (`json_each`), so a flush of any number of segments
 * costs D1 one statement per 500 logs, not one per log (D1 allows 1,000 queries
 * per invocation, and each costs a round of parsing and planning). Each log's
 * window comes with its `planWindow` parts (hourly and minute rollups where they
 * fit, raw samples at the edges), so a long segment costs a few index lookups.
 * A row deleted through the public API stays deleted (its `deleted_at` is not
 * touched); `is_reviewed` and `work_order_id` belong to the log's reviewers and
 * are not touched either. A row that already holds every value (the periodic
 * refresh of a log whose samples did not change) is left as it is, `updated_at`
 * included: a client syncing logs by `updatedAt` sees only real changes, and the
 * database writes nothing.
 *
 * @param d1 the D1 binding.
 * @param machine the company and machine every log belongs to.
 * @param logs the logs, instants in ms.
 * @returns the statements (none for no logs); their result rows are
 *   `{id, sensor_count, count}`, one per log inserted or changed (see
 *   `readLogCounts` for the others).
 */
export function upsertLiveLogs(
  d1: D1Database,
  machine: { companyId: number; machineId: number },
  logs: readonly LiveLog[],
): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < logs.length; i += LOGS_PER_STATEMENT) {
    const chunk = logs.slice(i, i + LOGS_PER_STATEMENT).map((log) => ({
      ...log,
      live: log.live ? 1 : 0,
      // Any multiple of 3,600 s lets both rollup levels serve the single result bucket.
      parts: planWindow(log.start, log.end, 3_600_000).map(
        (part): PartRow => [part.source === "raw" ? 0 : part.source, part.from, part.to],
      ),
    }));
    statements.push(
      d1
        .prepare(UPSERT_LIVE_LOGS_SQL)
        .bind(machine.companyId, machine.machineId, JSON.stringify(chunk)),
    );
  }
  return statements;
}

/**
 * ?1 company, ?2 machine, ?3 the logs as a JSON array of `LiveLog` with `live`
 * as 0/1 and `parts` as `[source, from, to]` (source: rollup width in seconds,
 * or 0 for raw samples). The signal is the machine's lowest-id non-deleted
 * signal named `count` (a second one, if any, is a different sensor, not more
 * pulses). `count = sensorCount x countingFactor`, rounded to an integer.
 */
const UPSERT_LIVE_LOGS_SQL = `WITH sig(id) AS (
    SELECT id FROM signals
    WHERE company_id = ?1 AND machine_id = ?2 AND name = '${COUNT_SIGNAL_NAME}' AND deleted_at IS NULL
    ORDER BY id LIMIT 1
  ),
  counted AS (
    SELECT l.value AS v, (
      SELECT COALESCE(SUM(CASE p.value ->> 0
        WHEN 0 THEN (
          SELECT SUM(value) FROM signal_samples
          WHERE company_id = ?1 AND signal_id = (SELECT id FROM sig)
            AND ts >= p.value ->> 1 AND ts < p.value ->> 2)
        ELSE (
          SELECT SUM(value_sum) FROM signal_rollups
          WHERE company_id = ?1 AND signal_id = (SELECT id FROM sig)
            AND width_seconds = p.value ->> 0
            AND bucket_start >= p.value ->> 1 AND bucket_start < p.value ->> 2)
        END), 0)
      FROM json_each(l.value, '$.parts') AS p
    ) AS n
    FROM json_each(?3) AS l
  )
  INSERT INTO production_logs (id, company_id, machine_id, sku_id, shift_instance_id, operator_id,
    simple_work_order_id, type, count, sensor_count, nominal_speed, counting_factor, start, "end",
    is_reviewed, is_automated, live, created_at, updated_at)
  SELECT v ->> 'id', CAST(?1 AS INTEGER), CAST(?2 AS INTEGER), v ->> 'skuId',
    v ->> 'shiftInstanceId', v ->> 'operatorId', v ->> 'simpleWorkOrderId', 'total',
    CAST(ROUND(ROUND(n) * (v ->> 'countingFactor')) AS INTEGER), CAST(ROUND(n) AS INTEGER),
    v ->> 'nominalSpeed', v ->> 'countingFactor', v ->> 'start', v ->> 'end', 0, 1,
    v ->> 'live', v ->> 'now', v ->> 'now'
  FROM counted WHERE true
  ON CONFLICT (id) DO UPDATE SET
    sku_id = excluded.sku_id, shift_instance_id = excluded.shift_instance_id,
    operator_id = excluded.operator_id, simple_work_order_id = excluded.simple_work_order_id,
    count = excluded.count, sensor_count = excluded.sensor_count,
    nominal_speed = excluded.nominal_speed, counting_factor = excluded.counting_factor,
    start = excluded.start, "end" = excluded."end", live = excluded.live,
    updated_at = excluded.updated_at
  WHERE (production_logs.sku_id, production_logs.shift_instance_id, production_logs.operator_id,
      production_logs.simple_work_order_id, production_logs.count, production_logs.sensor_count,
      production_logs.nominal_speed, production_logs.counting_factor, production_logs.start,
      production_logs."end", production_logs.live)
    IS NOT (excluded.sku_id, excluded.shift_instance_id, excluded.operator_id,
      excluded.simple_work_order_id, excluded.count, excluded.sensor_count,
      excluded.nominal_speed, excluded.counting_factor, excluded.start, excluded."end",
      excluded.live)
  RETURNING id, sensor_count, count`;

/** Most ids per count read: its one JSON parameter (about 40 bytes per id) stays far below 2 MB. */
export const IDS_PER_COUNT_READ = 10_000;

/**
 * Reads of the stored counts of logs, for the ones an upsert left unchanged (run after
 * it, in the same batch), `IDS_PER_COUNT_READ` ids per statement.
 *
 * @param companyId the company of the logs; `ids` their ids.
 * @returns the statements (none for no ids); their result rows are
 *   `{id, sensor_count, count}`, one per stored log (deleted ones included).
 */
export function readLogCounts(
  d1: D1Database,
  companyId: number,
  ids: readonly string[],
): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_COUNT_READ) {
    statements.push(
      d1
        .prepare(
          `SELECT id, sensor_count, count FROM production_logs
           WHERE company_id = CAST(?1 AS INTEGER) AND id IN (SELECT value FROM json_each(?2))`,
        )
        .bind(companyId, JSON.stringify(ids.slice(i, i + IDS_PER_COUNT_READ))),
    );
  }
  return statements;
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
