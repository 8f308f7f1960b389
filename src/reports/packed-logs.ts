/**
 * A page's production logs as one statement reads them (src/reports/page-spans.ts): the
 * windows of starts to read, per machine around its stretches of instances and an hour slice
 * at a time; the statement, in which SQLite packs each window's logs into one JSON text
 * (one `JSON.parse` each rather than a row per log), instants as offsets from the page's
 * start, nominal speeds as exact decimal text; and the texts read back into logs.
 * docs/bounded-work.md ("Metrics report: any range, a page reads its own span").
 */

import { type SQL, sql } from "drizzle-orm";
import { ownedSql } from "../db/company-scope";
import { productionLogs } from "../db/schema";
import type { LogSpan } from "./oee";

/**
 * Length of the span's slices whose logs travel as one JSON text, ms. An entry
 * is at most about 90 bytes (five numbers and a type; 35 for typical logs), so
 * a text reaches D1's 2,000,000-byte limit on a string only past 22,000 logs
 * starting within one hour on one machine (six a second; the benchmark's
 * heaviest shift has one every 2 seconds). Shorter slices cost more: a page of
 * 20 machines over two days is 20 x 48 windows at one hour.
 */
export const SLICE_MS = 60 * 60_000;

/** What a log is attributed to in the KPI report (read only when asked: `attributed`). */
interface LogAttribution {
  skuId: string | null;
  operatorId: number | null;
  simpleWorkOrderId: string | null;
}

/** A log as the page's lookups return it; the attribution and id are present when asked for. */
export type SpanLog = LogSpan & Partial<LogAttribution> & { id?: string };

/**
 * What each log read carries beyond its span: nothing more (the metrics report), its
 * attribution (the KPI report), or its attribution and id (the live figures of a machine's
 * stream, which keep the logs by id to apply what a realtime flush changed).
 */
export type LogDetail = "span" | "attributed" | "identified";

/** A log read for a page, with its machine. */
export type MachineLog = SpanLog & { machineId: number };

/**
 * One log as SQLite packs it: machine, start - from, end - start, type, count,
 * nominal speed as text. SQLite's JSON writes a REAL with 15 significant
 * digits, which does not always give back the same double; `%!.17g` does, and
 * `Number` reads it back exactly.
 */
type PackedLog = [
  number,
  number,
  number,
  LogSpan["type"],
  number,
  string,
  ...(
    | []
    | [string | null, number | null, string | null]
    | [string | null, number | null, string | null, string]
  ),
];

/** A window of log starts: `[machineId, lowerStart, upperStart]`, ms (see `packedLogsQuery`). */
type LogWindow = [number, number | null, number];

/**
 * The statement packing the logs of each window into one JSON text (a
 * `PackedLog[]`), one result row per window that has logs.
 *
 * @param companyId the company (every log read is of it).
 * @param from start of the page's span, ms: offsets are from it.
 * @param windows `[machineId, lowerStart, upperStart]`: the logs of the machine
 *   starting in `[lowerStart, upperStart)`; a null `lowerStart` is `upperStart` less
 *   the machine's longest log, and then only the logs ending after `upperStart` (the
 *   logs that start before a stretch of the page's instances and reach into it).
 * @param detail also pack each log's SKU, operator and simple work order (`attributed`), and
 *   its id (`identified`).
 */
export function packedLogsQuery(
  companyId: number,
  from: number,
  windows: readonly Readonly<LogWindow>[],
  detail: LogDetail = "span",
): SQL {
  const attribution =
    detail === "span"
      ? sql``
      : detail === "attributed"
        ? sql`, l.sku_id, l.operator_id, l.simple_work_order_id`
        : sql`, l.sku_id, l.operator_id, l.simple_work_order_id, l.id`;
  const w = windowRows(windows);
  // The longest log of the machine: a seek on the (machine, duration) expression
  // index, whose expression this must read exactly as (src/db/schema.ts).
  // Empty windows are left out in SQL: every result row costs the Worker as much as a log.
  return sql`SELECT packed FROM (SELECT (SELECT json_group_array(json_array(
        l.machine_id, l.start - ${from}, l."end" - l.start, l.type, l.count,
        printf('%!.17g', l.nominal_speed)${attribution}))
      FROM ${productionLogs} AS l
      WHERE l.machine_id = ${w.machine}
        AND l.start >= ifnull(${w.lower}, ${w.upper} - ifnull((SELECT max("d"."end" - "d"."start")
          FROM ${productionLogs} AS "d" WHERE "d"."machine_id" = ${w.machine}), 0))
        AND l.start < ${w.upper} AND (${w.lower} IS NOT NULL OR l."end" > ${w.upper})
        AND ${ownedSql({ companyId }, "+l.company_id")} AND l.deleted_at IS NULL) AS packed
    FROM ${w.source}) WHERE packed <> '[]'`;
}

