/**
 * The running-shift rule of production logs, every part of it (docs/realtime.md, "Live logs
 * belong to the machine"; docs/resources.md): no log may reach into an instance of its
 * machine that has not ended (422 `running_shift`, or `future_shift` for one not started),
 * and a live log (the running shift's, kept by the machine's realtime object) changes only
 * where that object allows. create.ts, patch.ts and delete.ts call the checks below; the
 * rule's SQL half, written into the statements themselves, is `noUnendedStored`
 * (src/shifts/unended.ts) and the `live = 0` condition of delete.ts's soft delete.
 */

import type { CompanyScope } from "../../db/company-scope";
import { ApiError, type ValidationIssue } from "../../http/errors";
import { ErrorSchema, jsonResponse } from "../../http/openapi";
import { MAX_INSTANCE_MS } from "../../shifts/plan";
import { instancesContaining, loadShiftPlan, type ShiftInstanceRow } from "../../shifts/queries";
import { firstUnendedInstance, type MachineSpan, type UnendedInstance } from "../../shifts/unended";
import type { OperatorName } from "./queries";
import type { ProductionLogPatch } from "./schemas";

// Logs that reach into a shift that has not ended.

/** A log's interval on a machine (instants in ms). */
export type LogInterval = MachineSpan;

/** The placements of some logs and the checks of some intervals against the rule. */
interface Placement {
  /**
   * For each log to place: the machine's instance containing its start, or null (stored as
   * `shift_instance_id`; docs/metrics.md: a log's count belongs to that instance).
   */
  shifts: (ShiftInstanceRow | null)[];
  /**
   * For each interval checked: the earliest instance of its machine that has not ended and
   * that it overlaps (the running one when it reaches it), else null. Overlap rather than
   * "contains the start": a log that starts before the instance but runs into it still
   * covers minutes of it (docs/metrics.md counts production minutes by overlap).
   */
  conflicts: (UnendedInstance | null)[];
}

/**
 * Finds, in one pass over the company's shift plan, the instance containing each log's start
 * and, for each interval to check, the instance that has not ended (`I.end > now`) it would
 * reach into (`start < I.end && end > I.start`).
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
  const plan = await loadShiftPlan(scope);
  if (!plan || plan.definitions.length === 0) {
    return { shifts: place.map(() => null), conflicts: check.map(() => null) };
  }
  const shifts = await instancesContaining(
    scope.db,
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
function unendedShiftIssue(
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

/**
 * Refuses the items of a create that reach into a shift that has not ended.
 *
 * @param found per item, the instance it reaches into (`placeLogs`'s conflicts, or the
 *   stored instances that stopped the write: `unendedStored`), null when none.
 * @param machines per item, its machine.
 * @param now the instant of the check, ms.
 * @throws ApiError 422 with one issue per refused item at `["body", i]`.
 */
export function refuseUnendedItems(
  found: readonly (UnendedInstance | null)[],
  machines: readonly { id: number; name: string }[],
  now: number,
): void {
  const issues = found.flatMap((instance, i) => {
    const machine = machines[i];
    return instance && machine ? [unendedShiftIssue(["body", i], machine, instance, now)] : [];
  });
  if (issues.length > 0) throw new ApiError(422, issues);
}

/**
 * Refuses a PATCH that changes what a log (not live) counts when the log as changed would
 * reach into a shift that has not ended (`into`), or when the log already lies in the
 * running shift (`from`, running at `now`): written before that shift was defined, it is
 * counted by the machine's live figures and keeps what it counts until the shift ends (it
 * can be deleted).
 *
 * @param into the instance the changed log reaches into, on machine `target`.
 * @param from the instance the log as stored reaches into, on machine `source`.
 * @throws ApiError 422 `running_shift` / `future_shift` at `["body"]`.
 */
export function refuseUnendedPatch(
  into: UnendedInstance | null | undefined,
  target: { id: number; name: string },
  from: UnendedInstance | null | undefined,
  source: { id: number; name: string },
  now: number,
): void {
  if (into) throw new ApiError(422, [unendedShiftIssue(["body"], target, into, now)]);
  if (from && from.start <= now) {
    throw new ApiError(422, [unendedShiftIssue(["body"], source, from, now)]);
  }
}

// Live logs: the realtime object's.

/**
 * The columns of a live log that its realtime object writes at every flush
 * (`src/realtime/projection.ts` builds its upsert from this list): whatever a public
 * endpoint wrote there would be overwritten. The others (`is_reviewed`, `work_order_id`,
 * `deleted_at`) are its reviewers': the object never writes them.
 */
