/**
 * A company's shift plan and the instances it implies, in code: the
 * definitions, zone and machines (`loadShiftPlan`), the instance windows of a
 * definition by UTC day (memoized per isolate, for the short ranges around an
 * instant), and the planned instances of a short range. Nothing here writes;
 * `./materialize.ts` stores (and counts) the instances of a report's range and
 * `./queries.ts` finds the stored ones.
 */

import { asc, eq } from "drizzle-orm";
import { type CompanyScope, notDeleted, owned } from "../db/company-scope";
import { companies, machines, shiftDefinitionMachines, shiftDefinitions } from "../db/schema";
import { companyClosuresQuery, type PlanClosure } from "./closures";
import { type InstanceWindow, instancesBetween } from "./instances";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Longest possible instance: a 24-hour definition (`endTime == startTime`)
 * over a DST fall-back night lasts 25 hours. An instance containing an instant
 * `t` therefore starts after `t - MAX_INSTANCE_MS`.
 */
export const MAX_INSTANCE_MS = 25 * HOUR_MS;

/** Most (definition, UTC day) entries kept by the per-isolate cache of instance windows. */
const WINDOW_CACHE_LIMIT = 50_000;
const windowCache = new Map<string, InstanceWindow[]>();

/**
 * The instances of a definition that start on one UTC day `[day, day + 24 h)`,
 * memoized per isolate. Zone arithmetic is the costly part of a report
 * (docs/benchmarks.md, "Costs behind choices in the code"); the result depends only on the
 * definition's times and weekdays and the zone, which never change for a
 * definition id, so the key holds all of them and entries never go stale.
 */
function windowsOfDay(def: ShiftDefinitionRow, timezone: string, day: number): InstanceWindow[] {
  const key = `${def.id}|${def.startTime}|${def.endTime}|${def.weekdays.join(",")}|${timezone}|${day}`;
  let windows = windowCache.get(key);
  if (!windows) {
    windows = instancesBetween(def, timezone, day, day + DAY_MS);
    if (windowCache.size >= WINDOW_CACHE_LIMIT) windowCache.clear();
    windowCache.set(key, windows);
  }
  return windows;
}

/** Longest window served from the day cache, ms; a longer one is listed in one go. */
const CACHED_SPAN_MS = 3 * DAY_MS;

/**
 * The instances of a definition whose start lies in `[from, to)`, ascending: via the day cache
 * for the short windows around an instant (at most `CACHED_SPAN_MS`, four UTC days), listed by
 * `instancesBetween` otherwise, whose work is the instances it lists (never a walk over the
 * window's days). The list grows with the window: callers bound it by what exists (a run of
 * samples, a report's instances; docs/bounded-work.md, "Time arithmetic").
 */
export function windowsBetween(
  def: ShiftDefinitionRow,
  timezone: string,
  from: number,
  to: number,
): InstanceWindow[] {
  if (to - from > CACHED_SPAN_MS) return instancesBetween(def, timezone, from, to);
  const out: InstanceWindow[] = [];
  for (let day = Math.floor(from / DAY_MS) * DAY_MS; day < to; day += DAY_MS) {
    for (const w of windowsOfDay(def, timezone, day)) {
      if (w.start >= from && w.start < to) out.push(w);
    }
  }
  return out;
}

/** A shift definition of a company, with the machines it applies to. */
export interface ShiftDefinitionRow {
  id: number;
  name: string;
  /** `HH:MM`, local. */
  startTime: string;
  /** `HH:MM`, local; `<= startTime` ends the next day. */
  endTime: string;
  /** ISO weekdays of the start, 1 = Monday ... 7 = Sunday. */
  weekdays: number[];
  isConsidered: boolean;
  /** True = every machine of the company (present and future). */
  allMachines: boolean;
  /** The machines when `allMachines` is false; empty otherwise. */
  machineIds: number[];
}

/** What instance generation needs of a company: its zone, definitions and machines. */
export interface ShiftPlan {
  companyId: number;
  /** IANA zone of the company. */
  timezone: string;
  /** Definitions that are not deleted, ascending id. */
  definitions: ShiftDefinitionRow[];
  /** Machines that are not deleted, ascending id. */
  machineIds: number[];
  /**
   * The closures of the plant calendar (not deleted), by start: an instance of a machine
   * whose start lies in one of the machine's or the company's is not scheduled
   * (./closures.ts, `closedSpansOf`).
   */
  closures: PlanClosure[];
}

