/**
 * The downtime report (`POST /v1/reports/downtime`): a Pareto of why time was lost: the stops
 * the stops report returns for the same filters (and `isProgrammed`), grouped by an ordered
 * `groupBy`, ranked by minutes (ties: more stops, then the keys), with `share` and
 * `cumulativeShare`. One statement reads the matching stops packed as JSON texts (at most
 * `MAX_DOWNTIME_STOPS`, else 422); shift names and local days are looked up per stop; the
 * grouping is in memory, one entry per group. docs/resources.md (the downtime report).
 */

import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../db/company-scope";
import { stopCauses, stopClassifications, stops } from "../db/schema";
import { unprocessable } from "../http/errors";
import { dateConditions, inIntegerList } from "../http/filters";
import type { Page, PageRequest } from "../http/pagination";
import { instanceContains } from "../shifts/instances";
import {
  loadShiftPlan,
  MAX_INSTANCE_MS,
  machinesOf,
  type ShiftPlan,
  windowsBetween,
} from "../shifts/plan";
import { LocalCalendar } from "./calendar";
import type { DowntimeKey, DowntimeReportFilters, DowntimeReportRow } from "./downtime-schemas";
import { compareKeys, type GroupKey, groupId, pageOf } from "./grouping";
import { filterMachines } from "./machine-filter";
import { minutesOf } from "./oee";
import { originCondition } from "./schemas";

const CHUNK_MS = 30 * 86_400_000;

/**
 * Most stops one downtime report groups (about seven years of a plant stopping 40 times a
 * day); above it the request is refused (422) after reading one more than that, never all.
 */
export const MAX_DOWNTIME_STOPS = 100_000;

/** machine, start, end (null = open), general cause, specific cause, component. */
type PackedStop = [number, number, number | null, string | null, string | null, string | null];

/**
 * The machine's shift definition name at an instant, or null (instances never overlap on a
 * machine): the instances around each instant looked up (`windowsBetween`, memoized per
 * definition and day), so the work grows with the stops' days, not with the span between
 * the first and the last stop.
 */
function shiftNames(plan: ShiftPlan | null): (machineId: number, at: number) => string | null {
  const byMachine = new Map<number, ShiftPlan["definitions"]>();
  for (const def of plan?.definitions ?? []) {
    for (const machineId of plan ? machinesOf(plan, def) : []) {
      const list = byMachine.get(machineId) ?? [];
      list.push(def);
      byMachine.set(machineId, list);
    }
  }
  return (machineId, at) => {
    if (!plan) return null;
    // The latest instance starting at or before `at` that contains it (as instancesContaining).
    let best: { start: number; name: string } | null = null;
    for (const def of byMachine.get(machineId) ?? []) {
      for (const w of windowsBetween(def, plan.timezone, at - MAX_INSTANCE_MS, at + 1)) {
        if (instanceContains(w, at) && (!best || w.start > best.start)) {
          best = { start: w.start, name: def.name };
        }
      }
    }
    return best?.name ?? null;
  };
}

/**
 * Every group of the downtime report, ranked (largest minutes first) with
 * shares; no paging. The matching stops are read (`readMatchingStops`), each given the keys
 * of `groupBy` (`groupKeysOf`), summed per group (`groupStops`) and ranked (`rankedRows`).
 *
 * @param scope the caller's company (every row read is of it).
 * @param filters the parsed body.
 * @param now the current instant, ms (open stops run to it).
 * @returns the ranked groups; each has only the keys of `groupBy`.
 * @throws ApiError 422 `too_many_stops` when more than `MAX_DOWNTIME_STOPS` stops match.
 */
export async function downtimeGroups(
  scope: CompanyScope,
  filters: DowntimeReportFilters,
  now: number,
): Promise<DowntimeReportRow[]> {
  const groupBy: readonly DowntimeKey[] = filters.groupBy ?? ["generalCause"];
  const machineRefs = await filterMachines(scope, filters.machines);
  if (machineRefs.length === 0) return [];
  const needsCauses = groupBy.some(
    (k) => k === "generalCause" || k === "specificCause" || k === "component",
  );
  const { packed, causes } = await readMatchingStops(
    scope,
    filters,
    machineRefs.map((m) => m.id),
    needsCauses,
  );
  if (packed.length === 0) return [];
  const keysOf = await groupKeysOf(scope, groupBy, machineRefs, causes);
  return rankedRows(groupBy, groupStops(packed, keysOf, now));
}