export const REALTIME_LOG_COLUMNS = [
  "sku_id",
  "shift_instance_id",
  "operator_id",
  "simple_work_order_id",
  "count",
  "sensor_count",
  "nominal_speed",
  "counting_factor",
  "start",
  "end",
  "live",
] as const;

/** Who applies each PATCH field of a live log. */
type LivePatchOwner = "counting" | "realtime" | "review";

/**
 * Every PATCH field, classified (a new field of the PATCH body does not compile until it is
 * classified here). What the log counts (`counting`) is the realtime object's, rewritten at
 * every flush, so a public change would be undone: refused. The operator is applied by the
 * object to its timeline, so later flushes keep it. The review fields go to D1.
 */
const LIVE_LOG_PATCH_FIELDS = {
  type: "counting",
  count: "counting",
  nominalSpeed: "counting",
  start: "counting",
  end: "counting",
  machine: "counting",
  sku: "counting",
  operator: "realtime",
  workOrder: "review",
  isReviewed: "review",
} as const satisfies Record<keyof ProductionLogPatch, LivePatchOwner>;

type PatchField = keyof typeof LIVE_LOG_PATCH_FIELDS;

/**
 * The fields of a PATCH that change what the log counts: those given (not absent; `null`
 * is "unchanged" for them) of the `counting` class. A live log refuses them; for any
 * other log they are what the running-shift rule applies to.
 *
 * @param patch the validated body.
 * @returns the fields, in the order of `LIVE_LOG_PATCH_FIELDS`; empty when none is given.
 */
export function countingFieldsOf(patch: ProductionLogPatch): PatchField[] {
  return (Object.keys(LIVE_LOG_PATCH_FIELDS) as PatchField[]).filter(
    (field) => LIVE_LOG_PATCH_FIELDS[field] === "counting" && patch[field] != null,
  );
}

/** A live log as the refusal names it. */
interface LiveLogRef {
  id: string;
  machineId: number;
  machineName: string;
  shiftInstanceId: number | null;
}

/**
 * The 422 issue of a change the realtime object owns, in the words of the spec's
 * running-shift rule ("use the realtime endpoints instead").
 *
 * @param loc where to report it: `["body", field]` for a PATCH, the path for a DELETE.
 * @param log the live log.
 * @param action what was refused ("deleted", "changed").
 */
function liveLogIssue(
  loc: (string | number)[],
  log: LiveLogRef,
  action: "deleted" | "changed",
): ValidationIssue {
  const field = loc[0] === "body" && loc.length > 1 ? `its ${String(loc[1])} ` : "";
  return {
    loc,
    msg:
      `Production log ${log.id} is the live log of machine "${log.machineName}" (id ` +
      `${log.machineId}) in the shift it is running now` +
      `${log.shiftInstanceId === null ? "" : ` (instance ${log.shiftInstanceId})`}: ` +
      `${field}cannot be ${action} here, no production logs for the shift a machine is ` +
      "running now. Use the realtime endpoints instead: POST /v1/realtime/{machine_id}/sku " +
      `(here POST /v1/realtime/${log.machineId}/sku). Once the shift has ended the log can ` +
      `be ${action}.`,
    type: "running_shift",
  };
}

/** What a PATCH of a live log may do: the D1 changes, and whether the object takes the operator. */
interface LivePatch {
  changes: { isReviewed?: boolean; operator?: OperatorName | null; workOrder?: string | null };
  /** The operator changes: the machine's object must make it the log's (`setLogOperator`). */
  operatorToObject: boolean;
}

/**
 * A PATCH of a live log, as its realtime object allows: what it counts is refused, the
 * review fields are D1's, and the operator is written to D1 and handed to the object.
 *
 * @param log the live log.
 * @param patch the validated body.
 * @throws ApiError 422 `running_shift`, one issue per refused field (nothing is applied).
 */
export function livePatchOf(log: LiveLogRef, patch: ProductionLogPatch): LivePatch {
  const refused = countingFieldsOf(patch);
  if (refused.length > 0) {
    throw new ApiError(
      422,
      refused.map((field) => liveLogIssue(["body", field], log, "changed")),
    );
  }
  const changes: LivePatch["changes"] = {};
  if (patch.isReviewed != null) changes.isReviewed = patch.isReviewed;
  if (patch.operator !== undefined) changes.operator = patch.operator;
  if (patch.workOrder !== undefined) changes.workOrder = patch.workOrder;
  return { changes, operatorToObject: patch.operator !== undefined };
}

/**
 * Refuses the DELETE of a live log: the next flush would write it again; what the machine
 * made is corrected through the realtime endpoints.
 *
 * @throws ApiError 422 `running_shift` at `["path", "production_log_id"]`, always.
 */
