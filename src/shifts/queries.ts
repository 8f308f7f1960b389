/**
 * The stored shift instances that contain given instants (the shift of a log, of a stop, the
 * shift a machine runs now), written on demand: an instance follows from its definition, the
 * company's zone and the calendar, so it is written when first needed with an idempotent
 * `INSERT OR IGNORE` on (definition, machine, start), and its row id is the instance's stable
 * id (`shift.id`, `indicatorId`); `./materialize.ts` writes and reads the rows.
 * docs/metrics.md ("Shifts"), docs/bounded-work.md.
 */

import type { Database } from "../db/client";
import type { CompanyScope } from "../db/company-scope";
import { type ClosedSpan, closedSpansOf, isClosedAt } from "./closures";
import type { InstanceWindow } from "./instances";
import { instanceContains } from "./instances";
import { instanceKey, storedInstances } from "./materialize";
import {
  loadShiftPlan,
  MAX_INSTANCE_MS,
  machinesOf,
  type PlannedInstance,
  type ShiftDefinitionRow,
  type ShiftPlan,
  windowsBetween,
} from "./plan";

// Callers look up instances and load the plan they need for it from here.
export { loadShiftPlan, type ShiftPlan } from "./plan";

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

/** A point in time on one machine. */
interface MachineInstant {
  machineId: number;
  /** ms since the epoch. */
  at: number;
}

/**
 * For each `(machine, instant)`, the shift instance of that machine that
 * contains the instant (`start <= at < end`), materializing only those
 * instances. Overlapping definitions are refused at creation, so at most one
 * instance matches; should old data hold two, the later start wins. An instance that starts
 * in a closure of the plant calendar (./closures.ts) is not scheduled: null.
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
  const closedOf = new Map<number, ClosedSpan[]>();
  const closed = (machineId: number, start: number) => {
    let spans = closedOf.get(machineId);
    if (!spans) {
      spans = closedSpansOf(plan.closures, machineId);
      closedOf.set(machineId, spans);
    }
    return isClosedAt(spans, start);
  };
  const matches: (PlannedInstance | null)[] = points.map((p) => {
    let best: PlannedInstance | null = null;
    for (const def of definitionsByMachine.get(p.machineId) ?? []) {
      for (const w of windowsAround(def, p.at)) {
        // A closed instance (the plant calendar) is no shift: nothing is stored for it.
        if (closed(p.machineId, w.start)) continue;
        if (instanceContains(w, p.at) && (!best || w.start > best.start)) {
          best = { ...w, definitionId: def.id, machineId: p.machineId };
        }
      }
    }
    return best;
  });
  const unique = new Map<string, PlannedInstance>();
  for (const m of matches) if (m) unique.set(instanceKey(m), m);
  if (unique.size === 0) return points.map(() => null);
  const rows = await storedInstances(db, plan.companyId, [...unique.values()]);
  const definitions = new Map(plan.definitions.map((d) => [d.id, d]));
  const stored = new Map<string, ShiftInstanceRow>();
  for (const [key, r] of rows) {
    const def = definitions.get(r.definitionId);
    if (!def) continue;
    stored.set(key, {
      id: r.id,
      definitionId: r.definitionId,
      machineId: r.machineId,
      start: r.start,
      end: r.end,
      name: def.name,
      isConsidered: def.isConsidered,
    });
  }
  return matches.map((m) => (m ? (stored.get(instanceKey(m)) ?? null) : null));
}

/**
 * "The shift a machine is running now" (docs/metrics.md): the machine's instance
 * with `start <= now < end`, or null when it runs no shift.
 *
 * @param scope the machine's company.
 * @param machineId the machine (of that company).
 * @param now the instant, ms (default: the current time).
 */
export async function runningInstance(
  scope: CompanyScope,
  machineId: number,
  now: number = Date.now(),
): Promise<ShiftInstanceRow | null> {
  const { db } = scope;
  const plan = await loadShiftPlan(scope);
  if (!plan) return null;
  const [found] = await instancesContaining(db, plan, [{ machineId, at: now }]);
  return found ?? null;
}
