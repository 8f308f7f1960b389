/**
 * The metrics report (`POST /v1/reports/metrics`): one row per machine x
 * considered shift instance, with the shift indicators and production metrics
 * of docs/metrics.md (computed by the pure functions of `./oee.ts`).
 *
 * Which instances: those of definitions with `isConsidered = true`, of the
 * company's machines passing `machines`, of the definitions passing `shifts`,
 * whose start passes `startDate` and whose end passes `endDate`, and that have
 * started (`start <= now`: a future instance has nothing to report yet).
 * Without any date operator the window of instance starts is the 7 days up to
 * now; a filter with no lower bound covers the 7 days before its upper bound;
 * any wider window is allowed. Ordered by instance start, then machine id.
 *
 * Work is proportional to the page (docs/bounded-work.md), except for what
 * grows with the requested window itself: its instances are materialized once
 * (idempotent; afterwards one planned-versus-stored count), counted and paged
 * in SQL on the covering (company, start, ...) index of shift instances; then only the
 * stops and production logs that overlap the page's time span on the page's
 * machines are read: by (machine, start) from the span's start minus the
 * machine's longest log or stop (an index seek on the duration expression
 * index), and open stops by (machine, end_time). Each row then finds its
 * own logs and stops by binary search. Nothing is cached: a change to a stop
 * or a log shows in the next call.
 */
import { z } from "@hono/zod-openapi";
import { and, asc, type Column, count, eq, gt, gte, isNull, lt, type SQL, sql } from "drizzle-orm";
import type { Principal } from "../auth/principal";
import type { Database } from "../db/client";
import {
  machines,
  productionLogs,
  shiftDefinitions,
  shiftInstances,
  stopClassifications,
  stops,
} from "../db/schema";
import {
  DateComparisonFilter,
  dateConditions,
  dateRange,
  inIntegerList,
  MachinesFilter,
  resolveMachines,
} from "../http/filters";
import { type Page, PageFields, type PageRequest, paginate } from "../http/pagination";
import { idListConditions, integerIdListFields } from "../http/search";
import { ensureInstances, MAX_INSTANCE_MS } from "../shifts/queries";
import {
  computeProductionMetrics,
  computeShiftIndicators,
  type LogSpan,
  type StopSpan,
} from "./oee";
import { CompanyRefSchema, MachineRefSchema, ReportShiftSchema, toReportShift } from "./schemas";

const DAY_MS = 86_400_000;

/** Window of instance starts when the request gives no lower bound: 7 days. */
export const DEFAULT_WINDOW_MS = 7 * DAY_MS;

const minutes = (description: string) =>
  z.number().openapi({ description: `${description} (minutes)` });
const fraction = (description: string) =>
  z.number().openapi({ description: `${description} (a fraction; 0 when its denominator is 0)` });

export const ShiftIndicatorsSchema = z
  .object({
    indicatorId: z
      .number()
      .int()
      .openapi({ description: "Stable id of this row (the shift instance id)." }),
    availableTime: minutes("Length of the shift instance"),
    programmedDowntime: minutes("Time in programmed stops"),
    nonProgrammedDowntime: minutes("Time in non-programmed stops counted in availability"),
    otherStopsTime: minutes("Time in stops not counted in availability"),
    lateStartTime: minutes("Uncovered time before the first covered minute"),
    earlyStopTime: minutes(
      "Uncovered time after the last covered minute, once the shift has ended",
    ),
    noDataTime: minutes("Other uncovered time"),
    unavailableTime: minutes("nonProgrammedDowntime + lateStartTime + earlyStopTime + noDataTime"),
    annotatedDowntime: minutes("Stop time covered by classified stops"),
    availability: fraction("runTime / availableTime"),
    netAvailability: fraction("runTime / (availableTime - programmedDowntime)"),
  })
  .openapi("ShiftIndicators");

export const ProductionMetricsSchema = z
  .object({
    availability: fraction("As in shiftIndicators"),
    netAvailability: fraction("As in shiftIndicators"),
    effectiveness: z.number().openapi({
      description: "Ideal minutes / runTime; not clamped (above 1 = nominal speed too low).",
    }),
    quality: fraction("Good / total count"),
    oee: fraction("availability x effectiveness x quality"),
    netOee: fraction("netAvailability x effectiveness x quality"),
    minutesLostByLowSpeed: minutes("max(0, runTime - ideal minutes)"),
    minutesLostByLowQuality: minutes("Ideal minutes x defects / total count"),
  })
  .openapi("ProductionMetrics");

export const MetricsReportRowSchema = z
  .object({
    company: CompanyRefSchema,
    machine: MachineRefSchema,
    shift: ReportShiftSchema,
    shiftIndicators: ShiftIndicatorsSchema,
    productionMetrics: ProductionMetricsSchema,
  })
  .openapi("MetricsReportRow");

