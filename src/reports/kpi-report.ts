/**
 * The KPI report (`POST /v1/reports/kpis`): the metrics report's instances for the same
 * filters (./covered-instances.ts), grouped by an ordered `groupBy` (machine, shift, day, ISO
 * week, month, SKU, operator, work order), each group's figures computed from its summed times
 * and counts (never an average of ratios), ordered by keys and paged in memory. An instance
 * that no log or stop touches (./record-activity.ts) adds the figures of an empty instance, by
 * arithmetic and without being stored; the others are stored, their ended figures kept
 * (./figure-cache.ts), the rest computed in slices of `SLICE_INSTANCES`, so memory holds one
 * slice's records. docs/metrics.md ("KPIs by any dimension"), docs/bounded-work.md ("KPIs",
 * "Any range at once").
 */

import type { CompanyScope } from "../db/company-scope";
import { ITEMS_PER_TURN, yieldToOtherRequests } from "../http/budget";
import type { Page, PageRequest } from "../http/pagination";
import type { CoveredInstance, InstanceSeries } from "../shifts/instance-series";
import type { DatedInstance } from "../shifts/instances";
import { wallClockInstant } from "../shifts/instances";
import { instanceKey, storedInstances } from "../shifts/materialize";
import type { ShiftDefinitionRow } from "../shifts/plan";
import { DAY_MS } from "../time/units";
import { dateOfDay } from "./calendar";
import { coveredInstances } from "./covered-instances";
import {
  type Attribution,
  keep,
  machineWriteCounts,
  type Part,
  readKept,
  type ToKeep,
} from "./figure-cache";
import { compareKeys, pageOf } from "./grouping";
import {
  computeInstanceFigures,
  emptyInstanceFigures,
  type Figures,
  zeroFigures,
} from "./kpi-figures";
import { nameReferences } from "./kpi-names";
import type { KpiKey, KpiReportFilters, KpiReportRow } from "./kpi-schemas";
import { isAttributed, KpiSums, toRow } from "./kpi-sums";
import type { SpanLog } from "./packed-logs";
import { loadPageSpans } from "./page-spans";
import { recordActivity } from "./record-activity";

/** Instances whose figures are computed in one turn of the isolate. */
const FIGURES_PER_TURN = 50;

/** Instances read and computed together (about a week of 20 machines x 3 shifts). */
const SLICE_INSTANCES = 420;

/** Kept figures read per statement: about this many instances, within this span of starts. */
const KEPT_PER_READ = 2_000;
const KEPT_SPAN_MS = 30 * DAY_MS;

/** Instances listed and added per turn of the isolate (about). */
const LISTED_PER_TURN = 4 * ITEMS_PER_TURN;

const attributionKey = (l: SpanLog): string =>
  JSON.stringify([l.skuId ?? null, l.operatorId ?? null, l.simpleWorkOrderId ?? null]);
const NULL_ATTRIBUTION = JSON.stringify([null, null, null]);

const isZero = (f: Figures) => Object.values(f).every((v) => v === 0);

/**
 * The local dates of a report's instances, per day number: the date by calendar arithmetic,
 * the length 24 hours where the zone keeps its offset around the date, else the zone's own
 * midnights (a DST day lasts 23 or 25 hours).
 */
function localDates(instances: InstanceSeries<ShiftDefinitionRow>, timezone: string) {
  const dates = new Map<number, string>();
  const lengths = new Map<number, number>();
  return {
    dateOf(day: number): string {
      let date = dates.get(day);
      if (date === undefined) {
        date = dateOfDay(day);
        dates.set(day, date);
      }
      return date;
    },
    lengthOf(day: number): number {
      let length = lengths.get(day);
      if (length === undefined) {
        const [y, m, d] = dateOfDay(day).split("-").map(Number) as [number, number, number];
        length = instances.isPlainDay(day)
          ? DAY_MS
          : wallClockInstant(y, m - 1, d + 1, 0, 0, timezone) -
            wallClockInstant(y, m - 1, d, 0, 0, timezone);
        lengths.set(day, length);
      }
      return length;
    },
  };
}

