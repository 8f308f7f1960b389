/**
 * Shift instances written as rows of `shift_instances` for a report's window, only where they
 * can matter: the listed definitions, on each machine from its first activity, never past now.
 * Written once (`INSERT OR IGNORE`); afterwards a range costs one count on the covering index,
 * compared with the count by calendar arithmetic. Statements of `INSERT_CHUNK` rows, the
 * Worker yielding between them. docs/bounded-work.md ("Where instances exist").
 */

import { and, count, gte, lt, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, owned, ownedSql } from "../db/company-scope";
import { machines, productionLogs, shiftInstances, stops } from "../db/schema";
import { yieldToOtherRequests } from "../http/budget";
import { inIntegerList } from "../http/filters";
import { countInstancesBetween, type InstanceWindow, instancesBetween } from "./instances";
import {
  MAX_INSTANCE_MS,
  machinesOf,
  type PlannedInstance,
  type ShiftDefinitionRow,
  type ShiftPlan,
} from "./plan";

/**
 * Rows per `INSERT ... SELECT FROM json_each(?)` statement (one bound JSON parameter each):
 * few enough that one statement holds D1 a few milliseconds (25,000 instances, the most a
 * report covers, are 50 statements).
 */
const INSERT_CHUNK = 500;

/** Span of instance starts computed in one go before the Worker yields, ms (90 days). */
const WALK_CHUNK_MS = 90 * 86_400_000;

/**
 * Most machines whose windows are told apart in SQL (a `CASE` over the machine id, evaluated
 * per instance row); above it every machine gets the earliest window of them all.
 */
const MAX_MACHINE_WINDOWS = 64;