export type MetricsReportRow = z.infer<typeof MetricsReportRowSchema>;

export const MetricsReportFiltersSchema = z
  .object({
    ...PageFields,
    machines: MachinesFilter.openapi({
      description: "`search` (fuzzy, on the machine name), `include`, `exclude` (machine ids).",
    }),
    shifts: z
      .object(integerIdListFields)
      .strict()
      .nullish()
      .openapi({ description: "Shift definition ids to include or exclude." }),
    startDate: DateComparisonFilter.openapi({ description: "On the instance's start." }),
    endDate: DateComparisonFilter.openapi({ description: "On the instance's end." }),
  })
  .strict()
  .openapi("MetricsReportFilters");

export type MetricsReportFilters = z.infer<typeof MetricsReportFiltersSchema>;

/**
 * The window `[from, to)` of instance starts a request covers (see the module
 * docstring for the rules), before the company's first record bounds it.
 *
 * @param filters the parsed body.
 * @param now the current instant, ms.
 * @returns the window; empty when `to <= from`.
 */
export function instanceStartWindow(
  filters: Pick<MetricsReportFilters, "startDate" | "endDate">,
  now: number,
): { from: number; to: number } {
  const byStart = dateRange(filters.startDate);
  const byEnd = dateRange(filters.endDate);
  // An instance ends after it starts, and lasts at most MAX_INSTANCE_MS.
  const froms = [byStart.from, byEnd.from === undefined ? undefined : byEnd.from - MAX_INSTANCE_MS];
  const tos = [byStart.to, byEnd.to, now + 1];
  const to = Math.min(...tos.filter((t): t is number => t !== undefined));
  const lower = froms.filter((f): f is number => f !== undefined);
  const from = lower.length > 0 ? Math.max(...lower) : to - DEFAULT_WINDOW_MS;
  return { from, to };
}

/**
 * Items sorted by `start`, with a lookup of those overlapping a window.
 * `maxLength` is the longest `end - start` among them (open stops are kept
 * apart by the caller), so every item overlapping `[a, b)` starts in
 * `[a - maxLength, b)`: a binary search finds that run.
 */
class ByStart<T extends { start: number }> {
  private readonly items: T[];
  private readonly maxLength: number;

