/**
 * Sums of a machine's `count` signal over time windows: the sensor pulses the
 * machine measured, which become a production log's `sensorCount`.
 *
 * The signal is the machine's lowest-id non-deleted signal named `count` (a
 * second one, if any, is a different sensor, not more pulses), as for the live
 * logs of the realtime timeline (src/realtime/projection.ts). A window
 * `[start, end)` reads the hourly and minute rollups where whole buckets fit and
 * raw samples at the edges (`planWindow`), so a long window costs a few index
 * lookups; all windows go in one statement.
 */
import type { Env } from "../../env";
import { planWindow } from "./aggregate";

/** Name of the signal whose samples are the machine's sensor pulses. */
export const COUNT_SIGNAL_NAME = "count";

/** Most windows per statement: its one JSON parameter stays far below D1's 2 MB per value. */
const WINDOWS_PER_STATEMENT = 1_000;

/**
 * Sums the samples of the machine's `count` signal in each window.
 *
 * @param env the Worker's bindings (`DB`).
 * @param machine the company and the machine (integer ids).
 * @param windows instants in ms, `start` included, `end` excluded.
 * @returns one sum per window, in order: 0 for a window without samples, and for
 *   every window when the machine has no `count` signal. Sums are not rounded.
 */
export async function sumCountSignal(
  env: Env,
  machine: { companyId: number; machineId: number },
  windows: readonly { start: number; end: number }[],
): Promise<number[]> {
  if (windows.length === 0) return [];
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < windows.length; i += WINDOWS_PER_STATEMENT) {
    const chunk = windows.slice(i, i + WINDOWS_PER_STATEMENT).map((w, j) => ({
      i: i + j,
      // Any multiple of 3,600 s lets both rollup levels serve the single result bucket.
      parts: planWindow(w.start, w.end, 3_600_000).map((part) => [
        part.source === "raw" ? 0 : part.source,
        part.from,
        part.to,
      ]),
    }));
    statements.push(
      env.DB.prepare(SUM_SQL).bind(machine.companyId, machine.machineId, JSON.stringify(chunk)),
    );
  }
  const results = await env.DB.batch<{ i: number; n: number }>(statements);
  const sums = windows.map(() => 0);
  for (const result of results) for (const row of result.results) sums[row.i] = row.n;
  return sums;
}

/**
 * ?1 company, ?2 machine, ?3 the windows as `[{i, parts: [[source, from, to], ...]}]`
 * (source: rollup width in seconds, or 0 for raw samples). One row `{i, n}` per window.
 */
const SUM_SQL = `WITH sig(id) AS (
    SELECT id FROM signals
    WHERE company_id = ?1 AND machine_id = ?2 AND name = '${COUNT_SIGNAL_NAME}' AND deleted_at IS NULL
    ORDER BY id LIMIT 1
  )
  SELECT w.value ->> 'i' AS i, (
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
    FROM json_each(w.value, '$.parts') AS p
  ) AS n
  FROM json_each(?3) AS w`;
