/**
 * The metrics report (`POST /v1/reports/metrics`): one row per machine x considered shift
 * instance (definitions with `isConsidered`, machines and shifts as filtered, started, ending
 * after the machine's first activity; 7 days by default, any window up to
 * `MAX_REPORT_INSTANCES`), ordered by start then machine, with the figures of ./oee.ts. Work
 * follows the page: instances materialized once and paged on the covering index, then only the
 * page's logs and stops read (./page-spans.ts). Nothing cached: a change shows in the next call.
 * docs/metrics.md ("The request"), docs/bounded-work.md ("Metrics report: any range").
 */

import { and, asc, count, eq, isNull, type SQL } from "drizzle-orm";
import type { CompanyScope, NamedScope } from "../db/company-scope";
import { machines, shiftDefinitions, shiftInstances } from "../db/schema";
import { unprocessable } from "../http/errors";
import { dateConditions, dateRange } from "../http/filters";
import { emptyPage, type Page, type PageRequest, paginate } from "../http/pagination";
import { idListConditions } from "../http/search";
import {
  ensureInstances,
  firstActivity,
  type InstanceRange,
  machineWindows,
  plannedCounts,
  rangeCondition,
} from "../shifts/materialize";
import {
  companyQuery,
  definitionMachinesQuery,
  definitionsQuery,
  MAX_INSTANCE_MS,
  toPlan,
} from "../shifts/plan";
import { DAY_MS } from "../time/units";
import { filterMachines } from "./machine-filter";
import type { MetricsReportFilters, MetricsReportRow } from "./metrics-schemas";
import { computeProductionMetrics } from "./oee";
import { loadPageSpans } from "./page-spans";
import { toReportShift } from "./schemas";
import { computeShiftIndicators } from "./shift-time";

/** Window of instance starts when the request gives no lower bound: 7 days. */
const DEFAULT_WINDOW_MS = 7 * DAY_MS;

/**
 * The window `[from, to)` of instance starts a request covers (see the module
 * docstring for the rules), before the company's first record bounds it.
 *
 * @param filters the parsed body.
 * @param now the current instant, ms.
 * @returns the window; empty when `to <= from`.
 */
