/**
 * Shift definitions: creation (with the overlap rule) and listing.
 *
 * Source: docs/metrics.md, "Shifts": a definition has a name, local `HH:MM`
 * start and end in the company's zone (`endTime <= startTime` ends the next
 * day), ISO weekdays of its start, `isConsidered`, and optionally the machines
 * it applies to (default: all machines of the company). "At most one [instance]
 * may match [the shift a machine is running now]; overlapping definitions for
 * the same machine are rejected when they are created."
 */

import { sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, ownedSql } from "../db/company-scope";
import { shiftDefinitionMachines, shiftDefinitions } from "../db/schema";
import { ApiError, notFound } from "../http/errors";
import { DAY_MS } from "../time/units";
import { type InstanceWindow, instancesBetween } from "./instances";
import { assertCompanyMachines } from "./machine-refs";
import { loadShiftPlan, type ShiftDefinitionRow, type ShiftPlan } from "./plan";

/**
 * Horizon of the overlap check: 14 days of instance starts (every weekday
 * twice, so that a shift crossing midnight into the next week is compared
 * with the first shifts of that week).
 */
const OVERLAP_HORIZON_MS = 14 * DAY_MS;

/** A definition to create, defaults applied. */
interface ShiftDefinitionInput {
  name: string;
  startTime: string;
  endTime: string;
  /** ISO weekdays, 1..7, without duplicates. */
  weekdays: number[];
  isConsidered: boolean;
  /** null = every machine of the company. */
  machineIds: number[] | null;
}

/** Shape of a definition in operator responses. */
export interface ShiftDefinitionOut {
  id: number;
  name: string;
  startTime: string;
  endTime: string;
  weekdays: number[];
  isConsidered: boolean;
  /** null = every machine of the company. */
  machineIds: number[] | null;
}

/** Turns a stored definition into its response shape. */
function toDefinitionOut(row: ShiftDefinitionRow): ShiftDefinitionOut {
  return {
    id: row.id,
    name: row.name,
    startTime: row.startTime,
    endTime: row.endTime,
    weekdays: row.weekdays,
    isConsidered: row.isConsidered,
    machineIds: row.allMachines ? null : row.machineIds,
  };
}

/** A definition as the overlap check sees it. */
interface OverlapCandidate {
  /** `["existing", id]` or `["new", index in the request]`. */
  ref: { kind: "existing"; id: number; name: string } | { kind: "new"; index: number };
  times: { startTime: string; endTime: string; weekdays: readonly number[] };
  /** null = every machine. */
  machineIds: readonly number[] | null;
}

function sharesMachine(a: readonly number[] | null, b: readonly number[] | null): boolean {
  if (a === null || b === null) return true;
  const set = new Set(a);
  return b.some((id) => set.has(id));
}

function windowsOverlap(a: readonly InstanceWindow[], b: readonly InstanceWindow[]): boolean {
  // Both lists are sorted by start; instances of one definition never overlap each other.
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as InstanceWindow;
    const y = b[j] as InstanceWindow;
    if (x.start < y.end && y.start < x.end) return true;
    if (x.end <= y.end) i += 1;
    else j += 1;
  }
  return false;
}

/**
 * The first pair of definitions that share a machine and whose instances
 * overlap within `OVERLAP_HORIZON_MS` from `horizonStart` (plus one day
 * before it, so that a shift crossing into the horizon is seen).
 *
 * Definitions that apply to all machines share a machine with every other
 * definition, even before the company has a machine: they will apply to every
 * machine added later.
 *
 * @returns the pair (new definitions are always `b`), or null.
 */
function findOverlap(
  candidates: readonly OverlapCandidate[],
  timezone: string,
  horizonStart: number,
): { a: OverlapCandidate; b: OverlapCandidate } | null {
  const windows = candidates.map((c) =>
    instancesBetween(c.times, timezone, horizonStart - DAY_MS, horizonStart + OVERLAP_HORIZON_MS),
  );
  for (let j = 0; j < candidates.length; j += 1) {
    const b = candidates[j] as OverlapCandidate;
    if (b.ref.kind !== "new") continue;
    for (let i = 0; i < j; i += 1) {
      const a = candidates[i] as OverlapCandidate;
      if (!sharesMachine(a.machineIds, b.machineIds)) continue;
      if (windowsOverlap(windows[i] ?? [], windows[j] ?? [])) return { a, b };
    }
  }
  return null;
}

/**
 * Creates shift definitions for a company, all or none.
 *
 * Every `machineIds` entry must be a machine of the company, as the shift plan
 * read with the definitions has them (422 naming the item and position otherwise). A definition whose instances would overlap an
 * instance of another definition (existing or in the same request) on a
 * machine both apply to is a 422 naming the other definition; the check
 * compares the instances of the next 14 days in the company's zone, which
 * covers every weekday.
 *
 * The definitions and their machine links are written in one batch
 * (`insertDefinitions`).
 *
 * @param scope the company (404 when it does not exist).
 * @param items the definitions, defaults applied.
 * @param now the current instant, ms (start of the overlap horizon).
 * @returns the created definitions, in request order.
 * @throws ApiError 404 unknown company; 422 unknown machine or overlap.
 */
