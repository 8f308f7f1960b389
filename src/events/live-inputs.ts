/**
 * What a machine stream computes its live OEE from, held in the stream object's memory:
 * the running instance's stops and production logs, read from D1 once per instance (one
 * batch), again when the stream is told its stops changed (a `stop.*` event) and every
 * `RELOAD_MS` as a safety net, and kept up to date between reads by the realtime object,
 * which sends the logs each of its flushes wrote (`LiveLogChange`, with the counts D1
 * stored). The tick then computes the figures from memory with the report's own pure
 * functions (`src/reports/oee.ts`), on the same records the report would read.
 *
 * Why: reading a metrics-report row from D1 on every tick was 44 of the 82 D1 round trips
 * a busy machine cost per minute (docs/scaling.md).
 */
import { ownedText } from "../db/company-scope";
import type { LogSpan, StopSpan } from "../reports/oee";

/** How often the inputs are read again even when nothing said they changed, ms. */
export const RELOAD_MS = 15 * 60_000;

/** A production log as the live figures keep it: its span, and its id to update it by. */
export interface LiveLogSpan extends LogSpan {
  id: string;
}

/**
 * What one flush of a realtime object changed in D1: the logs it wrote (as D1 stored them)
 * and the ones it removed, for its instance.
 */
export interface LiveLogChange {
  instanceId: number;
  upserted: LiveLogSpan[];
  removed: string[];
}

/** The stops and logs of one instance, as last read or told. */
export interface InstanceInputs {
  instanceId: number;
  start: number;
  end: number;
  stops: StopSpan[];
  logs: Map<string, LiveLogSpan>;
  /** When they were read from D1, ms. */
  loadedAt: number;
}

interface StopRow {
  start_time: number;
  end_time: number | null;
  is_programmed: number;
  is_included_in_availability: number;
  classified: number;
}

interface LogRow {
  id: string;
  start: number;
  end: number;
  type: LogSpan["type"];
  count: number;
  nominal_speed: number;
}

const STOP_COLUMNS = `s.start_time, s.end_time, s.is_programmed, s.is_included_in_availability,
  (SELECT 1 FROM stop_classifications AS c WHERE c.stop_id = s.id) IS NOT NULL AS classified`;

/**
 * Reads the stops and production logs of one machine that overlap `[start, end)`, as the
 * metrics report does (`src/reports/page-spans.ts`: deleted ones left out; closed ones from
 * the machine's longest one before the window on the duration index, open stops by
 * (machine, end_time)), in one batch of three statements.
 *
 * @param d1 the D1 binding.
 * @param machine the company and machine (internal ids).
 * @param window the instance, ms.
 * @param now the instant of the read, ms (kept as `loadedAt`).
 */
export async function loadInstanceInputs(
  d1: D1Database,
  machine: { companyId: number; machineId: number },
  window: { instanceId: number; start: number; end: number },
  now: number,
): Promise<InstanceInputs> {
  const { companyId, machineId } = machine;
  const { start, end } = window;
  const [closed, open, logs] = await d1.batch<StopRow | LogRow>([
    d1
      .prepare(
        `SELECT ${STOP_COLUMNS} FROM stops AS s
         WHERE s.machine_id = ?2
           AND s.start_time >= ?3 - ifnull((SELECT max("d"."end_time" - "d"."start_time")
             FROM stops AS "d" WHERE "d"."machine_id" = ?2), 0)
           AND s.start_time < ?4 AND s.end_time > ?3
           AND ${ownedText("?1", "+s.company_id")} AND s.deleted_at IS NULL`,
      )
      .bind(companyId, machineId, start, end),
    d1
      .prepare(
        `SELECT ${STOP_COLUMNS} FROM stops AS s
         WHERE s.machine_id = ?2 AND s.end_time IS NULL AND +s.start_time < ?3
           AND ${ownedText("?1", "+s.company_id")} AND s.deleted_at IS NULL`,
      )
      .bind(companyId, machineId, end),
    d1
      .prepare(
        `SELECT l.id, l.start, l."end", l.type, l.count, l.nominal_speed FROM production_logs AS l
         WHERE l.machine_id = ?2
           AND l.start >= ?3 - ifnull((SELECT max("d"."end" - "d"."start")
             FROM production_logs AS "d" WHERE "d"."machine_id" = ?2), 0)
           AND l.start < ?4 AND l."end" > ?3
           AND ${ownedText("?1", "+l.company_id")} AND l.deleted_at IS NULL`,
      )
      .bind(companyId, machineId, start, end),
  ]);
  const toStop = (r: StopRow): StopSpan => ({
    start: r.start_time,
    end: r.end_time,
    isProgrammed: r.is_programmed === 1,
    isIncludedInAvailability: r.is_included_in_availability === 1,
    isClassified: r.classified === 1,
  });
  const stops = [
    ...((closed?.results ?? []) as StopRow[]),
    ...((open?.results ?? []) as StopRow[]),
  ].map(toStop);
  const byId = new Map<string, LiveLogSpan>();
  for (const r of (logs?.results ?? []) as LogRow[]) {
    byId.set(r.id, {
      id: r.id,
      start: r.start,
      end: r.end,
      type: r.type,
      count: r.count,
      nominalSpeed: r.nominal_speed,
    });
  }
  return { ...window, stops, logs: byId, loadedAt: now };
}

/**
 * Applies what a realtime flush wrote to the inputs it concerns (the same instance).
 *
 * @returns false when the change is for another instance (the inputs are left as they are).
 */
export function applyLogChange(inputs: InstanceInputs, change: LiveLogChange): boolean {
  if (change.instanceId !== inputs.instanceId) return false;
  for (const id of change.removed) inputs.logs.delete(id);
  for (const log of change.upserted) inputs.logs.set(log.id, { ...log });
  return true;
}

/** The inputs' stops and logs as the report's functions take them, for `[start, end)`. */
export function spansOf(inputs: InstanceInputs): {
  stops: StopSpan[];
  overlapping: LiveLogSpan[];
  owned: LiveLogSpan[];
} {
  const { start, end } = inputs;
  const logs = [...inputs.logs.values()].sort((a, b) => a.start - b.start);
  return {
    stops: inputs.stops.filter((s) => s.start < end && (s.end === null || s.end > start)),
    overlapping: logs.filter((l) => l.start < end && l.end > start),
    // docs/metrics.md: a log belongs to the instance that contains its start.
    owned: logs.filter((l) => l.start >= start && l.start < end),
  };
}
