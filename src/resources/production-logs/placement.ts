/**
 * Where a production log falls among shift instances: the instance that
 * contains its start (stored as `shift_instance_id`; docs/metrics.md,
 * "Production of one shift instance": a log's count belongs to that instance), and
 * the rule "no production logs for the shift a machine is running now" (spec,
 * Production logs): the running shift is written through the realtime
 * endpoints, so a log may not touch it.
 *
 * The rule, precisely: a log `[start, end)` on machine M is refused when M has
 * a running instance R (`R.start <= now < R.end`, docs/metrics.md) and the two
 * intervals overlap (`start < R.end && end > R.start`). Overlap rather than
 * "contains the start" because a log that starts before R but runs into it
 * still covers minutes of R (docs/metrics.md counts production minutes by overlap),
 * and a log later in R (after now) would be inside the shift all the same.
 */

import type { CompanyScope } from "../../db/company-scope";
import type { ValidationIssue } from "../../http/errors";
import { instancesContaining, loadShiftPlan, type ShiftInstanceRow } from "../../shifts/queries";

/** A log's interval on a machine (instants in ms). */
export interface LogInterval {
  machineId: number;
  start: number;
  end: number;
}

/** The placements of some logs and the running-shift checks of some intervals. */
export interface Placement {
  /** For each log to place: the machine's instance containing its start, or null. */
  shifts: (ShiftInstanceRow | null)[];
  /** For each interval checked: the machine's running instance when the interval overlaps it, else null. */
  conflicts: (ShiftInstanceRow | null)[];
}

/**
 * Finds, in one pass over the company's shift plan, the instance containing
 * each log's start and, for each interval to check, the running instance it
 * would overlap.
 *
 * @param scope the company of every machine given.
 * @param place the logs whose instance is wanted (`start` is looked up).
 * @param check the intervals to test against the running-shift rule.
 * @param now the current instant, ms.
 */
export async function placeLogs(
  scope: CompanyScope,
  place: readonly LogInterval[],
  check: readonly LogInterval[],
  now: number,
): Promise<Placement> {
  const { db } = scope;
  const plan = await loadShiftPlan(scope);
  if (!plan || plan.definitions.length === 0) {
    return { shifts: place.map(() => null), conflicts: check.map(() => null) };
  }
  const checkedMachines = [...new Set(check.map((c) => c.machineId))];
  const found = await instancesContaining(db, plan, [
    ...place.map((p) => ({ machineId: p.machineId, at: p.start })),
    ...checkedMachines.map((machineId) => ({ machineId, at: now })),
  ]);
  const shifts = found.slice(0, place.length);
  const running = new Map<number, ShiftInstanceRow | null>(
    checkedMachines.map((machineId, i) => [machineId, found[place.length + i] ?? null]),
  );
  const conflicts = check.map((c) => {
    const r = running.get(c.machineId) ?? null;
    return r && c.start < r.end && c.end > r.start ? r : null;
  });
  return { shifts, conflicts };
}

/**
 * The 422 issue of a log that would touch the running shift; the message
 * points to the realtime endpoint.
 *
 * @param loc where to report it, for example `["body", 3]`.
 * @param machine the log's machine.
 * @param running the machine's running instance.
 */
export function runningShiftIssue(
  loc: (string | number)[],
  machine: { id: number; name: string },
  running: ShiftInstanceRow,
): ValidationIssue {
  return {
    loc,
    msg:
      `Machine "${machine.name}" (id ${machine.id}) is running shift "${running.name}" ` +
      `(instance ${running.id}, ${new Date(running.start).toISOString()} to ` +
      `${new Date(running.end).toISOString()}) and this log overlaps it: no production logs for ` +
      "the shift a machine is running now. Use the realtime endpoints instead: " +
      `POST /v1/realtime/{machine_id}/sku (here POST /v1/realtime/${machine.id}/sku).`,
    type: "running_shift",
  };
}
