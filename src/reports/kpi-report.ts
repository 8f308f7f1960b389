/**
 * The KPI report (`POST /v1/reports/kpis`): the metrics report's instances for the same
 * filters, grouped by an ordered `groupBy` (machine, shift, day, ISO week, month, SKU,
 * operator, work order), each group's figures computed from its summed times and counts (never
 * an average of ratios), ordered by keys and paged in memory. Ended instances' figures come
 * from ./figure-cache.ts; the rest are computed in slices of `SLICE_INSTANCES`, so memory holds
 * one slice's records. docs/metrics.md ("KPIs by any dimension"), docs/bounded-work.md ("KPIs").
 */

import { type CompanyScope, owned } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { machines, operators, simpleWorkOrders, skus } from "../db/schema";
import { ITEMS_PER_TURN, yieldToOtherRequests } from "../http/budget";
import type { Page, PageRequest } from "../http/pagination";
import { companyQuery } from "../shifts/plan";
import { isoWeekOf, LocalCalendar, monthOf } from "./calendar";
import {
  type Attribution,
  keep,
  machineWriteCounts,
  type Part,
  readKept,
  type ToKeep,
} from "./figure-cache";
import { compareKeys, type GroupKey, groupId, pageOf } from "./grouping";
import { addFigures, computeInstanceFigures, type Figures, zeroFigures } from "./kpi-figures";
import { type ListedInstance, listInstances, piecesOf } from "./kpi-instances";
import type { KpiKey, KpiReportFilters, KpiReportRow } from "./kpi-schemas";
import { reportInstancesWhere } from "./metrics-report";
import { fraction, minutesOf, oeeFigures, plannedTimeOf, runTimeOf } from "./oee";
import { loadPageSpans, type SpanLog } from "./page-spans";

/** Instances whose figures are computed in one turn of the isolate. */
const FIGURES_PER_TURN = 50;

/** Instances read and computed together (about a week of 20 machines x 3 shifts). */
const SLICE_INSTANCES = 420;

interface Group {
  keys: GroupKey[];
  figures: Figures;
  instances: number;
  /** Calendar ms per `machine:date` the group touches. */
  days: Map<string, number>;
}

type Attributed = "sku" | "operator" | "simpleWorkOrder";
/** Where each attributed key sits in a part's (SKU, operator, work order) key. */
const ATTRIBUTION_INDEX = { sku: 0, operator: 1, simpleWorkOrder: 2 } as const;
const attributionKey = (l: SpanLog): string =>
  JSON.stringify([l.skuId ?? null, l.operatorId ?? null, l.simpleWorkOrderId ?? null]);
const NULL_ATTRIBUTION = JSON.stringify([null, null, null]);
const isAttributed = (k: KpiKey): k is Attributed =>
  k === "sku" || k === "operator" || k === "simpleWorkOrder";

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

/** The figures of a group as a row: its keys, minutes, counts and ratios of sums. */
function toRow(groupBy: readonly KpiKey[], group: Group): KpiReportRow {
  const sums = group.figures;
  const runTime = runTimeOf(sums);
  const plannedTime = plannedTimeOf(sums);
  const calendarTime = [...group.days.values()].reduce((sum, d) => sum + d, 0);
  // The report row's own figures, on the group's sums (./oee.ts).
  const figures = oeeFigures(sums);
  const perStop = (ms: number) => {
    const mean = fraction(ms, sums.unplannedStops);
    return mean === null ? null : minutesOf(mean);
  };
  const keys: Record<string, unknown> = {};
  groupBy.forEach((k, i) => {
    keys[k] = group.keys[i] ?? null;
  });
  return {
    ...keys,
    instances: group.instances,
    minutes: {
      calendarTime: minutesOf(calendarTime),
      availableTime: minutesOf(sums.availableTime),
      plannedTime: minutesOf(plannedTime),
      runTime: minutesOf(runTime),
      idealTime: minutesOf(sums.idealTime),
      programmedDowntime: minutesOf(sums.programmedDowntime),
      nonProgrammedDowntime: minutesOf(sums.nonProgrammedDowntime),
      otherStopsTime: minutesOf(sums.otherStopsTime),
      lateStartTime: minutesOf(sums.lateStartTime),
      earlyStopTime: minutesOf(sums.earlyStopTime),
      noDataTime: minutesOf(sums.noDataTime),
      unavailableTime: minutesOf(sums.unavailableTime),
      annotatedDowntime: minutesOf(sums.annotatedDowntime),
    },
    counts: {
      total: sums.total,
      good: sums.good,
      defects: sums.defects,
      unplannedStops: sums.unplannedStops,
    },
    ...figures,
    teep: figures.oee === null ? null : fraction(figures.oee * sums.availableTime, calendarTime),
    mtbf: perStop(runTime),
    mttr: perStop(sums.nonProgrammedDowntime),
    scrapRatio: fraction(sums.defects, sums.total),
  } as KpiReportRow;
}

