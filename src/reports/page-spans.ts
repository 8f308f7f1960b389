/**
 * The stops and production logs one page of the metrics report needs, read around the page's
 * instances only (stops from the span's start minus the machine's longest stop: one seek on
 * the duration index; logs per machine and stretch of instances, ./packed-logs.ts), with a
 * per-machine lookup by binary search. The one reader of an instance's records, for reports
 * and live figures. docs/bounded-work.md ("Metrics report: any range, a page reads its own
 * span").
 */

import { and, type Column, eq, gt, gte, isNull, lt, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../db/company-scope";
import { machines, stopClassifications, stops } from "../db/schema";
import { inIntegerList } from "../http/filters";
import { overlapsInstance } from "../shifts/instances";
import type { StopSpan } from "./oee";
import {
  type LogDetail,
  logWindows,
  type MachineLog,
  packedLogsQuery,
  type SpanLog,
  unpackLogs,
} from "./packed-logs";

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
 * Reads the stops and logs that overlap a page's instances: three statements at
 * once (closed stops and open stops in one batch, `readStops`; the logs as packed JSON
 * texts, ./packed-logs.ts). Logs are read per machine around its stretches of instances,
 * an hour slice at a time; stops over the page's whole span.
 *
 * @param scope the company (every row read is of it).
 * @param instances the page's instances (of that company's machines); at least one.
 * @param detail what each log carries beyond its span (`LogDetail`).
 * @returns the lookups of the page's stops and logs per machine and window.
 */
export async function loadPageSpans(
  scope: CompanyScope,
  instances: readonly PageInstance[],
  detail: LogDetail = "span",
): Promise<PageSpans> {
  const byMachine = groupByMachine(instances);
  const machineIds = [...byMachine.keys()];
  const from = Math.min(...instances.map((i) => i.start));
  const to = Math.max(...instances.map((i) => i.end));
  const windows = logWindows(byMachine);
  const [{ closed, open }, logChunks] = await Promise.all([
    readStops(scope, machineIds, from, to),
    scope.db.all<{ packed: string }>(packedLogsQuery(scope.companyId, from, windows, detail)),
  ]);
  return lookupsOf(closed, open, unpackLogs(logChunks, from));
}

/**
 * The stops of the page's machines that overlap `[from, to)`, closed and open, in one batch
 * of two statements: the closed ones from the machine's longest stop before `from` (a seek
 * on the (machine, duration) expression index), the open ones by (machine, end_time). Each
 * says whether it is classified (for the annotated downtime). Deleted stops are left out.
 *
 * @param scope the company (every row read is of it).
 * @param machineIds the page's machines.
 * @param from the start of the page's span, ms.
 * @param to the end of the page's span, ms.
 * @returns the closed and the open stops, in no order.
 */
async function readStops(
  scope: CompanyScope,
  machineIds: readonly number[],
  from: number,
  to: number,
): Promise<{ closed: MachineStop[]; open: MachineStop[] }> {
  const { db, companyId } = scope;
  // The longest stop of the machine bounds how far before the span an overlapping one can
  // start: a seek on the (machine, duration) expression index. The expression must read
  // exactly as in the index definition (src/db/schema.ts).
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
  const [closedRows, openRows] = await db.batch([
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
      .where(and(pageMachineRows, notAnIndex(stops.companyId, companyId), isNull(stops.deletedAt))),
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
  ] as const);
  const toStop = (s: (typeof closedRows)[number]): MachineStop => ({
    ...s,
    isClassified: Boolean(s.isClassified),
  });
  return { closed: closedRows.map(toStop), open: openRows.map(toStop) };
}

/**
 * The page's lookups over its records: per machine, closed stops and logs sorted by start
 * with their longest length (`ByStart`: a binary search finds those overlapping a window),
 * open stops apart (an open stop runs on, to the end of any window that starts after it).
 *
 * @param closed the page's closed stops; `open` its open ones; `logs` its logs.
 * @returns the lookups; a window is `[start, end)` in ms, overlap as `overlapsInstance`.
 */
function lookupsOf(
  closed: readonly MachineStop[],
  open: readonly MachineStop[],
  logs: readonly MachineLog[],
): PageSpans {
  const closedByMachine = new Map<number, ByStart<MachineStop>>();
  for (const [machineId, list] of groupByMachine(closed)) {
    closedByMachine.set(machineId, new ByStart(list, (s) => (s.end ?? s.start) - s.start));
  }
  const openByMachine = groupByMachine(open);
  const logsByMachine = new Map<number, ByStart<MachineLog>>();
  for (const [machineId, list] of groupByMachine(logs)) {
    logsByMachine.set(machineId, new ByStart(list, (l) => l.end - l.start));
  }
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
