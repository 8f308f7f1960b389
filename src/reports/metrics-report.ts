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

import { and, asc, count, eq, gte, isNull, lt, type SQL } from "drizzle-orm";
import { type CompanyScope, type NamedScope, owned } from "../db/company-scope";
import { machines, shiftDefinitions, shiftInstances } from "../db/schema";
import { dateConditions, dateRange, inIntegerList, resolveMachines } from "../http/filters";
import { emptyPage, type Page, type PageRequest, paginate } from "../http/pagination";
import { idListConditions } from "../http/search";
import { ensureInstances } from "../shifts/materialize";
import { MAX_INSTANCE_MS } from "../shifts/plan";
import type { MetricsReportFilters, MetricsReportRow } from "./metrics-schemas";
import { computeProductionMetrics } from "./oee";
import { loadPageSpans } from "./page-spans";
import { toReportShift } from "./schemas";
import { computeShiftIndicators } from "./shift-time";

const DAY_MS = 86_400_000;

/** Window of instance starts when the request gives no lower bound: 7 days. */
export const DEFAULT_WINDOW_MS = 7 * DAY_MS;

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

interface PageInstance {
  id: number;
  machineId: number;
  machineName: string;
  start: number;
  end: number;
  name: string;
}

/**
 * The condition selecting the shift instances the metrics report covers for
 * `filters` at `now` (see the module docstring), on `shift_instances` joined
 * with `shift_definitions`, after materializing the window's instances. The
 * KPI report (`./kpi-report.ts`) groups the same instances.
 *
 * @param scope the caller's company (every row selected is of it).
 * @param filters the parsed body's filters.
 * @param now the current instant, ms.
 * @returns the condition, or null when nothing can match (empty window, no machine).
 */
export async function reportInstancesWhere(
  scope: CompanyScope,
  filters: Pick<MetricsReportFilters, "machines" | "shifts" | "startDate" | "endDate">,
  now: number,
): Promise<SQL | null> {
  const { companyId } = scope;
  const { from, to } = instanceStartWindow(filters, now);
  if (to <= from) return null;
  const machineRefs = await resolveMachines(scope, filters.machines);
  if (machineRefs.length === 0) return null;
  const machineIds = machineRefs.map((m) => m.id);
  await ensureInstances(scope, from, to, machineIds);
  const conditions: (SQL | undefined)[] = [
    owned({ companyId }, shiftInstances),
    gte(shiftInstances.start, from),
    lt(shiftInstances.start, to),
    inIntegerList(shiftInstances.machineId, machineIds),
    eq(shiftDefinitions.isConsidered, true),
    isNull(shiftDefinitions.deletedAt),
    ...idListConditions(shiftDefinitions.id, filters.shifts),
    ...dateConditions(shiftInstances.start, filters.startDate),
    ...dateConditions(shiftInstances.end, filters.endDate),
  ];
  return and(...conditions) ?? null;
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
  const where = await reportInstancesWhere(scope, filters, now);
  if (where === null) return emptyPage(page);
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
  const spans = await loadPageSpans(scope, pageMachines, spanFrom, spanTo);
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
