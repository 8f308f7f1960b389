/**
 * The stops and production logs one page of the metrics report needs, read around the page's
 * instances only (per machine and stretch of instances, from the stretch's start minus the
 * machine's longest log: one seek on the duration index), with a per-machine lookup by
 * binary search. Logs travel packed by SQLite as JSON texts per machine and `SLICE_MS` slice
 * (one `JSON.parse` each rather than a row per log), instants as offsets, nominal speeds as
 * exact decimal text. The one reader of an instance's records, for reports and live figures.
 * docs/bounded-work.md ("Metrics report: any range, a page reads its own span").
 */

import { and, type Column, eq, gt, gte, isNull, lt, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, owned, ownedSql } from "../db/company-scope";
import { machines, productionLogs, stopClassifications, stops } from "../db/schema";
import { inIntegerList } from "../http/filters";
import { overlapsInstance } from "../shifts/instances";
import type { LogSpan, StopSpan } from "./oee";

/**
 * Length of the span's slices whose logs travel as one JSON text, ms. An entry
 * is at most about 90 bytes (five numbers and a type; 35 for typical logs), so
 * a text reaches D1's 2,000,000-byte limit on a string only past 22,000 logs
 * starting within one hour on one machine (six a second; the benchmark's
 * heaviest shift has one every 2 seconds). Shorter slices cost more: a page of
 * 20 machines over two days is 20 x 48 windows at one hour.
 */
export const SLICE_MS = 60 * 60_000;

/**
 * Items sorted by `start`, with a lookup of those overlapping a window.
 * `maxLength` is the longest `end - start` among them (open stops are kept
 * apart), so every item overlapping `[a, b)` starts in `[a - maxLength, b)`:
 * a binary search finds that run.
 */
class ByStart<T extends { start: number }> {
  private readonly items: T[];
  private readonly maxLength: number;

  constructor(items: T[], lengthOf: (item: T) => number) {
    this.items = items.sort((x, y) => x.start - y.start);
    this.maxLength = this.items.reduce((m, i) => Math.max(m, lengthOf(i)), 0);
  }

  /** Index of the first item whose start is >= t. */
  private lowerBound(t: number): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.items[mid]?.start ?? Number.POSITIVE_INFINITY) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The items whose start lies in `[from, to)`, ascending. */
  startingIn(from: number, to: number): T[] {
    return this.items.slice(this.lowerBound(from), this.lowerBound(to));
  }

  /** The items that may overlap `[a, b)`: those starting in `[a - maxLength, b)`. */
  candidatesFor(a: number, b: number): T[] {
    return this.startingIn(a - this.maxLength, b);
  }
}

/**
 * `column = value`, written `+column` so that SQLite does not use an index
 * led by `column`: with (company_id, start) indexes available the planner
 * would otherwise walk every log (stop) of the company up to the page's end,
 * instead of the (machine, start) range of the page's machines.
 */
function notAnIndex(column: Column, value: number): SQL {
  return sql`+${column} = ${value}`;
}

function groupByMachine<T extends { machineId: number }>(rows: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const list = out.get(r.machineId);
    if (list) list.push(r);
    else out.set(r.machineId, [r]);
  }
  return out;
}

type MachineStop = StopSpan & { machineId: number };
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
type LogDetail = "span" | "attributed" | "identified";