/** A covered instance with its stored id. */
type StoredCovered = CoveredInstance<ShiftDefinitionRow> & { id: number; name: string };

/**
 * Runs of touched instances (ascending start) whose kept figures one statement reads: at
 * most `KEPT_PER_READ` instances, cut where starts lie `KEPT_SPAN_MS` apart.
 */
function keptReads(touched: readonly StoredCovered[]): [number, number][] {
  const out: [number, number][] = [];
  let count = 0;
  for (const i of touched) {
    const last = out[out.length - 1];
    if (last && count < KEPT_PER_READ && i.start - last[1] < KEPT_SPAN_MS) {
      last[1] = i.start + 1;
      count += 1;
    } else {
      out.push([i.start, i.start + 1]);
      count = 1;
    }
  }
  return out;
}

/**
 * The parts of the touched instances: kept ones read, the others computed from their records
 * (ended ones then kept, if their machine was not written since `writeCounts` was read).
 */
async function touchedParts(
  scope: CompanyScope,
  touched: readonly StoredCovered[],
  wholeOnly: boolean,
  writeCounts: ReadonlyMap<number, number>,
  now: number,
): Promise<Map<number, Part[]>> {
  const machineIds = [...new Set(touched.map((i) => i.machineId))];
  const parts = new Map<number, Part[]>();
  const ids = new Set(touched.map((i) => i.id));
  for (const [a, b] of keptReads(touched)) {
    for (const [id, kept] of await readKept(scope, machineIds, a, b, wholeOnly)) {
      if (ids.has(id)) parts.set(id, kept);
    }
  }
  const missing = touched.filter((i) => !parts.has(i.id));
  const toKeep: ToKeep[] = [];
  for (let i = 0; i < missing.length; i += SLICE_INSTANCES) {
    const slice = missing.slice(i, i + SLICE_INSTANCES);
    const spans = await loadPageSpans(scope, slice, "attributed");
    for (const [n, inst] of slice.entries()) {
      // An instance of thousands of logs takes a millisecond or more: the others get turns.
      if (n > 0 && n % FIGURES_PER_TURN === 0) await yieldToOtherRequests();
      const { machineId, start, end } = inst;
      const computed = [
        ...computeInstanceFigures(
          { start, end },
          spans.stopsOverlapping(machineId, start, end),
          spans.logsOverlapping(machineId, start, end),
          spans.logsStartingIn(machineId, start, end),
          now,
          { keyOf: attributionKey, nullKey: NULL_ATTRIBUTION },
        ),
      ]
        .filter(([, figures]) => !isZero(figures))
        .map(([key, figures]) => ({ key: JSON.parse(key) as Attribution, figures }));
      parts.set(inst.id, computed);
      if (end <= now) {
        toKeep.push({
          instanceId: inst.id,
          machineId,
          start,
          end,
          parts: computed,
          writeCount: writeCounts.get(machineId) ?? 0,
        });
      }
    }
  }
  await keep(scope, toKeep);
  return parts;
}

/**
 * Every group of the KPI report, ordered by their keys; no paging. The covered instances are
 * listed a run of days at a time: those no record touches add the figures of an empty
 * instance at once (`addUntouched`), those of closed days their calendar time
 * (`addClosedDays`); the others are stored (`withStoredIds`), their figures read or computed
 * (`touchedParts`) and added (`addTouched`); the groups' SKUs, operators and work orders get
 * their names (`nameReferences`).
 *
 * @param scope the caller's company (every row read is of it).
 * @param filters the parsed body.
 * @param now the current instant, ms.
 * @param beforeRead awaited with the machines whose logs are about to be read
 *   (the realtime read barrier, `src/durable/realtime-barrier.ts`).
 * @returns one row per group; each has only the keys of `groupBy`.
 * @throws ApiError 422 `too_many_instances` from `coveredInstances` past its bound.
 */