const isZero = (f: Figures) => Object.values(f).every((v) => v === 0);

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
  const { db, companyId } = scope;
  const groupBy: readonly KpiKey[] = filters.groupBy ?? ["machine"];
  const covered = await reportInstancesWhere(scope, filters, now);
  if (covered === null) return [];
  const pieces = piecesOf(covered);
  const [company, machineRows, listed] = await Promise.all([
    companyQuery(scope),
    db
      .select({ id: machines.id, name: machines.name })
      .from(machines)
      .where(owned({ companyId }, machines)),
    listInstances(scope, covered.whereWithClosed, pieces, covered.closed),
  ]);
  const machineRefs = new Map(machineRows.map((m) => [m.id, { id: m.id, name: m.name }]));
  const timezone = company[0]?.timezone;
  if (listed.length === 0 || timezone === undefined) return [];
  // Closed instances (the plant calendar) are not scheduled: no figures, only their day as
  // calendar time of the groups they fall in (`closedDay`).
  const instances = listed.filter((i) => !i.closed);
  await yieldToOtherRequests();
  const machineIds = [...new Set(instances.map((i) => i.machineId))];
  if (machineIds.length > 0) await beforeRead(machineIds);
  // Counted before any record is read: see figure-cache.ts.
  const writeCounts = await machineWriteCounts(db, machineIds);
  const first = instances[0]?.start ?? 0;
  const last = instances[instances.length - 1]?.start ?? 0;
  const calendar = new LocalCalendar(timezone);

  const attributed = groupBy.filter(isAttributed);
  const kept = new Map<number, Part[]>();
  for (const [a, b] of pieces) {
    if (b <= first || a > last) continue;
    for (const [id, parts] of await readKept(scope, machineIds, a, b, attributed.length === 0)) {
      kept.set(id, parts);
    }
  }
  const groups = new Map<string, Group>();
  // The keys an instance gives every part (machine, shift, day, week, month), built once per
  // machine, shift name and day: an instance's work is then a few map lookups per part.
  const instanceKeys = new Map<string, { keys: GroupKey[]; id: string }>();
  const keysOf = (inst: ListedInstance, date: string) => {
    const cacheKey = `${inst.machineId}\u0000${inst.name}\u0000${date}`;
    let found = instanceKeys.get(cacheKey);
    if (!found) {
      const keys = groupBy.map((k): GroupKey => {
        switch (k) {
          case "machine":
            return machineRefs.get(inst.machineId) ?? { id: inst.machineId, name: "" };
          case "shift":
            return inst.name;
          case "day":
            return date;
          case "week":
            return isoWeekOf(date);
          case "month":
            return monthOf(date);
          default:
            return null; // filled per part
        }
      });
      found = { keys, id: groupId(keys) };
      instanceKeys.set(cacheKey, found);
    }
    return found;
  };
  const attributedAt = attributed.map((k) => [groupBy.indexOf(k), ATTRIBUTION_INDEX[k]] as const);
  const add = (inst: ListedInstance, parts: readonly Part[]) => {
    const day = calendar.dayOf(inst.start);
    const base = keysOf(inst, day.date);
    // The instance's parts projected on the requested attribution keys, merged first so
    // that an instance counts once per group.
    const projected = new Map<string, { keys: GroupKey[]; figures: Figures }>();
    for (const part of parts) {
      let id = base.id;
      let keys = base.keys;
      if (attributedAt.length > 0) {
        keys = [...base.keys];
        for (const [at, from] of attributedAt) keys[at] = part.key[from];
        id = groupId(keys);
      }
      const entry = projected.get(id);
      if (entry) addFigures(entry.figures, part.figures);
      else projected.set(id, { keys, figures: { ...part.figures } });
    }
    if (projected.size === 0) projected.set(base.id, { keys: base.keys, figures: zeroFigures() });
    for (const [id, { keys, figures }] of projected) {
      let group = groups.get(id);
      if (!group) {
        group = { keys, figures: zeroFigures(), instances: 0, days: new Map() };
        groups.set(id, group);
      }
      addFigures(group.figures, figures);
      group.instances += 1;
      group.days.set(`${inst.machineId}:${day.date}`, day.end - day.start);
    }
  };

  const missing = instances.filter((i) => !kept.has(i.id));
  const toKeep: ToKeep[] = [];
  for (let i = 0; i < missing.length; i += SLICE_INSTANCES) {
    const slice = missing.slice(i, i + SLICE_INSTANCES);
    const spans = await loadPageSpans(scope, slice, "attributed");
    for (const [n, inst] of slice.entries()) {
      // An instance of thousands of logs takes a millisecond or more: the others get turns.
      if (n > 0 && n % FIGURES_PER_TURN === 0) await yieldToOtherRequests();
      const { machineId, start, end } = inst;
      const parts = [
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
      add(inst, parts);
      if (end <= now) {
        toKeep.push({
          instanceId: inst.id,
          machineId,
          start,
          end,
          parts,
          writeCount: writeCounts.get(machineId) ?? 0,
        });
      }
    }
  }
  await keep(scope, toKeep);
  for (let i = 0; i < instances.length; i += ITEMS_PER_TURN) {
    for (const inst of instances.slice(i, i + ITEMS_PER_TURN)) {
      const parts = kept.get(inst.id);
      if (parts) add(inst, parts);
    }
    await yieldToOtherRequests();
  }

  // A closed day is calendar time with no planned time (docs/metrics.md, "The plant
  // calendar"): it joins the calendar time of the group its instance would have been in.
  // Groups by SKU, operator or work order split production, which a closed day has none of.
  if (attributed.length === 0) {
    for (const inst of listed) {
      if (!inst.closed) continue;
      const day = calendar.dayOf(inst.start);
      const { keys, id } = keysOf(inst, day.date);
      let group = groups.get(id);
      if (!group) {
        group = { keys, figures: zeroFigures(), instances: 0, days: new Map() };
        groups.set(id, group);
      }
      group.days.set(`${inst.machineId}:${day.date}`, day.end - day.start);
    }
  }

  const ids: Record<Attributed, Set<string | number>> = {
    sku: new Set(),
    operator: new Set(),
    simpleWorkOrder: new Set(),
  };
  for (const g of groups.values()) {
    groupBy.forEach((k, i) => {
      const key = g.keys[i];
      if (isAttributed(k) && key !== null && key !== undefined && typeof key !== "object") {
        ids[k].add(key);
      }
    });
  }
  const names = await referenceNames(scope, ids);
  for (const g of groups.values()) {
    g.keys = g.keys.map((key, i) => {
      const k = groupBy[i];
      return k && isAttributed(k) && key !== null && typeof key !== "object"
        ? { id: key, name: names[k].get(key) ?? "" }
        : key;
    });
  }
  return [...groups.values()]
    .sort((a, b) => compareKeys(a.keys, b.keys))
    .map((g) => toRow(groupBy, g));
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
