/**
 * Who owns a live production log: the one place that says what the public production-log
 * endpoints may do to a log of a machine's running shift that its realtime object keeps
 * (`live = 1`), and what the realtime object itself writes (docs/realtime.md, "Live logs
 * belong to the machine").
 *
 * The rule: the realtime object is the only writer of what a live log counts (its SKU,
 * instants, count, nominal speed, work order of the realtime write, operator); it
 * rewrites those columns at every flush, so a public change to them would be undone or
 * resurrected by the next one. So the public endpoints:
 * - refuse a DELETE of a live log and a PATCH of what it counts (`type`, `count`,
 *   `nominalSpeed`, `start`, `end`, `machine`, `sku`) with the spec's running-shift rule
 *   (422 `running_shift`, "use the realtime endpoints"); once the shift has ended the log
 *   is an ordinary log that both may change;
 * - hand a PATCH of `operator` to the object, which applies it to its own timeline (the
 *   operator of that segment from then on), so that every later flush writes it too;
 * - write `isReviewed` and `workOrder` straight to D1: they are columns the object never
 *   writes (`REVIEW_LOG_COLUMNS`).
 * A log of the running shift that is not live (written before the shift was defined) is
 * the public API's, but the machine's stream holds it for its live figures: deleting it
 * asks the object to have the stream drop it (`forgetLog`).
 */

import type { ValidationIssue } from "../../http/errors";
import type { ProductionLogPatch } from "./schemas";

/**
 * The columns of a live log that its realtime object writes at every flush
 * (`src/realtime/projection.ts` builds its upsert from this list): whatever a public
 * endpoint wrote there would be overwritten.
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

/** The columns of a live log that belong to its reviewers: the realtime object never writes them. */
export const REVIEW_LOG_COLUMNS = ["is_reviewed", "work_order_id", "deleted_at"] as const;

/** Who applies each PATCH field of a live log. */
type LivePatchOwner = "counting" | "realtime" | "review";

/**
 * Every PATCH field, classified (a new field of the PATCH body does not compile until it
 * is classified here): what the log counts (`counting`) is the realtime object's and is
 * refused; the operator is applied by the object; the review fields go to D1.
 */
export const LIVE_LOG_PATCH_FIELDS = {
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
export interface LiveLogRef {
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
export function liveLogIssue(
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
