import type { NamedScope } from "../../db/company-scope";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import {
  resolvedOrIssue,
  resolveMachines,
  resolveOne,
  resolveSkus,
} from "../nominal-speeds/references";
import { sensorCountOf, startBeforeEnd } from "./log-fields";
import { type LogInterval, placeLogs, runningShiftIssue } from "./placement";
import type { ProductionLogPatch } from "./schemas";
import { findLogCore, type LogChanges, updateLog } from "./update";

/**
 * Applies a patch to the company's live log `id` (lowercase uuid).
 *
 * @param scope the caller; the log must be of its company.
 * @param id the log's id, lowercase.
 * @param patch the validated body.
 * @throws ApiError 404 when the log does not exist for the company (or is deleted);
 *   422 with the problems of the patch.
 */
export async function patchLog(
  scope: NamedScope,
  id: string,
  patch: ProductionLogPatch,
): Promise<void> {
  const current = await findLogCore(scope, id);
  if (!current) throw notFound("Production log not found");

  const issues: ValidationIssue[] = [];
  const [machineResolution, skuResolution] = await Promise.all([
    patch.machine ? resolveOne(resolveMachines, scope, patch.machine) : null,
    patch.sku ? resolveOne(resolveSkus, scope, patch.sku) : null,
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
  const changesCounting = [
    patch.type,
    patch.count,
    patch.nominalSpeed,
    patch.start,
    patch.end,
    patch.machine,
    patch.sku,
  ].some((v) => v != null);
  const replace = target.id !== current.machineId || start !== current.start;
  const changes: LogChanges = {};
  if (changesCounting || replace) {
    const after: LogInterval = { machineId: target.id, start, end };
    const before: LogInterval = {
      machineId: current.machineId,
      start: current.start,
      end: current.end,
    };
    const { shifts, conflicts } = await placeLogs(
      scope,
      replace ? [after] : [],
      changesCounting ? [after, before] : [],
      Date.now(),
    );
    const [intoRunning, fromRunning] = conflicts;
    if (intoRunning) {
      throw new ApiError(422, [runningShiftIssue(["body"], target, intoRunning)]);
    }
    if (fromRunning) {
      throw new ApiError(422, [
        runningShiftIssue(
          ["body"],
          { id: current.machineId, name: current.machineName },
          fromRunning,
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
  if (!(await updateLog(scope, id, changes))) {
    throw notFound("Production log not found");
  }
}
