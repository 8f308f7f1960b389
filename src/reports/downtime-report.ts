/**
 * The downtime report (`POST /v1/reports/downtime`): the stops that the stops
 * report returns for the same `machines`, `startDate` and `endDate` (and an
 * optional `isProgrammed`), grouped by an ordered `groupBy` and ranked by
 * their minutes, largest first: a Pareto of why time was lost.
 *
 * Rules (docs/resources.md, "The downtime report"):
 * - a group's `minutes` is the sum of its stops' `durationInMinutes` (an open
 *   stop runs to now), `stops` their number;
 * - `share` = minutes / all groups' minutes; `cumulativeShare` sums `share`
 *   down the ranking (the last row's is 1 when any minute was lost);
 * - `shift` is the definition name of the machine's shift instance containing
 *   the stop's start (considered or not, as the stops report's `shift`);
 *   `day` the local date of the start in the company's zone;
 * - ties rank by more stops first, then by the keys (ascending, nulls last).
 *
 * Work: one statement reads every matching stop, packed by SQLite as JSON
 * texts (one per machine and 30 days, see page-spans.ts for why packed),
 * plus the company's cause names and shift plan when `groupBy` needs them;
 * the grouping is in memory, one entry per group. Nothing is stored.
 */

import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../db/company-scope";
import { stopCauses, stopClassifications, stops } from "../db/schema";
import { dateConditions, inIntegerList, resolveMachines } from "../http/filters";
import type { Page, PageRequest } from "../http/pagination";
import { instanceContains } from "../shifts/instances";
import { loadShiftPlan, MAX_INSTANCE_MS, machinesOf, windowsBetween } from "../shifts/plan";
import { LocalCalendar } from "./calendar";
import type { DowntimeKey, DowntimeReportFilters, DowntimeReportRow } from "./downtime-schemas";
import { compareKeys, type GroupKey, groupId, pageOf } from "./grouping";
import { minutesOf } from "./oee";

const CHUNK_MS = 30 * 86_400_000;

/** machine, start, end (null = open), general cause, specific cause, component. */
type PackedStop = [number, number, number | null, string | null, string | null, string | null];

/** The machine's shift definition name at an instant, or null (instances never overlap on a machine). */
function shiftNames(
  plan: Awaited<ReturnType<typeof loadShiftPlan>>,
  from: number,
  to: number,
): (machineId: number, at: number) => string | null {
  const byMachine = new Map<number, { start: number; end: number; name: string }[]>();
  if (plan) {
    for (const def of plan.definitions) {
      const windows = windowsBetween(def, plan.timezone, from - MAX_INSTANCE_MS, to + 1);
      for (const machineId of machinesOf(plan, def)) {
        const list = byMachine.get(machineId) ?? [];
        for (const w of windows) list.push({ ...w, name: def.name });
        byMachine.set(machineId, list);
      }
    }
    for (const list of byMachine.values()) list.sort((a, b) => a.start - b.start);
  }
  return (machineId, at) => {
    const list = byMachine.get(machineId) ?? [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid]?.start ?? Number.POSITIVE_INFINITY) <= at) lo = mid + 1;
      else hi = mid;
    }
    // The latest instance starting at or before `at` (as instancesContaining prefers).
    for (let i = lo - 1; i >= 0; i -= 1) {
      const w = list[i];
      if (!w || w.start <= at - MAX_INSTANCE_MS) break;
      if (instanceContains(w, at)) return w.name;
    }
    return null;
  };
}

/**
 * Every group of the downtime report, ranked (largest minutes first) with
 * shares; no paging.
 *
 * @param scope the caller's company (every row read is of it).
 * @param filters the parsed body.
 * @param now the current instant, ms (open stops run to it).
 * @returns the ranked groups; each has only the keys of `groupBy`.
 */
export async function downtimeGroups(
  scope: CompanyScope,
  filters: DowntimeReportFilters,
  now: number,
): Promise<DowntimeReportRow[]> {
  const { db, companyId } = scope;
  const groupBy: readonly DowntimeKey[] = filters.groupBy ?? ["generalCause"];
  const machineRefs = await resolveMachines(scope, filters.machines);
  if (machineRefs.length === 0) return [];
  const conditions: (SQL | undefined)[] = [
    owned({ companyId }, stops),
    isNull(stops.deletedAt),
    eq(stops.isIncludedInStops, true),
    inIntegerList(
      stops.machineId,
      machineRefs.map((m) => m.id),
    ),
    filters.isProgrammed === undefined || filters.isProgrammed === null
      ? undefined
      : eq(stops.isProgrammed, filters.isProgrammed),
    ...dateConditions(stops.startTime, filters.startDate),
    ...dateConditions(stops.endTime, filters.endDate),
  ];
  const needsCauses = groupBy.some(
    (k) => k === "generalCause" || k === "specificCause" || k === "component",
  );
  const [chunks, causes] = await Promise.all([
    db
      .select({
        packed: sql<string>`json_group_array(json_array(${stops.machineId}, ${stops.startTime},
          ${stops.endTime}, ${stopClassifications.generalCauseId},
          ${stopClassifications.specificCauseId}, ${stopClassifications.componentId}))`,
      })
      .from(stops)
      .leftJoin(stopClassifications, eq(stopClassifications.stopId, stops.id))
      .where(and(...conditions))
      .groupBy(stops.machineId, sql`${stops.startTime} / ${CHUNK_MS}`),
    needsCauses
      ? db
          .select({ id: stopCauses.id, name: stopCauses.name })
          .from(stopCauses)
          .where(owned({ companyId }, stopCauses))
      : Promise.resolve([]),
  ]);
  const packed: PackedStop[] = chunks.flatMap((c) => JSON.parse(c.packed) as PackedStop[]);
  if (packed.length === 0) return [];

  const causeNames = new Map(causes.map((c) => [c.id, c.name]));
  const cause = (id: string | null) =>
    id === null ? null : { id, name: causeNames.get(id) ?? "" };
  const machineNames = new Map(machineRefs.map((m) => [m.id, m.name]));
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const s of packed) {
    first = Math.min(first, s[1]);
    last = Math.max(last, s[1]);
  }
  // The plan also carries the company's zone, for `day`.
  const needsPlan = groupBy.includes("shift") || groupBy.includes("day");
  const plan = needsPlan ? await loadShiftPlan(scope) : null;
  const shiftOf = groupBy.includes("shift") ? shiftNames(plan, first, last) : null;
  const calendar =
    groupBy.includes("day") && plan ? new LocalCalendar(plan.timezone, first, last) : null;

  const groups = new Map<string, { keys: GroupKey[]; stops: number; ms: number }>();
  for (const [machineId, start, end, general, specific, component] of packed) {
    const keys: GroupKey[] = groupBy.map((k) => {
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
    const id = groupId(keys);
    const group = groups.get(id) ?? { keys, stops: 0, ms: 0 };
    group.stops += 1;
    group.ms += (end ?? now) - start;
    groups.set(id, group);
  }
  const ranked = [...groups.values()].sort(
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