/**
 * Most windows written into the SQL text as a `VALUES` list: at about 35 bytes
 * each, some 53 KB, within D1's 100 KB statement limit with the rest of the query.
 */
const LITERAL_WINDOWS_MAX = 1_500;

/**
 * The windows as a row source `w` with the expressions of its three columns.
 * Written as a `VALUES` list of integer literals when they fit: D1 counts each
 * `json_each` row as a row read (a page of 50 machines over two shifts paid 17
 * rows read per machine for its windows alone), a `VALUES` row it does not. A
 * longer list is bound as one JSON parameter read with `json_each`.
 */
function windowRows(windows: readonly Readonly<LogWindow>[]): {
  source: SQL;
  machine: SQL;
  lower: SQL;
  upper: SQL;
} {
  const literal = (v: number | null) => v === null || Number.isSafeInteger(v);
  if (
    windows.length > 0 &&
    windows.length <= LITERAL_WINDOWS_MAX &&
    windows.every(([m, a, b]) => literal(m) && literal(a) && literal(b))
  ) {
    const rows = windows.map(([m, a, b]) => `(${m}, ${a === null ? "NULL" : a}, ${b})`);
    return {
      // Safe integers and NULL only: the text cannot carry anything but numbers.
      source: sql`(VALUES ${sql.raw(rows.join(", "))}) AS w`,
      machine: sql.raw("w.column1"),
      lower: sql.raw("w.column2"),
      upper: sql.raw("w.column3"),
    };
  }
  return {
    source: sql`json_each(${JSON.stringify(windows)}) AS w`,
    machine: sql.raw("w.value ->> 0"),
    lower: sql.raw("w.value ->> 1"),
    upper: sql.raw("w.value ->> 2"),
  };
}

/**
 * Instances of a machine less than this apart are read as one stretch (the logs of the gap
 * with them); farther apart, each stretch is read on its own, so that a page of sparse
 * instances (a weekly shift) reads around its instances, not the years between them.
 */
const STRETCH_GAP_MS = 24 * 60 * 60_000;

/** The stretches `[start, end)` of a machine's instances, ascending, merged across short gaps. */
function stretchesOf(instances: readonly { start: number; end: number }[]): [number, number][] {
  const sorted = [...instances].sort((a, b) => a.start - b.start);
  const out: [number, number][] = [];
  for (const { start, end } of sorted) {
    const last = out[out.length - 1];
    if (last && start - last[1] < STRETCH_GAP_MS) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

/**
 * The windows of starts whose logs a page reads: per machine and stretch of its instances
 * (`stretchesOf`), the logs that start before the stretch and reach into it (from the
 * machine's longest log before it: a null lower start), then the stretch cut into
 * `SLICE_MS` slices.
 *
 * @param byMachine the page's instances per machine, `{start, end}` in ms.
 * @returns the windows, in ms, for `packedLogsQuery`.
 */
export function logWindows(
  byMachine: ReadonlyMap<number, readonly { start: number; end: number }[]>,
): LogWindow[] {
  const windows: LogWindow[] = [];
  for (const [machineId, list] of byMachine) {
    for (const [a, b] of stretchesOf(list)) {
      windows.push([machineId, null, a]);
      for (let t = a; t < b; t += SLICE_MS) windows.push([machineId, t, Math.min(t + SLICE_MS, b)]);
    }
  }
  return windows;
}

/**
 * The logs of the statement's packed texts (`packedLogsQuery`), each with its machine: its
 * span back to instants (`from` plus the offsets), its nominal speed back to the exact
 * double, its attribution and id where the statement packed them.
 *
 * @param chunks the statement's rows, one JSON text (a `PackedLog[]`) each.
 * @param from the start of the page's span the offsets are from, ms.
 * @returns the logs, in the texts' order.
 */
export function unpackLogs(chunks: readonly { packed: string }[], from: number): MachineLog[] {
  const logs: MachineLog[] = [];
  for (const { packed } of chunks) {
    for (const entry of JSON.parse(packed) as PackedLog[]) {
      const [machineId, offset, length, type, count, nominalSpeed] = entry;
      const start = from + offset;
      const log: MachineLog = {
        machineId,
        start,
        end: start + length,
        type,
        count,
        nominalSpeed: Number(nominalSpeed),
      };
      if (entry.length > 6) {
        log.skuId = entry[6] ?? null;
        log.operatorId = entry[7] ?? null;
        log.simpleWorkOrderId = entry[8] ?? null;
      }
      if (entry.length > 9) log.id = entry[9];
      logs.push(log);
    }
  }
  return logs;
}
