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

import { type CompanyScope, owned } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { operators, simpleWorkOrders, skus } from "../db/schema";
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
import type { KpiKey, KpiReportFilters, KpiReportRow } from "./kpi-schemas";
import { type Attributed, isAttributed, KpiSums, toRow } from "./kpi-sums";
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

/** Names of the SKUs, operators and work orders the groups refer to. */
async function referenceNames(
  scope: CompanyScope,
  ids: Record<Attributed, Set<string | number>>,
): Promise<Record<Attributed, Map<string | number, string>>> {
  const { db, companyId } = scope;
  const json = (values: Set<string | number>) => JSON.stringify([...values]);
  const [skuRows, operatorRows, workOrderRows] = await Promise.all([
    ids.sku.size === 0
      ? []
      : db
          .select({ id: skus.id, name: skus.sku })
          .from(skus)
          .where(owned({ companyId }, skus, inJsonList(skus.id, json(ids.sku)))),
    ids.operator.size === 0
      ? []
      : db
          .select({ id: operators.id, first: operators.firstName, last: operators.lastName })
          .from(operators)
          .where(owned({ companyId }, operators, inJsonList(operators.id, json(ids.operator)))),
    ids.simpleWorkOrder.size === 0
      ? []
      : db
          .select({ id: simpleWorkOrders.id, name: simpleWorkOrders.name })
          .from(simpleWorkOrders)
          .where(
            owned(
              { companyId },
              simpleWorkOrders,
              inJsonList(simpleWorkOrders.id, json(ids.simpleWorkOrder)),
            ),
          ),
  ]);
  return {
    sku: new Map(skuRows.map((r) => [r.id, r.name])),
    operator: new Map(
      operatorRows.map((r) => [r.id, [r.first, r.last].filter((p) => p).join(" ")]),
    ),
    simpleWorkOrder: new Map(workOrderRows.map((r) => [r.id, r.name])),
  };
}

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
 * Every group of the KPI report, ordered by their keys; no paging.
 *
 * @param scope the caller's company (every row read is of it).
 * @param filters the parsed body.
 * @param now the current instant, ms.
 * @param beforeRead awaited with the machines whose logs are about to be read
 *   (the realtime read barrier, `src/durable/realtime-barrier.ts`).
 * @returns one row per group; each has only the keys of `groupBy`.
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
  // Every covered instance, a run of dates at a time: one that no record touches adds the
  // figures of an empty instance at once; the others are kept aside to be computed.
  const touched: CoveredInstance<ShiftDefinitionRow>[] = [];
  const adders = new Map<string, ReturnType<KpiSums["unattributedAdder"]>>();
  const empty = new Map<number, Figures>();
  const perDay = Math.max(1, instances.total / Math.max(1, instances.toDay - instances.fromDay));
  const daysPerRun = Math.max(1, Math.floor(LISTED_PER_TURN / perDay));
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
      // A run no record comes near is looked at instance by instance for its bounds only.
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
        // Most empty instances have one of a few lengths: their figures are shared.
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
  // A closed day is calendar time with no planned time (docs/metrics.md, "The plant
  // calendar"): its instances add their day to the groups they fall in, nothing else. Groups
  // by SKU, operator or work order split production, which a closed day has none of.
  if (covered.closed && !groupBy.some(isAttributed)) {
    const closed = covered.closed;
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
  const planned = touched.map((i) => ({
    definitionId: i.definition.id,
    machineId: i.machineId,
    start: i.start,
    end: i.end,
  }));
  const stored = await storedInstances(scope.db, scope.companyId, planned);
  const withIds: StoredCovered[] = touched.map((i, k) => {
    const row = stored.get(instanceKey(planned[k] as (typeof planned)[number]));
    if (!row) throw new Error(`Shift instance of machine ${i.machineId} at ${i.start} not stored`);
    return { ...i, id: row.id, name: i.definition.name };
  });
  const wholeOnly = !groupBy.some(isAttributed);
  const parts = await touchedParts(scope, withIds, wholeOnly, writeCounts, now);
  for (let i = 0; i < withIds.length; i += ITEMS_PER_TURN) {
    for (const inst of withIds.slice(i, i + ITEMS_PER_TURN))
      sums.add(inst, parts.get(inst.id) ?? []);
    await yieldToOtherRequests();
  }
  const groups = [...sums.groups.values()];

  const ids: Record<Attributed, Set<string | number>> = {
    sku: new Set(),
    operator: new Set(),
    simpleWorkOrder: new Set(),
  };
  for (const g of groups) {
    groupBy.forEach((k, i) => {
      const key = g.keys[i];
      if (isAttributed(k) && key !== null && key !== undefined && typeof key !== "object") {
        ids[k].add(key);
      }
    });
  }
  const names = await referenceNames(scope, ids);
  for (const g of groups) {
    g.keys = g.keys.map((key, i) => {
      const k = groupBy[i];
      return k && isAttributed(k) && key !== null && typeof key !== "object"
        ? { id: key, name: names[k].get(key) ?? "" }
        : key;
    });
  }
  return groups
    .sort((a, b) => compareKeys(a.keys, b.keys))
    .map((g) => toRow(groupBy, g, dates.lengthOf));
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
