import type { NamedScope } from "../../db/company-scope";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import { noUnendedStored, unendedStored } from "../../shifts/unended";
import {
  resolvedOrIssue,
  resolveMachineRefs,
  resolveOne,
  resolveSkuRefs,
} from "../nominal-speeds/references";
import { type LogInterval, placeLogs, unendedShiftIssue } from "./placement";
import { sensorCountOf, startBeforeEnd } from "./rules";
import { countingFieldsOf, type LiveLogOwnerOf, liveLogIssue } from "./running-shift";
import type { ProductionLogPatch } from "./schemas";
import { findLogCore, type LogChanges, type LogCore, updateLog } from "./update";

/**
 * A PATCH of a live log, as its owner allows (./running-shift.ts): what it counts is
 * refused, the review fields are written to D1, and the operator is written to D1 and
 * handed to the machine's realtime object, whose later flushes keep it.
 *
 * @throws ApiError 422 `running_shift` naming each refused field; 404 when the log is gone.
 */
async function patchLiveLog(
  owners: LiveLogOwnerOf,
  scope: NamedScope,
  current: LogCore,
  patch: ProductionLogPatch,
): Promise<void> {
  const refused = countingFieldsOf(patch);
  if (refused.length > 0) {
    throw new ApiError(
      422,
      refused.map((field) => liveLogIssue(["body", field], current, "changed")),
    );
  }
  const changes: LogChanges = {};
  if (patch.isReviewed != null) changes.isReviewed = patch.isReviewed;
  if (patch.operator !== undefined) changes.operator = patch.operator;
  if (patch.workOrder !== undefined) changes.workOrder = patch.workOrder;
  // D1 first: the operator is found or created there, and the object is told its id.
  const updated = await updateLog(scope, current.id, changes);
  if (!updated) throw notFound("Production log not found");
  if (patch.operator !== undefined) {
    await owners(scope.companyId, current.machineId).setLogOperator(current.id, updated.operatorId);
  }
}

/**
 * Applies a patch to the company's log `id` (lowercase uuid), not deleted. A live log
 * (the running shift's, kept by its realtime object) takes only what its owner allows
 * (./running-shift.ts).
 *
 * @param owners reaches the machine's realtime object, for a live log's operator.
 * @param scope the caller; the log must be of its company.
 * @param id the log's id, lowercase.
 * @param patch the validated body.
 * @throws ApiError 404 when the log does not exist for the company (or is deleted);
 *   422 with the problems of the patch.
 */
export async function patchLog(
  owners: LiveLogOwnerOf,
  scope: NamedScope,
  id: string,
  patch: ProductionLogPatch,
): Promise<void> {
  const current = await findLogCore(scope, id);
  if (!current) throw notFound("Production log not found");
  if (current.live) return patchLiveLog(owners, scope, current, patch);

  const issues: ValidationIssue[] = [];
  const [machineResolution, skuResolution] = await Promise.all([
    patch.machine ? resolveOne(resolveMachineRefs, scope, patch.machine) : null,
    patch.sku ? resolveOne(resolveSkuRefs, scope, patch.sku) : null,
  ]);
  const machine =
    machineResolution && resolvedOrIssue(machineResolution, ["body", "machine"], issues);
  const sku = skuResolution && resolvedOrIssue(skuResolution, ["body", "sku"], issues);
  const start = patch.start ?? current.start;
  const end = patch.end ?? current.end;
  if (start >= end) issues.push(startBeforeEnd(["body", patch.end == null ? "start" : "end"]));
  const sensorCount =
    patch.count == null ? undefined : sensorCountOf(patch.count, current.countingFactor);
  if (sensorCount === null) {
    issues.push({
      loc: ["body", "count"],
      msg: "count / countingFactor is too large for sensorCount",
      type: "value_error",
    });
  }
  if (issues.length > 0) throw new ApiError(422, issues);

  const target = machine ?? { id: current.machineId, name: current.machineName };
  const changesCounting = countingFieldsOf(patch).length > 0;
  const replace = target.id !== current.machineId || start !== current.start;
  const changes: LogChanges = {};
  const now = Date.now();
  const after: LogInterval = { machineId: target.id, start, end };
  if (changesCounting || replace) {
    const before: LogInterval = {
      machineId: current.machineId,
      start: current.start,
      end: current.end,
    };
    const { shifts, conflicts } = await placeLogs(
      scope,
      replace ? [after] : [],
      changesCounting ? [after, before] : [],
      now,
    );
    const [into, from] = conflicts;
    // The result must lie in shifts that have ended; and a log already in the running
    // shift (written before it was defined) is counted by its live figures: it keeps what
    // it counts until the shift ends (it can be deleted).
    if (into) throw new ApiError(422, [unendedShiftIssue(["body"], target, into, now)]);
    if (from && from.start <= now) {
      throw new ApiError(422, [
        unendedShiftIssue(
          ["body"],
          { id: current.machineId, name: current.machineName },
          from,
          now,
        ),
      ]);
    }
    if (replace) changes.shiftInstanceId = shifts[0]?.id ?? null;
  }
  if (patch.type != null) changes.type = patch.type;
  if (patch.count != null && sensorCount != null) {
    changes.count = patch.count;
    changes.sensorCount = sensorCount;
  }
  if (patch.nominalSpeed != null) changes.nominalSpeed = patch.nominalSpeed;
  if (patch.start != null) changes.start = patch.start;
  if (patch.end != null) changes.end = patch.end;
  if (machine) changes.machineId = machine.id;
  if (sku) changes.skuId = sku.id;
  if (patch.isReviewed != null) changes.isReviewed = patch.isReviewed;
  if (patch.operator !== undefined) changes.operator = patch.operator;
  if (patch.workOrder !== undefined) changes.workOrder = patch.workOrder;
  // The rule again, in the update itself (see insertLogs): one step with the write.
  const guard = changesCounting ? noUnendedStored(scope, [after], now) : undefined;
  if (!(await updateLog(scope, id, changes, guard))) {
    const [stored] = guard ? await unendedStored(scope.db, scope, [after], now) : [null];
    if (stored) throw new ApiError(422, [unendedShiftIssue(["body"], target, stored, now)]);
    if (guard && (await findLogCore(scope, id))) {
      throw new ApiError(409, "A shift of this machine changed meanwhile; retry the call");
    }
    throw notFound("Production log not found");
  }
}