/**
 * The stops the stops report returns for the same filters: of the machines given, not
 * deleted, included in stops, of the `isProgrammed`, `startDate`, `endDate` and `origin`
 * asked for (docs/resources.md, the downtime report).
 *
 * @param companyId the caller's company.
 * @param filters the parsed body.
 * @param machineIds the machines the body's `machines` filter keeps.
 * @returns the conditions of the statement, to `and` together.
 */
function matchingConditions(
  companyId: number,
  filters: DowntimeReportFilters,
  machineIds: readonly number[],
): (SQL | undefined)[] {
  return [
    owned({ companyId }, stops),
    isNull(stops.deletedAt),
    eq(stops.isIncludedInStops, true),
    inIntegerList(stops.machineId, machineIds),
    filters.isProgrammed === undefined || filters.isProgrammed === null
      ? undefined
      : eq(stops.isProgrammed, filters.isProgrammed),
    ...dateConditions(stops.startTime, filters.startDate),
    ...dateConditions(stops.endTime, filters.endDate),
    originCondition(stops.origin, filters.origin),
  ];
}

/**
 * Reads the matching stops with their classification's causes, packed by SQLite as JSON
 * texts (one a machine and `CHUNK_MS` of starts), and, when the groups need them, the
 * company's cause names: two statements at once. At most one stop more than
 * `MAX_DOWNTIME_STOPS` is read: enough to refuse, never the whole history.
 *
 * @param scope the caller's company (every row read is of it).
 * @param filters the parsed body.
 * @param machineIds the machines the body's `machines` filter keeps.
 * @param needsCauses whether to read the cause names (a cause is among `groupBy`).
 * @returns the stops (`PackedStop`: instants in ms, open ones with a null end) and the causes.
 * @throws ApiError 422 `too_many_stops` when more than `MAX_DOWNTIME_STOPS` stops match.
 */
async function readMatchingStops(
  scope: CompanyScope,
  filters: DowntimeReportFilters,
  machineIds: readonly number[],
  needsCauses: boolean,
): Promise<{ packed: PackedStop[]; causes: { id: string; name: string }[] }> {
  const { db, companyId } = scope;
  const matching = db
    .select({
      machineId: stops.machineId,
      start: stops.startTime,
      end: stops.endTime,
      general: stopClassifications.generalCauseId,
      specific: stopClassifications.specificCauseId,
      component: stopClassifications.componentId,
    })
    .from(stops)
    .leftJoin(stopClassifications, eq(stopClassifications.stopId, stops.id))
    .where(and(...matchingConditions(companyId, filters, machineIds)))
    .limit(MAX_DOWNTIME_STOPS + 1)
    .as("matching");
  const [chunks, causes] = await Promise.all([
    db
      .select({
        packed: sql<string>`json_group_array(json_array(${matching.machineId}, ${matching.start},
          ${matching.end}, ${matching.general}, ${matching.specific}, ${matching.component}))`,
      })
      .from(matching)
      .groupBy(matching.machineId, sql`${matching.start} / ${CHUNK_MS}`),
    needsCauses
      ? db
          .select({ id: stopCauses.id, name: stopCauses.name })
          .from(stopCauses)
          .where(owned({ companyId }, stopCauses))
      : Promise.resolve([]),
  ]);
  const packed: PackedStop[] = chunks.flatMap((c) => JSON.parse(c.packed) as PackedStop[]);
  if (packed.length > MAX_DOWNTIME_STOPS) {
    throw unprocessable(
      ["body"],
      `The report would group more than ${MAX_DOWNTIME_STOPS} stops and a downtime report ` +
        "groups at most that many: narrow startDate/endDate or machines",
      "too_many_stops",
    );
  }
  return { packed, causes };
}

/**
 * The keys of `groupBy` of one stop: a cause as `{id, name}` (null when not classified so
 * far), the machine as `{id, name}`, the shift definition's name at the stop's start (null
 * outside every instance), the company's local date of its start (`YYYY-MM-DD`). The shift
 * plan, which also carries the company's zone, is read once (one statement) when `shift` or
 * `day` is asked for.
 *
 * @param scope the caller's company.
 * @param groupBy the ordered keys of the groups.
 * @param machineRefs the report's machines, with their names.
 * @param causes the company's causes (empty when no cause is among `groupBy`).
 * @returns a function from a stop to its keys, in the order of `groupBy`.
 */
