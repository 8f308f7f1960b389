/**
 * The D1 statements that show a machine's timeline as production logs.
 *
 * Each SKU segment of the running instance is one `production_logs` row with
 * `live = 1`, `is_automated = 1`, `type = 'total'`, written by the machine's
 * Durable Object (never by the public production-log endpoints, which refuse
 * the running shift). The row's `sensor_count` is the sum of the machine's
 * `count` signal samples with `start <= ts < end`, which the caller reads from
 * the machine's signal store (`sumCountSignal`) and passes in with the log.
 * `count = sensorCount x countingFactor`, rounded to an integer (the spec's
 * definition of `count`; `sensor_count` and `count` are integer columns).
 */
import { ownedText } from "../db/company-scope";
import { inJsonListText } from "../db/json-list";
import { REALTIME_LOG_COLUMNS } from "../resources/production-logs/running-shift";

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
  /** Sum of the machine's `count` samples in `[start, end)` (`sumCountSignal`); rounded here. */
  sensorCount: number;
}

/** The counts the database computed for a log. */
export interface LogCounts {
  id: string;
  sensorCount: number;
  count: number;
}

/** Most logs per upsert statement: its one JSON parameter stays far below D1's 2 MB per value. */
export const LOGS_PER_STATEMENT = 500;

/**
 * Upserts of segments' logs, `LOGS_PER_STATEMENT` per statement, that store
 * their counts and return them. Each statement reads its logs
 * from one JSON parameter (`json_each`), so a flush of any number of segments
 * costs D1 one statement per 500 logs, not one per log (D1 allows 1,000 queries
 * per invocation, and each costs a round of parsing and planning).
 * Only `REALTIME_LOG_COLUMNS` are written (the live-log owner's list,
 * src/resources/production-logs/running-shift.ts): `is_reviewed` and `work_order_id`
 * belong to the log's reviewers, and a deleted row (`deleted_at`) is left as it is, so
 * that nothing counts it again. A row that already holds every value (the periodic
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
    const chunk = logs
      .slice(i, i + LOGS_PER_STATEMENT)
      .map((log) => ({ ...log, live: log.live ? 1 : 0 }));
    statements.push(
      d1
        .prepare(UPSERT_LIVE_LOGS_SQL)
        .bind(machine.companyId, machine.machineId, JSON.stringify(chunk)),
    );
  }
  return statements;
}

const quoted = (column: string) => `"${column}"`;
/** The columns the object writes (`REALTIME_LOG_COLUMNS`), each as `column = excluded.column`. */
const REALTIME_SET = REALTIME_LOG_COLUMNS.map((c) => `${quoted(c)} = excluded.${quoted(c)}`).join(
  ", ",
);
const STORED_TUPLE = REALTIME_LOG_COLUMNS.map((c) => `production_logs.${quoted(c)}`).join(", ");
const EXCLUDED_TUPLE = REALTIME_LOG_COLUMNS.map((c) => `excluded.${quoted(c)}`).join(", ");

/**
 * ?1 company, ?2 machine, ?3 the logs as a JSON array of `LiveLog` with `live`
 * as 0/1. `count = sensorCount x countingFactor`, rounded to an integer. The update
 * sets `REALTIME_LOG_COLUMNS` and nothing else, and leaves a deleted row alone.
 */
const UPSERT_LIVE_LOGS_SQL = `WITH counted AS (
    SELECT l.value AS v, l.value ->> 'sensorCount' AS n FROM json_each(?3) AS l
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
  ON CONFLICT (id) DO UPDATE SET ${REALTIME_SET}, updated_at = excluded.updated_at
  WHERE production_logs.deleted_at IS NULL
    AND (${STORED_TUPLE}) IS NOT (${EXCLUDED_TUPLE})
  RETURNING id, sensor_count, count`;

/** Most ids per count read: its one JSON parameter (about 40 bytes per id) stays far below 2 MB. */
export const IDS_PER_COUNT_READ = 10_000;

/**
 * Reads of the stored counts of logs, for the ones an upsert left unchanged (run after
 * it, in the same batch), `IDS_PER_COUNT_READ` ids per statement.
 *
 * @param companyId the company of the logs; `ids` their ids.
 * @returns the statements (none for no ids); their result rows are
 *   `{id, sensor_count, count}`, one per stored log that is not deleted.
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
           WHERE ${ownedText("?1")} AND ${inJsonListText("id", "?2")}
             AND deleted_at IS NULL`,
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
    .prepare(`DELETE FROM production_logs WHERE ${ownedText("?1")} AND id = ?2 AND live = 1`)
    .bind(companyId, id);
}
