/**
 * Where a production log falls among shift instances: the instance that
 * contains its start (stored as `shift_instance_id`; docs/metrics.md,
 * "Production of one shift instance": a log's count belongs to that instance), and
 * the rule "production logs only for shifts that have ended" (docs/resources.md;
 * `src/shifts/unended.ts`), which extends the spec's "no production logs for the
 * shift a machine is running now" to the shifts that have not started yet.
 *
 * The rule, precisely: a log `[start, end)` on machine M is refused when an
 * instance I of M that has not ended (`I.end > now`: running, or in the future)
 * overlaps it (`start < I.end && end > I.start`). Overlap rather than "contains
 * the start" because a log that starts before I but runs into it still covers
 * minutes of I (docs/metrics.md counts production minutes by overlap).
 */

import type { CompanyScope } from "../../db/company-scope";
import type { ValidationIssue } from "../../http/errors";
import { instancesContaining, loadShiftPlan, type ShiftInstanceRow } from "../../shifts/queries";
import { firstUnendedInstance, type MachineSpan, type UnendedInstance } from "../../shifts/unended";

/** A log's interval on a machine (instants in ms). */
export type LogInterval = MachineSpan;

/** The placements of some logs and the checks of some intervals against the rule. */
export interface Placement {
  /** For each log to place: the machine's instance containing its start, or null. */
  shifts: (ShiftInstanceRow | null)[];
  /**
   * For each interval checked: the earliest instance of its machine that has not ended and
   * that it overlaps (the running one when it reaches it), else null.
   */
  conflicts: (UnendedInstance | null)[];
}

/**
 * Finds, in one pass over the company's shift plan, the instance containing
 * each log's start and, for each interval to check, the instance that has not
 * ended it would reach into.
 *
 * @param scope the company of every machine given.
 * @param place the logs whose instance is wanted (`start` is looked up).
 * @param check the intervals to test against the rule.
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
  const shifts = await instancesContaining(
    db,
    plan,
    place.map((p) => ({ machineId: p.machineId, at: p.start })),
  );
  return { shifts, conflicts: check.map((c) => firstUnendedInstance(plan, c, now)) };
}

/**
 * The 422 issue of a log that would reach into a shift that has not ended: `running_shift`
 * (the message points to the realtime endpoint) or `future_shift`.
 *
 * @param loc where to report it, for example `["body", 3]`.
 * @param machine the log's machine.
 * @param instance the instance it reaches into (`firstUnendedInstance`).
 * @param now the instant of the check, ms.
 */
export function unendedShiftIssue(
  loc: (string | number)[],
  machine: { id: number; name: string },
  instance: UnendedInstance,
  now: number,
): ValidationIssue {
  const shift =
    `shift "${instance.name}" (${new Date(instance.start).toISOString()} to ` +
    `${new Date(instance.end).toISOString()})`;
  const rule = "production logs are only for shifts that have ended.";
  if (instance.start <= now) {
    return {
      loc,
      msg:
        `Machine "${machine.name}" (id ${machine.id}) is running ${shift} and this log ` +
        `overlaps it: no production logs for the shift a machine is running now; ${rule} ` +
        "Use the realtime endpoints instead: POST /v1/realtime/{machine_id}/sku " +
        `(here POST /v1/realtime/${machine.id}/sku).`,
      type: "running_shift",
    };
  }
  return {
    loc,
    msg:
      `This log reaches into ${shift} of machine "${machine.name}" (id ${machine.id}), which ` +
      `has not started yet: ${rule} When it runs, the machine's realtime logs record it.`,
    type: "future_shift",
  };
}