/** `INSERT OR IGNORE` statements for planned instances, one per chunk of rows. */
export function insertStatements(
  scope: CompanyScope,
  rows: readonly PlannedInstance[],
): BatchItem<"sqlite">[] {
  const { db, companyId } = scope;
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

/** The instances wanted on one machine: starts from `from`, ends after `endsAfter`. */
interface MachineWindow {
  machineId: number;
  /** Earliest instance start, ms (inclusive). */
  from: number;
  /** The instance must end after this instant, ms (the machine's first activity). */
  endsAfter: number;
}

/** The instances a report covers, before its own filters on start and end. */
export interface InstanceRange {
  /** The definitions whose instances are wanted (ids of `plan.definitions`). */
  definitionIds: readonly number[];
  /** One window per machine (machines of the plan). */
  machines: readonly MachineWindow[];
  /** Exclusive upper bound of instance starts, ms. */
  to: number;
}

/**
 * Each machine's first activity: the earliest of its creation, its first production log and
 * its first stop (deleted ones included: they were data once), ms. One statement reading
 * three rows per machine: the machine by id, then one step of the (machine, start) index of
 * logs and of stops. The machines come as a `VALUES` list (D1 counts every row of a
 * `json_each` or of an `IN` probe as read).
 *
 * @param scope the company (every machine given is of it: the caller resolved them).
 * @param machineIds the machines.
 * @returns machine id to instant; a machine not found is left out.
 */
export async function firstActivity(
  scope: CompanyScope,
  machineIds: readonly number[],
): Promise<Map<number, number>> {
  const { db, companyId } = scope;
  const ids = machineIds.filter(Number.isSafeInteger);
  if (ids.length === 0) return new Map();
  // Safe integers only: the text cannot carry anything but numbers. The log and stop
  // subqueries need no company condition: a machine's logs and stops are its company's.
  const values = sql.raw(ids.map((id) => `(${id})`).join(", "));
  const rows = await db.all<{
    id: number;
    created: number | null;
    log: number | null;
    stop: number | null;
  }>(
    sql`SELECT v.column1 AS id,
        (SELECT m.created_at FROM ${machines} AS m
          WHERE m.id = v.column1 AND ${ownedSql({ companyId }, "+m.company_id")}) AS created,
        (SELECT min(l.start) FROM ${productionLogs} AS l WHERE l.machine_id = v.column1) AS log,
        (SELECT min(s.start_time) FROM ${stops} AS s WHERE s.machine_id = v.column1) AS stop
      FROM (VALUES ${values}) AS v`,
  );
  const out = new Map<number, number>();
  for (const r of rows) {
    if (r.created === null) continue;
    out.set(Number(r.id), Math.min(r.created, r.log ?? r.created, r.stop ?? r.created));
  }
  return out;
}

/**
 * The machine windows of a report: on each machine, instances starting in `[from, to)` and
 * ending after its first activity (the instance that holds it included). With more than
 * `MAX_MACHINE_WINDOWS` machines, each gets the earliest window of them all.
 *
 * @param activity each machine's first activity (`firstActivity`), ms.
 * @param from the report's earliest instance start, ms.
 */
export function machineWindows(
  activity: ReadonlyMap<number, number>,
  from: number,
): MachineWindow[] {
  const windows = [...activity].map(([machineId, at]) => ({
    machineId,
    // An instance ending after `at` starts after `at - MAX_INSTANCE_MS`.
    from: Math.max(from, at - MAX_INSTANCE_MS),
    endsAfter: at,
  }));
  if (windows.length <= MAX_MACHINE_WINDOWS) return windows;
  const earliest = Math.min(...windows.map((w) => w.endsAfter));
  const start = Math.max(from, earliest - MAX_INSTANCE_MS);
  return windows.map((w) => ({ machineId: w.machineId, from: start, endsAfter: earliest }));
}

/** The definitions of a range, with the machine windows each applies to. */
function definitionsOf(
  plan: ShiftPlan,
  range: InstanceRange,
): { def: ShiftDefinitionRow; windows: MachineWindow[] }[] {
  const wanted = new Set(range.definitionIds);
  return plan.definitions
    .filter((def) => wanted.has(def.id))
    .map((def) => {
      const applies = new Set(machinesOf(plan, def));
      return { def, windows: range.machines.filter((w) => applies.has(w.machineId)) };
    })
    .filter((d) => d.windows.length > 0);
}

/**
 * How many instances of a definition one machine window holds, by calendar arithmetic: those
 * starting in `[from, to)`, less the few that end by `endsAfter` (they start within the
 * longest instance before it).
 */
function countIn(def: ShiftDefinitionRow, timezone: string, w: MachineWindow, to: number): number {
  const all = countInstancesBetween(def, timezone, w.from, to);
  if (all === 0 || w.endsAfter <= w.from) return all;
  const early = instancesBetween(def, timezone, w.from, Math.min(to, w.endsAfter));
  return all - early.filter((i) => i.end <= w.endsAfter).length;
}

/**
 * The number of instances a range holds, per machine, without listing them (a few zone
 * computations per definition and machine, whatever the range's length).
 */
export function plannedCounts(plan: ShiftPlan, range: InstanceRange): Map<number, number> {
  const counts = new Map<number, number>(range.machines.map((w) => [w.machineId, 0]));
  for (const { def, windows } of definitionsOf(plan, range)) {
    for (const w of windows) {
      counts.set(
        w.machineId,
        (counts.get(w.machineId) ?? 0) + countIn(def, plan.timezone, w, range.to),
      );
    }
  }
  return counts;
}

/** `CASE <machine> WHEN <id> THEN <value> ... END` over safe integers, or the one value when all agree. */
function perMachine(windows: readonly MachineWindow[], value: (w: MachineWindow) => number): SQL {
  const values = new Set(windows.map(value));
  if (values.size === 1) return sql.raw(String([...values][0]));
  // Safe integers only (ids and instants): the text cannot carry anything but numbers.
  const branches = windows
    .map((w) => `WHEN ${Math.trunc(w.machineId)} THEN ${Math.trunc(value(w))}`)
    .join(" ");
  return sql`CASE ${shiftInstances.machineId} ${sql.raw(branches)} END`;
}

/**
 * The condition selecting a range's instances on `shift_instances` (company, machines,
 * definitions, each machine's window, starts before `to`), as the covering
 * (company, start, machine, definition, end) index answers it without reading rows.
 *
 * @param scope the company.
 * @param range the range; its machine windows must be safe integers (instants and ids).
 */
export function rangeCondition(scope: CompanyScope, range: InstanceRange): SQL {
  const { companyId } = scope;
  const machineIds = range.machines.map((w) => w.machineId);
  const from = Math.min(...range.machines.map((w) => w.from));
  return and(
    owned({ companyId }, shiftInstances),
    gte(shiftInstances.start, from),
    lt(shiftInstances.start, range.to),
    inIntegerList(shiftInstances.machineId, machineIds),
    inIntegerList(shiftInstances.shiftDefinitionId, range.definitionIds),
    sql`${shiftInstances.start} >= ${perMachine(range.machines, (w) => w.from)}`,
    sql`${shiftInstances.end} > ${perMachine(range.machines, (w) => w.endsAfter)}`,
  ) as SQL;
}

/**
 * Makes sure every instance of a range is stored. Idempotent; after the first call over a
 * range the cost is one count on the covering index per call: instances follow
 * deterministically from the definitions, so a machine whose stored count equals its planned
 * count (`plannedCounts`) misses none. The machines that miss some get theirs written, the
 * instances computed 90 days at a time and written `INSERT_CHUNK` rows per statement, the
 * Worker yielding between chunks.
 *
 * @param scope the company.
 * @param plan the company's plan (`loadShiftPlan`).
 * @param range the range (machines of the plan, definitions of the plan).
 * @param planned the range's planned counts, when already computed (`plannedCounts`).
 */
export async function ensureInstances(
  scope: CompanyScope,
  plan: ShiftPlan,
  range: InstanceRange,
  planned: ReadonlyMap<number, number> = plannedCounts(plan, range),
): Promise<void> {
  const { db } = scope;
  if (range.machines.length === 0 || range.definitionIds.length === 0) return;
  const stored = await db
    .select({ machineId: shiftInstances.machineId, count: count() })
    .from(shiftInstances)
    .where(rangeCondition(scope, range))
    .groupBy(shiftInstances.machineId);
  const storedOf = new Map(stored.map((r) => [r.machineId, r.count]));
  const short = new Set(
    range.machines
      .filter((w) => (storedOf.get(w.machineId) ?? 0) < (planned.get(w.machineId) ?? 0))
      .map((w) => w.machineId),
  );
  if (short.size === 0) return;
  let pending: PlannedInstance[] = [];
  const flush = async () => {
    for (const statement of insertStatements(scope, pending)) {
      await statement;
      await yieldToOtherRequests();
    }
    pending = [];
  };
  const missing = { ...range, machines: range.machines.filter((w) => short.has(w.machineId)) };
  for (const { def, windows } of definitionsOf(plan, missing)) {
    const from = Math.min(...windows.map((w) => w.from));
    for (let a = from; a < range.to; a += WALK_CHUNK_MS) {
      const found: InstanceWindow[] = instancesBetween(
        def,
        plan.timezone,
        a,
        Math.min(a + WALK_CHUNK_MS, range.to),
      );
      for (const w of windows) {
        for (const i of found) {
          if (i.start >= w.from && i.end > w.endsAfter) {
            pending.push({ ...i, definitionId: def.id, machineId: w.machineId });
          }
        }
      }
      if (pending.length >= INSERT_CHUNK) await flush();
      else await yieldToOtherRequests();
    }
  }
  await flush();
}