  constructor(items: readonly T[], lengthOf: (item: T) => number) {
    this.items = [...items].sort((x, y) => x.start - y.start);
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

interface PageInstance {
  id: number;
  machineId: number;
  machineName: string;
  start: number;
  end: number;
  name: string;
}

function groupByMachine<T extends { machineId: number }>(rows: readonly T[]): Map<number, T[]> {
  const out = new Map<number, T[]>();
  for (const r of rows) {
    const list = out.get(r.machineId) ?? [];
    list.push(r);
    out.set(r.machineId, list);
  }
  return out;
}

/**
 * One page of the metrics report.
 *
 * @param db Drizzle client.
 * @param principal the caller (its company scopes every query and fills `company`).
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms.
 * @param beforeRead awaited with the page's machine ids before their logs and
 *   stops are read (the realtime read barrier, `src/realtime/barrier.ts`).
 */
export async function metricsReport(
  db: Database,
  principal: Principal,
  filters: MetricsReportFilters,
  page: PageRequest,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<Page<MetricsReportRow>> {
  const companyId = principal.companyId;
  const { from, to } = instanceStartWindow(filters, now);
  const empty = { totalCount: 0, totalPages: 0, currentPage: page.page, rows: [] };
  if (to <= from) return empty;
  const machineRefs = await resolveMachines(db, companyId, filters.machines);
  if (machineRefs.length === 0) return empty;
  const machineIds = machineRefs.map((m) => m.id);
  await ensureInstances(db, companyId, from, to, machineIds);

  const conditions: (SQL | undefined)[] = [
    eq(shiftInstances.companyId, companyId),
    gte(shiftInstances.start, from),
    lt(shiftInstances.start, to),
    inIntegerList(shiftInstances.machineId, machineIds),
    eq(shiftDefinitions.isConsidered, true),
    isNull(shiftDefinitions.deletedAt),
    ...idListConditions(shiftDefinitions.id, filters.shifts),
    ...dateConditions(shiftInstances.start, filters.startDate),
    ...dateConditions(shiftInstances.end, filters.endDate),
  ];
  const where = and(...conditions);
  const found = await paginate(
    page,
    db
      .select({ count: count() })
      .from(shiftInstances)
      .innerJoin(shiftDefinitions, eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId))
      .where(where),
    ({ limit, offset }) =>
      db
        .select({
          id: shiftInstances.id,
          machineId: shiftInstances.machineId,
          machineName: machines.name,
          start: shiftInstances.start,
          end: shiftInstances.end,
          name: shiftDefinitions.name,
        })
        .from(shiftInstances)
        .innerJoin(shiftDefinitions, eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId))
        .innerJoin(machines, eq(machines.id, shiftInstances.machineId))
        .where(where)
        .orderBy(asc(shiftInstances.start), asc(shiftInstances.machineId), asc(shiftInstances.id))
        .limit(limit)
        .offset(offset),
  );
  const instances: PageInstance[] = found.rows;
  if (instances.length === 0) return { ...found, rows: [] };

  const spanFrom = Math.min(...instances.map((i) => i.start));
  const spanTo = Math.max(...instances.map((i) => i.end));
  const pageMachines = [...new Set(instances.map((i) => i.machineId))];
  await beforeRead(pageMachines);
  // The longest log (stop) of the machine bounds how far before the span an
  // overlapping one can start: a seek on the (machine, duration) expression index.
  // The expressions must read exactly as in the index definitions (src/db/schema.ts).
  const longestLog = sql`(SELECT max("d"."end" - "d"."start") FROM ${productionLogs} AS "d"
    WHERE "d"."machine_id" = ${machines.id})`;
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
  const pageMachineRows = and(
    eq(machines.companyId, companyId),
    inIntegerList(machines.id, pageMachines),
  );
  // The logs, the bulk of the page's rows, go on their own, in parallel with the
  // stops' batch: drizzle reads a query run alone as value arrays (D1 `raw()`),
  // about half the bytes of the keyed objects a batch returns.
  const [[closedStopRows, openStopRows], logRows] = await Promise.all([
    db.batch([
      db
        .select(stopColumns)
        .from(machines)
        .innerJoin(
          stops,
          and(
            eq(stops.machineId, machines.id),
            gte(stops.startTime, sql`${spanFrom} - ifnull(${longestStop}, 0)`),
            lt(stops.startTime, spanTo),
            gt(stops.endTime, spanFrom),
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
            inIntegerList(stops.machineId, pageMachines),
            isNull(stops.endTime),
            // `+`: reach open stops by (machine, end_time), not by every earlier start.
            sql`+${stops.startTime} < ${spanTo}`,
            isNull(stops.deletedAt),
          ),
        ),
    ] as const),
    db
      .select({
        machineId: productionLogs.machineId,
        start: productionLogs.start,
        end: productionLogs.end,
        type: productionLogs.type,
        count: productionLogs.count,
        nominalSpeed: productionLogs.nominalSpeed,
      })
      .from(machines)
      .innerJoin(
        productionLogs,
        and(
          eq(productionLogs.machineId, machines.id),
          gte(productionLogs.start, sql`${spanFrom} - ifnull(${longestLog}, 0)`),
          lt(productionLogs.start, spanTo),
          gt(productionLogs.end, spanFrom),
        ),
      )
      .where(
        and(
          pageMachineRows,
          notAnIndex(productionLogs.companyId, companyId),
          isNull(productionLogs.deletedAt),
        ),
      )
      .all(),
  ]);
  type MachineStop = StopSpan & { machineId: number };
  type MachineLog = LogSpan & { machineId: number };
  const toStop = (s: (typeof closedStopRows)[number]): MachineStop => ({
    ...s,
    isClassified: Boolean(s.isClassified),
  });
  const closedByMachine = new Map<number, ByStart<MachineStop>>();
  for (const [machineId, list] of groupByMachine(closedStopRows.map(toStop))) {
    closedByMachine.set(machineId, new ByStart(list, (s) => (s.end ?? s.start) - s.start));
  }
  const openByMachine = groupByMachine(openStopRows.map(toStop));
  const logsByMachine = new Map<number, ByStart<MachineLog>>();
  for (const [machineId, list] of groupByMachine<MachineLog>(logRows)) {
    logsByMachine.set(machineId, new ByStart(list, (l) => l.end - l.start));
  }

  return {
    ...found,
    rows: instances.map((instance) => {
      const window = { start: instance.start, end: instance.end };
      const machineLogs = logsByMachine.get(instance.machineId);
      const overlapping = (machineLogs?.candidatesFor(window.start, window.end) ?? []).filter(
        (l) => l.end > window.start,
      );
      const overlappingStops = [
        ...(closedByMachine.get(instance.machineId)?.candidatesFor(window.start, window.end) ?? []),
        ...(openByMachine.get(instance.machineId) ?? []),
      ].filter((s) => s.start < window.end && (s.end === null || s.end > window.start));
      const indicators = computeShiftIndicators(window, overlappingStops, overlapping, now);
      // docs/metrics.md: a production log belongs to the instance that contains its start.
      const ownLogs = machineLogs?.startingIn(window.start, window.end) ?? [];
      return {
        company: { id: companyId, name: principal.companyName },
        machine: { id: instance.machineId, name: instance.machineName },
        shift: toReportShift(instance, now),
        shiftIndicators: { indicatorId: instance.id, ...indicators },
        productionMetrics: computeProductionMetrics(indicators, ownLogs),
      };
    }),
  };
}