export function refuseLiveLogDelete(log: LiveLogRef): never {
  throw new ApiError(422, [liveLogIssue(["path", "production_log_id"], log, "deleted")]);
}

/**
 * Whether a deleted log that was not live may still lie in its machine's running shift, where
 * the machine's stream counts it (`forgetLog` must tell it): only a log that ends after the
 * earliest start a running instance can have. Older ones do not wake the machine's object.
 *
 * @param end the log's end, ms.
 * @param now the current instant, ms.
 */
export function mayLieInRunningShift(end: number, now: number): boolean {
  return end > now - MAX_INSTANCE_MS;
}

/**
 * What a machine's realtime object does for the public production-log endpoints
 * (`src/realtime/realtime-machine.ts` implements it; `RealtimeMachineRpc` extends it).
 */
export interface LiveLogOwnerRpc extends Rpc.DurableObjectBranded {
  /**
   * Makes `operatorId` (null: nobody) the operator of the live log `logId` from now on
   * (the object's timeline keeps it, so every flush writes it).
   *
   * @returns false when `logId` is not a live log of the object's running shift (the
   *   shift ended meanwhile: the log is an ordinary one, whose operator D1 keeps).
   */
  setLogOperator(logId: string, operatorId: number | null): Promise<boolean>;
  /** A log of the running shift that is not the object's was deleted: its stream drops it. */
  forgetLog(logId: string): Promise<void>;
}

/**
 * How the production-log endpoints reach a machine's realtime object: handed to them by the
 * realtime layer, which owns the object and its name (`liveLogOwnersOf`,
 * src/realtime/machine-stub.ts, through src/app.ts), so nothing here names it.
 */
export type LiveLogOwnerOf = (
  companyId: number,
  machineId: number,
) => DurableObjectStub<LiveLogOwnerRpc>;

// The rule as the OpenAPI document states it (routes.ts).

/** The running-shift rule of a create or a PATCH. */
export const RUNNING_SHIFT_RULE =
  "**Production logs only for shifts that have ended:** a log whose interval `[start, end)` " +
  "overlaps a shift instance of its machine that has not ended at the time of the call " +
  "(`instance.end > now`) is a 422: `running_shift` for the instance the machine is running " +
  "now (`instance.start <= now < instance.end`; the spec's rule, whose `msg` points to " +
  "`POST /v1/realtime/{machine_id}/sku`, the endpoint for the running shift), `future_shift` " +
  "for one that has not started (when it runs, the realtime logs record it). The rule is " +
  "checked again in the statement that writes the logs, so a shift that starts or is defined " +
  "meanwhile cannot slip in between; should the shift plan change between the two checks the " +
  "call writes nothing and answers 409 (retry it).";

/** What of a PATCH the running-shift rule applies to (`refuseUnendedPatch`). */
export const RUNNING_SHIFT_PATCH_RULE =
  "The rule applies to a PATCH that changes what the log counts (`type`, `count`, " +
  "`nominalSpeed`, `start`, `end`, `machine`, `sku`): the log as changed must lie in shifts " +
  "that have ended, and a log already in the running shift (written before the shift was " +
  "defined) keeps what it counts until the shift ends, as the stream counts it (it can be " +
  "deleted). Reviewing (`isReviewed`) and setting the operator or work order are always " +
  "allowed.";

/** What a PATCH or DELETE may do to a live log (`livePatchOf`, `refuseLiveLogDelete`). */
export const LIVE_LOG_RULE =
  "**A live log (`live: true`) is its machine's:** the running shift's log, which the " +
  "machine's realtime object rewrites from its timeline. Deleting it, or changing what it " +
  "counts (`type`, `count`, `nominalSpeed`, `start`, `end`, `machine`, `sku`), is a 422 " +
  "(`type` `running_shift`, one issue per field) pointing to `POST /v1/realtime/{machine_id}/sku`; " +
  "a PATCH of `operator` is applied by the realtime object to its timeline, so it sticks, " +
  "and `isReviewed` and `workOrder` are the reviewers' own. Once the shift has ended the log " +
  "is an ordinary one.";

/** The 409 of a write the rule's SQL half stopped although the plan's check let it through. */
export const SHIFT_CHANGED_RESPONSE = {
  409: jsonResponse(
    ErrorSchema,
    "A shift instance of the log's machine was stored between the check of the rule above and " +
      "the write, and the shift plan read for the check did not know it: nothing was written.",
    { detail: "A shift of these machines changed meanwhile; retry the call" },
  ),
} as const;
