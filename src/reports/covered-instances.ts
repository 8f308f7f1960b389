/**
 * The shift instances a report covers (the metrics and KPI reports, their CSV forms, the MCP
 * tools that call them): the considered definitions the `shifts` filter keeps, on the
 * machines the `machines` filter keeps, from each machine's first activity to now, within the
 * window of `startDate`/`endDate`. Nothing is stored to know them: they are series counted,
 * paged and listed by calendar arithmetic (src/shifts/instance-series.ts), so any window is
 * answered at once; a report stores only the instances it shows or computes.
 * docs/bounded-work.md ("Where instances exist", "Any range at once").
 */

import type { CompanyScope } from "../db/company-scope";
import { unprocessable } from "../http/errors";
import { dateRange } from "../http/filters";
import { type ClosedSpan, closedSpansOf, companyClosuresQuery } from "../shifts/closures";
import { InstanceSeries, type SeriesBounds, type SeriesInput } from "../shifts/instance-series";
import { firstActivity } from "../shifts/materialize";
import {
  companyQuery,
  definitionMachinesQuery,
  definitionsQuery,
  MAX_INSTANCE_MS,
  machinesOf,
  type ShiftDefinitionRow,
  toPlan,
} from "../shifts/plan";
import { filterMachines } from "./machine-filter";
import type { MetricsReportFilters } from "./metrics-schemas";

const DAY_MS = 86_400_000;

/** Window of instance starts when the request gives no lower bound: 7 days. */
const DEFAULT_WINDOW_MS = 7 * DAY_MS;

/**
 * Most shift instances one report covers, once its window is bounded by what exists (a year
 * of 20 machines on three shifts is 21,900). Above it the request is refused (422): the KPI
 * report adds up every instance it covers (docs/bounded-work.md, "The budget of a request").
 */
export const MAX_REPORT_INSTANCES = 25_000;

/** The filters that choose a report's instances. */
type InstanceFilters = Pick<MetricsReportFilters, "machines" | "shifts" | "startDate" | "endDate">;

/**
 * The window `[from, to)` of instance starts a request covers, before each machine's first
 * activity bounds it: both date filters as bounds on the start (an instance ends after it
 * starts, and lasts at most `MAX_INSTANCE_MS`), never past now; without a lower bound, the 7
 * days before the upper one.
 *
 * @param filters the parsed body.
 * @param now the current instant, ms.
 * @returns the window; empty when `to <= from`.
 */
function instanceStartWindow(
  filters: Pick<InstanceFilters, "startDate" | "endDate">,
  now: number,
): { from: number; to: number } {
  const byStart = dateRange(filters.startDate);
  const byEnd = dateRange(filters.endDate);
  const froms = [byStart.from, byEnd.from === undefined ? undefined : byEnd.from - MAX_INSTANCE_MS];
  const tos = [byStart.to, byEnd.to, now + 1];
  const to = Math.min(...tos.filter((t): t is number => t !== undefined));
  const lower = froms.filter((f): f is number => f !== undefined);
  const from = lower.length > 0 ? Math.max(...lower) : to - DEFAULT_WINDOW_MS;
  return { from, to };
}

/** Whether a definition passes the `shifts` filter (include, then exclude). */
function passesShifts(filter: InstanceFilters["shifts"], id: number): boolean {
  if (filter?.include && filter.include.length > 0 && !filter.include.includes(id)) return false;
  return !filter?.exclude?.includes(id);
}

/**
 * `[from, to)` cut by closed spans (joined, by start): the open pieces, and the closed ones
 * (each a span's part inside the window). Work: the spans that meet the window.
 */
function cutAround(
  from: number,
  to: number,
  spans: readonly ClosedSpan[],
): { open: [number, number][]; closed: [number, number][] } {
  const open: [number, number][] = [];
  const closed: [number, number][] = [];
  let at = from;
  for (const span of spans) {
    if (span.end <= at) continue;
    if (span.start >= to) break;
    if (span.start > at) open.push([at, span.start]);
    closed.push([Math.max(at, span.start), Math.min(to, span.end)]);
    at = span.end;
    if (at >= to) break;
  }
  if (at < to) open.push([at, to]);
  return { open, closed };
}

/** The instances a report covers. */
interface CoveredInstances {
  /** The instances, as series of (definition, machine) counted and listed by the calendar. */
  instances: InstanceSeries<ShiftDefinitionRow>;
  /**
   * The instances the plant calendar closes in the same window (not scheduled: only their
   * days count, as the KPI report's calendar time), or null when there are none.
   */
  closed: InstanceSeries<ShiftDefinitionRow> | null;
  /** The company's IANA zone. */
  timezone: string;
  /** The covered machines (those of the filter with a definition), as report rows name them. */
  machines: Map<number, { id: number; name: string }>;
}

