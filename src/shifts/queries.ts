/**
 * Shift instances as rows of `shift_instances`, materialized lazily.
 *
 * An instance is one occurrence of a shift definition for one machine
 * (docs/metrics.md, "Shifts"). Its instants follow from the definition, the
 * company's time zone and the calendar (`instancesBetween`, DST-correct), so a
 * row can be written whenever it is first needed and is never recomputed: the
 * unique key (definition, machine, start) makes every write an idempotent
 * `INSERT OR IGNORE`, and the row's autoincrement `id` is the stable integer id
 * of the instance (the `shift.id` of report rows and production logs, and the
 * metrics report's `indicatorId`).
 *
 * Bounded work: `ensureInstances` writes the instances of a window once and
 * afterwards costs one indexed count; `instancesContaining` touches only the
 * instances that contain a given list of instants (a few per instant).
 */
import { and, asc, eq, gte, isNull, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import {
  companies,
  machines,
  shiftDefinitionMachines,
  shiftDefinitions,
  shiftInstances,
} from "../db/schema";
import { type InstanceWindow, instancesBetween } from "./instances";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Longest possible instance: a 24-hour definition (`endTime == startTime`)
 * over a DST fall-back night lasts 25 hours. An instance containing an instant
 * `t` therefore starts after `t - MAX_INSTANCE_MS`.
 */
export const MAX_INSTANCE_MS = 25 * HOUR_MS;

/** Rows per `INSERT ... SELECT FROM json_each(?)` statement (one bound JSON parameter each). */
const INSERT_CHUNK = 2000;

/** Most (definition, UTC day) entries kept by the per-isolate cache of instance windows. */
const WINDOW_CACHE_LIMIT = 50_000;
const windowCache = new Map<string, InstanceWindow[]>();

/**
 * The instances of a definition that start on one UTC day `[day, day + 24 h)`,
 * memoized per isolate. Zone arithmetic is the costly part of a report
 * (about 0.1 to 0.5 ms per day and definition); the result depends only on the
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

/** The instances of a definition whose start lies in `[from, to)`, ascending, via the day cache. */
function windowsBetween(
  def: ShiftDefinitionRow,
  timezone: string,
  from: number,
  to: number,
): InstanceWindow[] {
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
}

/** A shift instance row with its definition's name and `isConsidered`. */
export interface ShiftInstanceRow {
  id: number;
  definitionId: number;
  machineId: number;
  /** ms since the epoch. */
  start: number;
  /** ms since the epoch. */
  end: number;
  name: string;
  isConsidered: boolean;
}

/** An instance not yet known to be stored: definition, machine and window. */
interface PlannedInstance extends InstanceWindow {
  definitionId: number;
  machineId: number;
}

function definitionsQuery(db: Database, companyId: number) {
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
    .where(and(eq(shiftDefinitions.companyId, companyId), isNull(shiftDefinitions.deletedAt)))
    .orderBy(asc(shiftDefinitions.id));
}

function definitionMachinesQuery(db: Database, companyId: number) {
  return db
    .select({
      definitionId: shiftDefinitionMachines.shiftDefinitionId,
      machineId: shiftDefinitionMachines.machineId,
    })
    .from(shiftDefinitionMachines)
    .where(eq(shiftDefinitionMachines.companyId, companyId))
    .orderBy(asc(shiftDefinitionMachines.machineId));
}

function companyQuery(db: Database, companyId: number) {
  return db
    .select({ timezone: companies.timezone })
    .from(companies)
    .where(eq(companies.id, companyId));
}

function machineIdsQuery(db: Database, companyId: number) {
  return db
    .select({ id: machines.id })
    .from(machines)
    .where(and(eq(machines.companyId, companyId), isNull(machines.deletedAt)))
    .orderBy(asc(machines.id));
}

function toPlan(
  companyId: number,
  company: { timezone: string }[],
  defs: Omit<ShiftDefinitionRow, "machineIds">[],
  links: { definitionId: number; machineId: number }[],
  machineRows: { id: number }[],
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
  };
}

/**
 * Loads a company's shift plan in one batch.
 *
 * @returns the plan, or null when the company does not exist.
 */