async function groupKeysOf(
  scope: CompanyScope,
  groupBy: readonly DowntimeKey[],
  machineRefs: readonly { id: number; name: string }[],
  causes: readonly { id: string; name: string }[],
): Promise<(stop: PackedStop) => GroupKey[]> {
  const causeNames = new Map(causes.map((c) => [c.id, c.name]));
  const cause = (id: string | null) =>
    id === null ? null : { id, name: causeNames.get(id) ?? "" };
  const machineNames = new Map(machineRefs.map((m) => [m.id, m.name]));
  const needsPlan = groupBy.includes("shift") || groupBy.includes("day");
  const plan = needsPlan ? await loadShiftPlan(scope) : null;
  const shiftOf = groupBy.includes("shift") ? shiftNames(plan) : null;
  const calendar = groupBy.includes("day") && plan ? new LocalCalendar(plan.timezone) : null;
  return ([machineId, start, , general, specific, component]) =>
    groupBy.map((k) => {
      switch (k) {
        case "generalCause":
          return cause(general);
        case "specificCause":
          return cause(specific);
        case "component":
          return cause(component);
        case "machine":
          return { id: machineId, name: machineNames.get(machineId) ?? "" };
        case "shift":
          return shiftOf?.(machineId, start) ?? null;
        default:
          return calendar?.dayOf(start).date ?? null;
      }
    });
}

/** A group of stops: its keys, how many stops and their time, ms. */
interface StopGroup {
  keys: GroupKey[];
  stops: number;
  ms: number;
}

/**
 * Sums the stops per group, in memory (one entry a group): each stop counts once and adds
 * its duration, `end - start`, an open stop's up to `now`.
 *
 * @param packed the matching stops.
 * @param keysOf a stop's keys (`groupKeysOf`).
 * @param now the current instant, ms.
 * @returns the groups, in no order.
 */
function groupStops(
  packed: readonly PackedStop[],
  keysOf: (stop: PackedStop) => GroupKey[],
  now: number,
): StopGroup[] {
  const groups = new Map<string, StopGroup>();
  for (const stop of packed) {
    const keys = keysOf(stop);
    const id = groupId(keys);
    const group = groups.get(id) ?? { keys, stops: 0, ms: 0 };
    group.stops += 1;
    group.ms += (stop[2] ?? now) - stop[1];
    groups.set(id, group);
  }
  return [...groups.values()];
}

/**
 * The Pareto's rows: the groups ranked by minutes (ties: more stops, then the keys), each
 * with its `share` of all the report's downtime and the `cumulativeShare` of it and the
 * groups ranked before it (both fractions, 0 when there is no downtime at all).
 *
 * @param groupBy the ordered keys, each a field of the row.
 * @param groups the summed groups (`groupStops`).
 * @returns the report's rows, `minutes` from ms by the reports' one rule (`minutesOf`).
 */
function rankedRows(groupBy: readonly DowntimeKey[], groups: StopGroup[]): DowntimeReportRow[] {
  const ranked = groups.sort(
    (a, b) => b.ms - a.ms || b.stops - a.stops || compareKeys(a.keys, b.keys),
  );
  const totalMs = ranked.reduce((sum, g) => sum + g.ms, 0);
  let cumulativeMs = 0;
  return ranked.map((g) => {
    cumulativeMs += g.ms;
    const row: Record<string, unknown> = {};
    groupBy.forEach((k, i) => {
      row[k] = g.keys[i];
    });
    return {
      ...row,
      stops: g.stops,
      minutes: minutesOf(g.ms),
      share: totalMs === 0 ? 0 : g.ms / totalMs,
      cumulativeShare: totalMs === 0 ? 0 : cumulativeMs / totalMs,
    } as DowntimeReportRow;
  });
}

/**
 * One page of the downtime report (see `downtimeGroups`).
 *
 * @param scope the caller's company.
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms.
 */
export async function downtimeReport(
  scope: CompanyScope,
  filters: DowntimeReportFilters,
  page: PageRequest,
  now: number,
): Promise<Page<DowntimeReportRow>> {
  return pageOf(await downtimeGroups(scope, filters, now), page);
}