export async function kpiGroups(
  scope: CompanyScope,
  filters: KpiReportFilters,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<KpiReportRow[]> {
  const groupBy: readonly KpiKey[] = filters.groupBy ?? ["machine"];
  const covered = await coveredInstances(scope, filters, now);
  if (covered === null) return [];
  const { instances, machines, timezone } = covered;
  const machineIds = [...machines.keys()];
  await beforeRead(machineIds);
  // The counts are read before any record (see figure-cache.ts); where records start is
  // not a record read (it only chooses which instances are computed from their records).
  const [writeCounts, activity] = await Promise.all([
    machineWriteCounts(scope.db, machineIds),
    recordActivity(
      scope,
      machineIds,
      instances.fromDay * DAY_MS - 2 * DAY_MS,
      instances.toDay * DAY_MS + 3 * DAY_MS,
    ),
  ]);
  const dates = localDates(instances, timezone);
  const sums = new KpiSums(groupBy, machines, dates.dateOf);
  const perDay = Math.max(1, instances.total / Math.max(1, instances.toDay - instances.fromDay));
  const daysPerRun = Math.max(1, Math.floor(LISTED_PER_TURN / perDay));
  const touched = await addUntouched(instances, activity, sums, daysPerRun, now);
  // Groups by SKU, operator or work order split production, which a closed day has none of.
  const wholeOnly = !groupBy.some(isAttributed);
  if (covered.closed && wholeOnly) await addClosedDays(covered.closed, sums, daysPerRun);
  const withIds = await withStoredIds(scope, touched);
  const parts = await touchedParts(scope, withIds, wholeOnly, writeCounts, now);
  await addTouched(sums, withIds, parts);
  const groups = [...sums.groups.values()];
  await nameReferences(scope, groupBy, groups);
  return groups
    .sort((a, b) => compareKeys(a.keys, b.keys))
    .map((g) => toRow(groupBy, g, dates.lengthOf));
}

/**
 * Adds every covered instance that no record touches to its groups, with the figures of an
 * empty instance (`emptyInstanceFigures`: its elapsed time all no data), by arithmetic and
 * without storing it; returns the others, to be computed from their records. Instances are
 * listed a run of `daysPerRun` days at a time, with a turn for other requests after each;
 * a run no record comes near is looked at instance by instance for its bounds only. Most
 * empty instances have one of a few lengths: their figures are shared.
 *
 * @param instances the report's covered instances.
 * @param activity where records lie (`recordActivity`): whether one touches a machine's span.
 * @param sums the groups being summed.
 * @param daysPerRun how many days of instances are listed per turn.
 * @param now the current instant, ms.
 * @returns the instances some record touches, in listing order (ascending start per run).
 */
async function addUntouched(
  instances: InstanceSeries<ShiftDefinitionRow>,
  activity: { touches(machineId: number, from: number, to: number): boolean },
  sums: KpiSums,
  daysPerRun: number,
  now: number,
): Promise<CoveredInstance<ShiftDefinitionRow>[]> {
  const touched: CoveredInstance<ShiftDefinitionRow>[] = [];
  const adders = new Map<string, ReturnType<KpiSums["unattributedAdder"]>>();
  const empty = new Map<number, Figures>();
  for (let day = instances.fromDay; day < instances.toDay; day += daysPerRun) {
    for (const run of instances.runs(day, Math.min(day + daysPerRun, instances.toDay))) {
      const { machineId, definition } = run;
      const key = `${machineId}:${definition.id}`;
      let adder = adders.get(key);
      if (!adder) {
        adder = sums.unattributedAdder(machineId, definition.name);
        adders.set(key, adder);
      }
      const first = run.listed[run.from];
      const last = run.listed[run.to - 1];
      const busy =
        first !== undefined &&
        last !== undefined &&
        activity.touches(machineId, first.start, last.end);
      for (let k = run.from; k < run.to; k++) {
        const i = run.listed[k] as DatedInstance;
        if (!instances.covers(run, i)) continue;
        if (busy && activity.touches(machineId, i.start, i.end)) {
          touched.push({ ...i, machineId, definition });
          continue;
        }
        const elapsed = Math.max(0, Math.min(i.end, now) - i.start);
        let figures = empty.get(elapsed);
        if (!figures) {
          figures = emptyInstanceFigures(i, now);
          empty.set(elapsed, figures);
        }
        adder(i.day, figures);
      }
    }
    await yieldToOtherRequests();
  }
  return touched;
}

/**
 * Adds the instances of closed days to their groups: a closed day is calendar time with no
 * planned time (docs/metrics.md, "The plant calendar"), so each adds its day to the groups
 * it falls in, no figure and no instance. Only for groups with no SKU, operator or work
 * order among their keys (the caller's check). Listed `daysPerRun` days a turn.
 *
 * @param closed the report's instances that start in a closure.
 * @param sums the groups being summed.
 * @param daysPerRun how many days of instances are listed per turn.
 */
async function addClosedDays(
  closed: InstanceSeries<ShiftDefinitionRow>,
  sums: KpiSums,
  daysPerRun: number,
): Promise<void> {
  const nothing = zeroFigures();
  for (let day = closed.fromDay; day < closed.toDay; day += daysPerRun) {
    for (const run of closed.runs(day, Math.min(day + daysPerRun, closed.toDay))) {
      const adder = sums.unattributedAdder(run.machineId, run.definition.name);
      for (let k = run.from; k < run.to; k++) {
        const i = run.listed[k] as DatedInstance;
        if (closed.covers(run, i)) adder(i.day, nothing, false);
      }
    }
    await yieldToOtherRequests();
  }
}

/**
 * The touched instances with the ids of their stored rows (`storedInstances`: written where
 * missing, one statement per batch), which their kept figures are keyed by.
 *
 * @param scope the caller's company.
 * @param touched the instances some record touches.
 * @returns the same instances, in the same order, with `id` and the definition's `name`.
 * @throws Error when an instance is not stored afterwards (a broken invariant, a 500).
 */
async function withStoredIds(
  scope: CompanyScope,
  touched: readonly CoveredInstance<ShiftDefinitionRow>[],
): Promise<StoredCovered[]> {
  const planned = touched.map((i) => ({
    definitionId: i.definition.id,
    machineId: i.machineId,
    start: i.start,
    end: i.end,
  }));
  const stored = await storedInstances(scope.db, scope.companyId, planned);
  return touched.map((i, k) => {
    const row = stored.get(instanceKey(planned[k] as (typeof planned)[number]));
    if (!row) throw new Error(`Shift instance of machine ${i.machineId} at ${i.start} not stored`);
    return { ...i, id: row.id, name: i.definition.name };
  });
}

/**
 * Adds the touched instances' parts to their groups, `ITEMS_PER_TURN` instances a turn.
 *
 * @param sums the groups being summed.
 * @param withIds the touched instances with their ids.
 * @param parts each instance's parts by id (`touchedParts`); a missing one adds nothing.
 */
async function addTouched(
  sums: KpiSums,
  withIds: readonly StoredCovered[],
  parts: ReadonlyMap<number, Part[]>,
): Promise<void> {
  for (let i = 0; i < withIds.length; i += ITEMS_PER_TURN) {
    for (const inst of withIds.slice(i, i + ITEMS_PER_TURN))
      sums.add(inst, parts.get(inst.id) ?? []);
    await yieldToOtherRequests();
  }
}

/**
 * One page of the KPI report (see `kpiGroups`).
 *
 * @param scope the caller's company.
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms.
 * @param beforeRead the realtime read barrier.
 */
export async function kpiReport(
  scope: CompanyScope,
  filters: KpiReportFilters,
  page: PageRequest,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<Page<KpiReportRow>> {
  return pageOf(await kpiGroups(scope, filters, now, beforeRead), page);
}