export async function loadShiftPlan(db: Database, companyId: number): Promise<ShiftPlan | null> {
  const [company, defs, links, machineRows] = await db.batch([
    companyQuery(db, companyId),
    definitionsQuery(db, companyId),
    definitionMachinesQuery(db, companyId),
    machineIdsQuery(db, companyId),
  ] as const);
  return toPlan(companyId, company, defs, links, machineRows);
}

/** The machines (of `plan.machineIds`) a definition applies to. */
function machinesOf(plan: ShiftPlan, def: ShiftDefinitionRow): number[] {
  if (def.allMachines) return plan.machineIds;
  const alive = new Set(plan.machineIds);
  return def.machineIds.filter((id) => alive.has(id));
}

/**
 * Every instance of the plan whose start lies in `[from, to)`, for the machines
 * given (default: all), in no particular order.
 */
function plannedInstances(
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

/** `INSERT OR IGNORE` statements for planned instances, one per chunk of rows. */
function insertStatements(
  db: Database,
  companyId: number,
  rows: readonly PlannedInstance[],
): BatchItem<"sqlite">[] {
  const out: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows
      .slice(i, i + INSERT_CHUNK)
      .map((r) => [r.definitionId, r.machineId, r.start, r.end]);
    // Every column in table order (id NULL = autoincrement); `WHERE true` lets SQLite parse
    // the ON CONFLICT clause after a SELECT. (Drizzle cannot batch raw `db.run` statements.)
    out.push(
      db
        .insert(shiftInstances)
        .select(
          sql`SELECT NULL, CAST(${companyId} AS INTEGER), json_extract(value, '$[0]'),
                json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]')
              FROM json_each(${JSON.stringify(chunk)}) WHERE true`,
        )
        .onConflictDoNothing(),
    );
  }
  return out;
}

/**
 * Makes sure every instance of the company whose start lies in `[from, to)`
 * is stored, for the machines given (default: every machine the definitions
 * apply to). Idempotent; after the first call over a range the cost is one
 * indexed count: instances follow deterministically from the definitions, so
 * when the stored count equals the planned count nothing is missing.
 *
 * @param db Drizzle client.
 * @param companyId the company.
 * @param from inclusive lower bound of instance starts, ms.
 * @param to exclusive upper bound of instance starts, ms.
 * @param onlyMachines restrict to these machine ids (others are left as they are).
 */
export async function ensureInstances(
  db: Database,
  companyId: number,
  from: number,
  to: number,
  onlyMachines?: readonly number[],
): Promise<void> {
  if (to <= from) return;
  const machineSet = onlyMachines ? new Set(onlyMachines) : undefined;
  const machineCondition = onlyMachines
    ? sql`${shiftInstances.machineId} IN (SELECT value FROM json_each(${JSON.stringify(onlyMachines)}))`
    : undefined;
  // Stored instances of live definitions and machines: a subset of the planned ones.
  const storedCount = db
    .select({ count: sql<number>`count(*)` })
    .from(shiftInstances)
    .innerJoin(
      shiftDefinitions,
      and(
        eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId),
        isNull(shiftDefinitions.deletedAt),
      ),
    )
    .innerJoin(machines, and(eq(machines.id, shiftInstances.machineId), isNull(machines.deletedAt)))
    .where(
      and(
        eq(shiftInstances.companyId, companyId),
        gte(shiftInstances.start, from),
        lt(shiftInstances.start, to),
        machineCondition,
      ),
    );
  const [company, defs, links, machineRows, stored] = await db.batch([
    companyQuery(db, companyId),
    definitionsQuery(db, companyId),
    definitionMachinesQuery(db, companyId),
    machineIdsQuery(db, companyId),
    storedCount,
  ] as const);
  const plan = toPlan(companyId, company, defs, links, machineRows);
  if (!plan) return;
  const planned = plannedInstances(plan, from, to, machineSet);
  if (Number(stored[0]?.count ?? 0) >= planned.length) return;
  const [first, ...rest] = insertStatements(db, companyId, planned);
  if (first) await db.batch([first, ...rest]);
}

/** A point in time on one machine. */
export interface MachineInstant {
  machineId: number;
  /** ms since the epoch. */
  at: number;
}