/** An instance not yet known to be stored: definition, machine and window. */
export interface PlannedInstance extends InstanceWindow {
  definitionId: number;
  machineId: number;
}

export function definitionsQuery(scope: CompanyScope) {
  const { db, companyId } = scope;
  return db
    .select({
      id: shiftDefinitions.id,
      name: shiftDefinitions.name,
      startTime: shiftDefinitions.startTime,
      endTime: shiftDefinitions.endTime,
      weekdays: shiftDefinitions.weekdays,
      isConsidered: shiftDefinitions.isConsidered,
      allMachines: shiftDefinitions.allMachines,
    })
    .from(shiftDefinitions)
    .where(notDeleted({ companyId }, shiftDefinitions))
    .orderBy(asc(shiftDefinitions.id));
}

export function definitionMachinesQuery(scope: CompanyScope) {
  const { db, companyId } = scope;
  return db
    .select({
      definitionId: shiftDefinitionMachines.shiftDefinitionId,
      machineId: shiftDefinitionMachines.machineId,
    })
    .from(shiftDefinitionMachines)
    .where(owned({ companyId }, shiftDefinitionMachines))
    .orderBy(asc(shiftDefinitionMachines.machineId));
}

export function companyQuery(scope: CompanyScope) {
  const { db, companyId } = scope;
  return db
    .select({ timezone: companies.timezone })
    .from(companies)
    .where(eq(companies.id, companyId));
}

export function machineIdsQuery(scope: CompanyScope) {
  const { db, companyId } = scope;
  return db
    .select({ id: machines.id })
    .from(machines)
    .where(notDeleted({ companyId }, machines))
    .orderBy(asc(machines.id));
}

export function toPlan(
  companyId: number,
  company: { timezone: string }[],
  defs: Omit<ShiftDefinitionRow, "machineIds">[],
  links: { definitionId: number; machineId: number }[],
  machineRows: { id: number }[],
  closures: PlanClosure[],
): ShiftPlan | null {
  const timezone = company[0]?.timezone;
  if (timezone === undefined) return null;
  const byDefinition = new Map<number, number[]>();
  for (const link of links) {
    const list = byDefinition.get(link.definitionId) ?? [];
    list.push(link.machineId);
    byDefinition.set(link.definitionId, list);
  }
  return {
    companyId,
    timezone,
    definitions: defs.map((d) => ({
      ...d,
      machineIds: d.allMachines ? [] : (byDefinition.get(d.id) ?? []),
    })),
    machineIds: machineRows.map((m) => m.id),
    closures,
  };
}

/**
 * Loads a company's shift plan in one batch.
 *
 * @returns the plan, or null when the company does not exist.
 */
export async function loadShiftPlan(scope: CompanyScope): Promise<ShiftPlan | null> {
  const { db, companyId } = scope;
  const [company, defs, links, machineRows, closures] = await db.batch([
    companyQuery(scope),
    definitionsQuery(scope),
    definitionMachinesQuery(scope),
    machineIdsQuery(scope),
    companyClosuresQuery(scope),
  ] as const);
  return toPlan(companyId, company, defs, links, machineRows, closures);
}

/** The machines (of `plan.machineIds`) a definition applies to. */
export function machinesOf(plan: ShiftPlan, def: ShiftDefinitionRow): number[] {
  if (def.allMachines) return plan.machineIds;
  const alive = new Set(plan.machineIds);
  return def.machineIds.filter((id) => alive.has(id));
}

/**
 * Every instance of the plan whose start lies in `[from, to)`, for the machines
 * given (default: all), in no particular order.
 */
export function plannedInstances(
  plan: ShiftPlan,
  from: number,
  to: number,
  onlyMachines?: ReadonlySet<number>,
): PlannedInstance[] {
  const out: PlannedInstance[] = [];
  for (const def of plan.definitions) {
    const machineIds = machinesOf(plan, def).filter((id) => !onlyMachines || onlyMachines.has(id));
    if (machineIds.length === 0) continue;
    for (const w of windowsBetween(def, plan.timezone, from, to)) {
      for (const machineId of machineIds) out.push({ ...w, definitionId: def.id, machineId });
    }
  }
  return out;
}