export async function createShiftDefinitions(
  scope: CompanyScope,
  items: readonly ShiftDefinitionInput[],
  now: number = Date.now(),
): Promise<ShiftDefinitionOut[]> {
  const plan = await loadShiftPlan(scope);
  if (!plan) throw notFound("Company not found");
  const refs = items.flatMap((item, index) =>
    (item.machineIds ?? []).map((id, position) => ({
      loc: ["body", index, "machineIds", position],
      id,
    })),
  );
  assertCompanyMachines(refs, new Set(plan.machineIds));
  rejectOverlap(plan, items, now);
  const ids = await insertDefinitions(scope, items);
  return items.map((item, index) => ({
    id: ids[index] as number,
    name: item.name,
    startTime: item.startTime,
    endTime: item.endTime,
    weekdays: item.weekdays,
    isConsidered: item.isConsidered,
    machineIds:
      item.machineIds === null ? null : [...new Set(item.machineIds)].sort((a, b) => a - b),
  }));
}

/**
 * Refuses new definitions whose instances overlap those of another definition (existing or
 * earlier in the request) on a machine both apply to, over the 14 days from `now`.
 *
 * @param plan the company's plan: its zone and its definitions.
 * @param items the new definitions, in request order.
 * @param now the start of the overlap horizon, ms.
 * @throws ApiError 422 `value_error.overlap` at `["body", index]` of the first new definition
 *   that overlaps, naming the other one.
 */
function rejectOverlap(plan: ShiftPlan, items: readonly ShiftDefinitionInput[], now: number): void {
  const candidates: OverlapCandidate[] = [
    ...plan.definitions.map(
      (d): OverlapCandidate => ({
        ref: { kind: "existing", id: d.id, name: d.name },
        times: d,
        machineIds: d.allMachines ? null : d.machineIds,
      }),
    ),
    ...items.map(
      (item, index): OverlapCandidate => ({
        ref: { kind: "new", index },
        times: item,
        machineIds: item.machineIds,
      }),
    ),
  ];
  const overlap = findOverlap(candidates, plan.timezone, now);
  if (overlap?.b.ref.kind !== "new") return;
  const other =
    overlap.a.ref.kind === "existing"
      ? `shift definition ${overlap.a.ref.id} ("${overlap.a.ref.name}")`
      : `item ${overlap.a.ref.index} of this request`;
  throw new ApiError(422, [
    {
      loc: ["body", overlap.b.ref.index],
      msg: `Overlaps ${other} on a machine both apply to: a machine runs at most one shift at a time`,
      type: "value_error.overlap",
    },
  ]);
}

/**
 * Writes the definitions and their machine links in one D1 batch: each link row takes the
 * id of the definition inserted just before it (D1 runs a batch as one transaction,
 * serially).
 *
 * @param scope the company.
 * @param items the definitions, checked (machines known, no overlap).
 * @returns the new definitions' ids, in request order (empty for no items).
 * @throws Error when an insert returns no id (D1 failed to say); D1's own errors.
 */
async function insertDefinitions(
  scope: CompanyScope,
  items: readonly ShiftDefinitionInput[],
): Promise<number[]> {
  const { db, companyId } = scope;
  const statements: BatchItem<"sqlite">[] = [];
  const insertPositions: number[] = [];
  for (const item of items) {
    insertPositions.push(statements.length);
    statements.push(
      db
        .insert(shiftDefinitions)
        .values({
          companyId,
          name: item.name,
          startTime: item.startTime,
          endTime: item.endTime,
          weekdays: item.weekdays,
          isConsidered: item.isConsidered,
          allMachines: item.machineIds === null,
        })
        .returning({ id: shiftDefinitions.id }),
    );
    if (item.machineIds !== null) {
      // The definition inserted just before (the batch runs serially, in one transaction).
      statements.push(
        db.insert(shiftDefinitionMachines).select(
          sql`SELECT (SELECT max(id) FROM shift_definitions WHERE ${ownedSql(scope)}),
                value, CAST(${companyId} AS INTEGER)
              FROM json_each(${JSON.stringify([...new Set(item.machineIds)])})`,
        ),
      );
    }
  }
  const [first, ...rest] = statements;
  if (!first) return [];
  const results: unknown[] = await db.batch([first, ...rest]);
  return insertPositions.map((position) => {
    const rows = results[position] as { id: number }[] | undefined;
    const id = rows?.[0]?.id;
    if (id === undefined) throw new Error("Shift definition insert returned no id");
    return id;
  });
}

/**
 * The company's shift definitions (not deleted), ascending id.
 *
 * @throws ApiError 404 when the company does not exist.
 */
export async function listShiftDefinitions(scope: CompanyScope): Promise<ShiftDefinitionOut[]> {
  const plan = await loadShiftPlan(scope);
  if (!plan) throw notFound("Company not found");
  return plan.definitions.map(toDefinitionOut);
}