function instanceStartWindow(
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

interface PageInstance {
  id: number;
  machineId: number;
  machineName: string;
  start: number;
  end: number;
  name: string;
}

/**
 * Most shift instances one report covers, once its window is bounded by what exists (a year
 * of 20 machines on three shifts is 21,900). Above it the request is refused (422): listing,
 * counting and first materializing that many instances is the report's bounded work
 * (docs/bounded-work.md, "The budget of a request").
 */
export const MAX_REPORT_INSTANCES = 25_000;

/** The instances a report covers (`reportInstancesWhere`). */
export interface ReportInstances {
  /** The condition on `shift_instances` joined with `shift_definitions`. */
  where: SQL;
  /** Earliest instance start covered, ms. */
  from: number;
  /** Exclusive upper bound of instance starts, ms. */
  to: number;
  /** How many instances the window plans (at most `MAX_REPORT_INSTANCES`). */
  planned: number;
}

/** Whether a definition passes the `shifts` filter (include, then exclude). */
function passesShifts(filter: MetricsReportFilters["shifts"], id: number): boolean {
  if (filter?.include && filter.include.length > 0 && !filter.include.includes(id)) return false;
  return !filter?.exclude?.includes(id);
}

/**
 * The condition selecting the shift instances the metrics report covers for
 * `filters` at `now` (see the module docstring), on `shift_instances` joined
 * with `shift_definitions`, after materializing them. The window asked for is
 * bounded by what exists first: only the definitions the report lists (considered,
 * passing `shifts`), on each machine only the instances that end after its first
 * activity (its creation, first production log or stop), and none that starts after
 * `now`. The KPI report (`./kpi-report.ts`) groups the same instances.
 *
 * @param scope the caller's company (every row selected is of it).
 * @param filters the parsed body's filters.
 * @param now the current instant, ms.
 * @returns the condition, with the span of instance starts it covers (`[from, to)`, ms) and
 *   how many instances it plans there (at most `MAX_REPORT_INSTANCES`); null when nothing can
 *   match (empty window, no machine, no considered definition).
 * @throws ApiError 422 (`too_many_instances`) when the bounded window still holds more than
 *   `MAX_REPORT_INSTANCES` instances; nothing is written then.
 */
export async function reportInstancesWhere(
  scope: CompanyScope,
  filters: Pick<MetricsReportFilters, "machines" | "shifts" | "startDate" | "endDate">,
  now: number,
): Promise<ReportInstances | null> {
  const { from, to } = instanceStartWindow(filters, now);
  if (to <= from) return null;
  const machineRefs = await filterMachines(scope, filters.machines);
  if (machineRefs.length === 0) return null;
  const machineIds = machineRefs.map((m) => m.id);
  // The plan with the machines just resolved (those are the ones the range needs), and
  // their first activity.
  const [[company, defs, links], activity] = await Promise.all([
    scope.db.batch([
      companyQuery(scope),
      definitionsQuery(scope),
      definitionMachinesQuery(scope),
    ] as const),
    firstActivity(scope, machineIds),
  ]);
  const plan = toPlan(scope.companyId, company, defs, links, machineRefs);
  const definitionIds = (plan?.definitions ?? [])
    .filter((d) => d.isConsidered && passesShifts(filters.shifts, d.id))
    .map((d) => d.id);
  const range: InstanceRange = {
    definitionIds,
    machines: machineWindows(activity, from).filter((w) => w.from < to),
    to,
  };
  if (!plan || definitionIds.length === 0 || range.machines.length === 0) return null;
  const planned = plannedCounts(plan, range);
  const total = [...planned.values()].reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  if (total > MAX_REPORT_INSTANCES) {
    throw unprocessable(
      ["body"],
      `The report would cover ${total} shift instances (from each machine's first data or ` +
        `creation, or the window's start, to now) and a report covers at most ` +
        `${MAX_REPORT_INSTANCES}: narrow startDate/endDate, machines or shifts`,
      "too_many_instances",
    );
  }
  await ensureInstances(scope, plan, range, planned);
  const conditions: (SQL | undefined)[] = [
    rangeCondition(scope, range),
    eq(shiftDefinitions.isConsidered, true),
    isNull(shiftDefinitions.deletedAt),
    ...idListConditions(shiftDefinitions.id, filters.shifts),
    ...dateConditions(shiftInstances.start, filters.startDate),
    ...dateConditions(shiftInstances.end, filters.endDate),
  ];
  const where = and(...conditions);
  if (!where) return null;
  return { where, from: Math.min(...range.machines.map((w) => w.from)), to, planned: total };
}

/**
 * One page of the metrics report.
 *
 * @param scope the caller (its company scopes every query and fills `company`).
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms.
 * @param beforeRead awaited with the page's machine ids before their logs and
 *   stops are read (the realtime read barrier, `src/durable/realtime-barrier.ts`).
 */
export async function metricsReport(
  scope: NamedScope,
  filters: MetricsReportFilters,
  page: PageRequest,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<Page<MetricsReportRow>> {
  const { db } = scope;
  const companyId = scope.companyId;
  const covered = await reportInstancesWhere(scope, filters, now);
  if (covered === null) return emptyPage(page);
  const { where } = covered;
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

  const pageMachines = [...new Set(instances.map((i) => i.machineId))];
  await beforeRead(pageMachines);
  const spans = await loadPageSpans(scope, instances);
  return {
    ...found,
    rows: instances.map((instance) => {
      const { machineId, start, end } = instance;
      const indicators = computeShiftIndicators(
        { start, end },
        spans.stopsOverlapping(machineId, start, end),
        spans.logsOverlapping(machineId, start, end),
        now,
      );
      // docs/metrics.md: a production log belongs to the instance that contains its start.
      const ownLogs = spans.logsStartingIn(machineId, start, end);
      return {
        company: { id: companyId, name: scope.companyName },
        machine: { id: instance.machineId, name: instance.machineName },
        shift: toReportShift(instance, now),
        shiftIndicators: { indicatorId: instance.id, ...indicators },
        productionMetrics: computeProductionMetrics(indicators, ownLogs),
      };
    }),
  };
}