/**
 * For each `(machine, instant)`, the shift instance of that machine that
 * contains the instant (`start <= at < end`), materializing only those
 * instances. Overlapping definitions are refused at creation, so at most one
 * instance matches; should old data hold two, the later start wins.
 *
 * Work is proportional to the number of points: instances are generated for
 * the day or two before each point (memoized per definition and UTC day).
 *
 * @param db Drizzle client.
 * @param plan the company's plan (`loadShiftPlan`).
 * @param points the instants to look up.
 * @returns one entry per point, in the same order: the instance, or null.
 */
export async function instancesContaining(
  db: Database,
  plan: ShiftPlan,
  points: readonly MachineInstant[],
): Promise<(ShiftInstanceRow | null)[]> {
  // An instance containing `at` starts in (at - MAX_INSTANCE_MS, at].
  const windowsAround = (def: ShiftDefinitionRow, at: number): InstanceWindow[] =>
    windowsBetween(def, plan.timezone, at - MAX_INSTANCE_MS, at + 1);
  const definitionsByMachine = new Map<number, ShiftDefinitionRow[]>();
  for (const def of plan.definitions) {
    for (const machineId of machinesOf(plan, def)) {
      const list = definitionsByMachine.get(machineId) ?? [];
      list.push(def);
      definitionsByMachine.set(machineId, list);
    }
  }
  const matches: (PlannedInstance | null)[] = points.map((p) => {
    let best: PlannedInstance | null = null;
    for (const def of definitionsByMachine.get(p.machineId) ?? []) {
      for (const w of windowsAround(def, p.at)) {
        if (w.start <= p.at && p.at < w.end && (!best || w.start > best.start)) {
          best = { ...w, definitionId: def.id, machineId: p.machineId };
        }
      }
    }
    return best;
  });
  const keyOf = (r: { definitionId: number; machineId: number; start: number }) =>
    `${r.definitionId}:${r.machineId}:${r.start}`;
  const unique = new Map<string, PlannedInstance>();
  for (const m of matches) if (m) unique.set(keyOf(m), m);
  if (unique.size === 0) return points.map(() => null);

  const needed = [...unique.values()];
  const keys = JSON.stringify(needed.map((r) => [r.definitionId, r.machineId, r.start]));
  const lookup = db
    .select({
      id: shiftInstances.id,
      definitionId: shiftInstances.shiftDefinitionId,
      machineId: shiftInstances.machineId,
      start: shiftInstances.start,
      end: shiftInstances.end,
    })
    .from(shiftInstances)
    .where(
      and(
        eq(shiftInstances.companyId, plan.companyId),
        sql`(${shiftInstances.shiftDefinitionId}, ${shiftInstances.machineId}, ${shiftInstances.start})
          IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
              FROM json_each(${keys}))`,
      ),
    );
  // The inserts come first so that the lookup, in the same transaction, sees every row.
  const [first, ...rest]: BatchItem<"sqlite">[] = [
    ...insertStatements(db, plan.companyId, needed),
    lookup,
  ];
  if (!first) return points.map(() => null);
  const results: unknown[] = await db.batch([first, ...rest]);
  const rows = results[results.length - 1] as {
    id: number;
    definitionId: number;
    machineId: number;
    start: number;
    end: number;
  }[];
  const definitions = new Map(plan.definitions.map((d) => [d.id, d]));
  const stored = new Map<string, ShiftInstanceRow>();
  for (const r of rows) {
    const def = definitions.get(r.definitionId);
    if (!def) continue;
    stored.set(keyOf(r), {
      id: r.id,
      definitionId: r.definitionId,
      machineId: r.machineId,
      start: r.start,
      end: r.end,
      name: def.name,
      isConsidered: def.isConsidered,
    });
  }
  return matches.map((m) => (m ? (stored.get(keyOf(m)) ?? null) : null));
}

/**
 * "The shift a machine is running now" (docs/metrics.md): the machine's instance
 * with `start <= now < end`, or null when it runs no shift.
 *
 * @param db Drizzle client.
 * @param companyId the machine's company.
 * @param machineId the machine (of that company).
 * @param now the instant, ms (default: the current time).
 */
export async function runningInstance(
  db: Database,
  companyId: number,
  machineId: number,
  now: number = Date.now(),
): Promise<ShiftInstanceRow | null> {
  const plan = await loadShiftPlan(db, companyId);
  if (!plan) return null;
  const [found] = await instancesContaining(db, plan, [{ machineId, at: now }]);
  return found ?? null;
}