/**
 * The shift instances the metrics and KPI reports cover for `filters` at `now` (see the
 * module docstring), without storing any: on each machine, the instances of the listed
 * definitions (considered, passing `shifts`) that start in the window, end after the
 * machine's first activity (its creation, first production log or stop) and satisfy
 * `startDate` and `endDate` exactly.
 *
 * @param scope the caller's company (every machine and definition is of it).
 * @param filters the parsed body's filters.
 * @param now the current instant, ms.
 * @returns the covered instances; null when nothing can match (empty window, no machine, no
 *   considered definition, no instance).
 * @throws ApiError 422 (`too_many_instances`) when they are more than `MAX_REPORT_INSTANCES`;
 *   nothing is written then.
 */
export async function coveredInstances(
  scope: CompanyScope,
  filters: InstanceFilters,
  now: number,
): Promise<CoveredInstances | null> {
  const { from, to } = instanceStartWindow(filters, now);
  if (to <= from) return null;
  const machineRefs = await filterMachines(scope, filters.machines);
  if (machineRefs.length === 0) return null;
  const machineIds = machineRefs.map((m) => m.id);
  const [[company, defs, links, closures], activity] = await Promise.all([
    scope.db.batch([
      companyQuery(scope),
      definitionsQuery(scope),
      definitionMachinesQuery(scope),
      companyClosuresQuery(scope),
    ] as const),
    firstActivity(scope, machineIds),
  ]);
  const plan = toPlan(scope.companyId, company, defs, links, machineRefs, closures);
  if (!plan) return null;
  const byEnd = dateRange(filters.endDate);
  const inputs: SeriesInput<ShiftDefinitionRow>[] = [];
  const closedInputs: SeriesInput<ShiftDefinitionRow>[] = [];
  const spansOf = new Map<number, ClosedSpan[]>();
  for (const definition of plan.definitions) {
    if (!definition.isConsidered || !passesShifts(filters.shifts, definition.id)) continue;
    for (const machineId of machinesOf(plan, definition)) {
      const since = activity.get(machineId);
      if (since === undefined) continue;
      // An instance ending after the first activity starts after it less the longest one.
      const bounds: SeriesBounds = {
        startFrom: Math.max(from, since - MAX_INSTANCE_MS),
        startTo: to,
        endAfter: byEnd.from === undefined ? since : Math.max(since, byEnd.from - 1),
        endBefore: byEnd.to,
      };
      if (bounds.startFrom >= bounds.startTo) continue;
      let spans = spansOf.get(machineId);
      if (!spans) {
        spans = closedSpansOf(plan.closures, machineId);
        spansOf.set(machineId, spans);
      }
      // The plant calendar: the series is cut around the machine's closures (the starts
      // inside one are closed), so counting and paging stay arithmetic, one series a piece.
      const pieces = cutAround(bounds.startFrom, bounds.startTo, spans);
      for (const [startFrom, startTo] of pieces.open) {
        inputs.push({ definition, machineId, bounds: { ...bounds, startFrom, startTo } });
      }
      for (const [startFrom, startTo] of pieces.closed) {
        closedInputs.push({ definition, machineId, bounds: { ...bounds, startFrom, startTo } });
      }
    }
  }
  if (inputs.length === 0 && closedInputs.length === 0) return null;
  const instances = new InstanceSeries(plan.timezone, inputs);
  const closed = closedInputs.length === 0 ? null : new InstanceSeries(plan.timezone, closedInputs);
  if (instances.total === 0 && (closed?.total ?? 0) === 0) return null;
  if (instances.total + (closed?.total ?? 0) > MAX_REPORT_INSTANCES) {
    throw unprocessable(
      ["body"],
      `The report would cover ${instances.total} shift instances (from each machine's first ` +
        `data or creation, or the window's start, to now) and a report covers at most ` +
        `${MAX_REPORT_INSTANCES}: narrow startDate/endDate, machines or shifts`,
      "too_many_instances",
    );
  }
  const covered = new Set(inputs.map((i) => i.machineId));
  return {
    instances,
    closed: closed && closed.total > 0 ? closed : null,
    timezone: plan.timezone,
    machines: new Map(machineRefs.filter((m) => covered.has(m.id)).map((m) => [m.id, m])),
  };
}