type MachineLog = SpanLog & { machineId: number };

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
  windows: readonly (readonly [number, number | null, number])[],
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
function windowRows(windows: readonly (readonly [number, number | null, number])[]): {
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

/** The page's stops and logs, per machine. */
interface PageSpans {
  /** The machine's stops (open ones included) overlapping `[start, end)`. */
  stopsOverlapping(machineId: number, start: number, end: number): StopSpan[];
  /** The machine's logs overlapping `[start, end)`. */
  logsOverlapping(machineId: number, start: number, end: number): SpanLog[];
  /** The machine's logs whose start lies in `[start, end)` (the logs an instance owns). */
  logsStartingIn(machineId: number, start: number, end: number): SpanLog[];
}

/** A shift instance of a page: its machine and window, ms. */
interface PageInstance {
  machineId: number;
  start: number;
  end: number;
}

/**
 * Instances of a machine less than this apart are read as one stretch (the logs of the gap
 * with them); farther apart, each stretch is read on its own, so that a page of sparse
 * instances (a weekly shift) reads around its instances, not the years between them.
 */
const STRETCH_GAP_MS = 24 * 60 * 60_000;

/** The stretches `[start, end)` of a machine's instances, ascending, merged across short gaps. */
function stretchesOf(instances: readonly PageInstance[]): [number, number][] {
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
 * Reads the stops and logs that overlap a page's instances: three statements at
 * once (closed stops and open stops in one batch, the logs as packed JSON texts).
 * Logs are read per machine around its stretches of instances (`STRETCH_GAP_MS`),
 * an hour slice at a time; stops over the page's whole span.
 *
 * @param scope the company (every row read is of it).
 * @param instances the page's instances (of that company's machines).
 * @param detail what each log carries beyond its span (`LogDetail`).
 */
export async function loadPageSpans(
  scope: CompanyScope,
  instances: readonly PageInstance[],
  detail: LogDetail = "span",
): Promise<PageSpans> {
  const { db, companyId } = scope;
  const byMachine = groupByMachine(instances);
  const machineIds = [...byMachine.keys()];
  const from = Math.min(...instances.map((i) => i.start));
  const to = Math.max(...instances.map((i) => i.end));
  // The longest stop (log) of the machine bounds how far before the span an
  // overlapping one can start: a seek on the (machine, duration) expression index.
  // The expressions must read exactly as in the index definitions (src/db/schema.ts).
  const longestStop = sql`(SELECT max("d"."end_time" - "d"."start_time") FROM ${stops} AS "d"
    WHERE "d"."machine_id" = ${machines.id})`;
  const stopColumns = {
    machineId: stops.machineId,
    start: stops.startTime,
    end: stops.endTime,
    isProgrammed: stops.isProgrammed,
    isIncludedInAvailability: stops.isIncludedInAvailability,
    isClassified: sql<number>`${stopClassifications.id} IS NOT NULL`,
  };
  const pageMachineRows = owned({ companyId }, machines, inIntegerList(machines.id, machineIds));
  // Per machine and stretch: the logs that start before it and reach into it (from the
  // machine's longest log before it), then the stretch cut into slices.
  const windows: [number, number | null, number][] = [];
  for (const [machineId, list] of byMachine) {
    for (const [a, b] of stretchesOf(list)) {
      windows.push([machineId, null, a]);
      for (let t = a; t < b; t += SLICE_MS) windows.push([machineId, t, Math.min(t + SLICE_MS, b)]);
    }
  }
  const [[closedStopRows, openStopRows], logChunks] = await Promise.all([
    db.batch([
      db
        .select(stopColumns)
        .from(machines)
        .innerJoin(
          stops,
          and(
            eq(stops.machineId, machines.id),
            gte(stops.startTime, sql`${from} - ifnull(${longestStop}, 0)`),
            lt(stops.startTime, to),
            gt(stops.endTime, from),
          ),
        )
        .leftJoin(stopClassifications, eq(stopClassifications.stopId, stops.id))
        .where(
          and(pageMachineRows, notAnIndex(stops.companyId, companyId), isNull(stops.deletedAt)),
        ),
      db
        .select(stopColumns)
        .from(stops)
        .leftJoin(stopClassifications, eq(stopClassifications.stopId, stops.id))
        .where(
          and(
            notAnIndex(stops.companyId, companyId),
            inIntegerList(stops.machineId, machineIds),
            isNull(stops.endTime),
            // `+`: reach open stops by (machine, end_time), not by every earlier start.
            sql`+${stops.startTime} < ${to}`,
            isNull(stops.deletedAt),
          ),
        ),
    ] as const),
    db.all<{ packed: string }>(packedLogsQuery(companyId, from, windows, detail)),
  ]);

  const toStop = (s: (typeof closedStopRows)[number]): MachineStop => ({
    ...s,
    isClassified: Boolean(s.isClassified),
  });
  const closedByMachine = new Map<number, ByStart<MachineStop>>();
  for (const [machineId, list] of groupByMachine(closedStopRows.map(toStop))) {
    closedByMachine.set(machineId, new ByStart(list, (s) => (s.end ?? s.start) - s.start));
  }
  const openByMachine = groupByMachine(openStopRows.map(toStop));
  const logRows: MachineLog[] = [];
  for (const { packed } of logChunks) {
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
      logRows.push(log);
    }
  }
  const logsByMachine = new Map<number, ByStart<MachineLog>>();
  for (const [machineId, list] of groupByMachine(logRows)) {
    logsByMachine.set(machineId, new ByStart(list, (l) => l.end - l.start));
  }

  // An open stop runs on (to the end of any window that starts after it).
  const stopSpan = (s: StopSpan) => ({ start: s.start, end: s.end ?? Number.POSITIVE_INFINITY });
  return {
    stopsOverlapping: (machineId, start, end) =>
      [
        ...(closedByMachine.get(machineId)?.candidatesFor(start, end) ?? []),
        ...(openByMachine.get(machineId) ?? []),
      ].filter((s) => overlapsInstance({ start, end }, stopSpan(s))),
    logsOverlapping: (machineId, start, end) =>
      (logsByMachine.get(machineId)?.candidatesFor(start, end) ?? []).filter((l) =>
        overlapsInstance({ start, end }, l),
      ),
    logsStartingIn: (machineId, start, end) =>
      logsByMachine.get(machineId)?.startingIn(start, end) ?? [],
  };
}
