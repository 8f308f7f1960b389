/**
 * `PATCH /v1/production-logs/{production_log_id}`: the checks of a change (references,
 * `start` before `end`, the count's sensor pulses, the running-shift rule of
 * ./running-shift.ts, which also says what a live log may change) and the update, with
 * its operator and work order found or created in the same batch.
 */

import { and, eq, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { CompanyScope, NamedScope } from "../../db/company-scope";
import { productionLogs } from "../../db/schema";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import { noUnendedStored, unendedStored } from "../../shifts/unended";
import { resolvedOrIssue, resolveMachineRefs, resolveOne, resolveSkuRefs } from "../references";
import {
  findLogCore,
  type LogCore,
  notDeletedLog,
  type OperatorName,
  operatorIdOf,
  referenceStatements,
  workOrderIdOf,
} from "./queries";
import { sensorCountOf, startBeforeEnd } from "./rules";
import {
  countingFieldsOf,
  type LiveLogOwnerOf,
  type LogInterval,
  livePatchOf,
  placeLogs,
  refuseUnendedPatch,
} from "./running-shift";
import type { LogType, ProductionLogPatch } from "./schemas";

/**
 * A PATCH of a live log: what ./running-shift.ts allows (`livePatchOf`) is written to D1,
 * and a new operator is handed to the machine's realtime object, whose later flushes keep it.
 *
 * @throws ApiError 422 `running_shift` naming each refused field; 404 when the log is gone.
 */
async function patchLiveLog(
  owners: LiveLogOwnerOf,
  scope: NamedScope,
  current: LogCore,
  patch: ProductionLogPatch,
): Promise<void> {
  const { changes, operatorToObject } = livePatchOf(current, patch);
  // D1 first: the operator is found or created there, and the object is told its id.
  const updated = await updateLog(scope, current.id, changes);
  if (!updated) throw notFound("Production log not found");
  if (operatorToObject) {
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
    const source = { id: current.machineId, name: current.machineName };
    refuseUnendedPatch(into, target, from, source, now);
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
  // The rule again, in the update itself (as create.ts's insert): one step with the write.
  const guard = changesCounting ? noUnendedStored(scope, [after], now) : undefined;
  if (!(await updateLog(scope, id, changes, guard))) {
    const [stored] = guard ? await unendedStored(scope.db, scope, [after], now) : [null];
    refuseUnendedPatch(stored, target, null, target, now);
    if (guard && (await findLogCore(scope, id))) {
      throw new ApiError(409, "A shift of this machine changed meanwhile; retry the call");
    }
    throw notFound("Production log not found");
  }
}

/** The columns a PATCH may set; `operator` and `workOrder` by name (null = remove). */
interface LogChanges {
  type?: LogType;
  count?: number;
  sensorCount?: number;
  nominalSpeed?: number;
  start?: number;
  end?: number;
  machineId?: number;
  skuId?: string;
  shiftInstanceId?: number | null;
  isReviewed?: boolean;
  operator?: OperatorName | null;
  workOrder?: string | null;
}

/**
 * Updates a log that is not deleted (only the fields given), finding or creating its
 * operator and work order in the same batch.
 *
 * @param guard a condition the update (and the operator and work order it creates)
 *   also requires, checked in the same statements (the rule of shifts that have ended).
 * @returns the log's operator id after the update, or null when the log does not exist
 *   for this company (or is deleted), or `guard` does not hold.
 */
async function updateLog(
  scope: CompanyScope,
  id: string,
  changes: LogChanges,
  guard?: SQL,
): Promise<{ operatorId: number | null } | null> {
  const { db, companyId } = scope;
  const now = Date.now();
  const { operator, workOrder, ...columns } = changes;
  const set: SQLiteUpdateSetSource<typeof productionLogs> = { ...columns, updatedAt: now };
  if (operator !== undefined) {
    set.operatorId = operator === null ? null : operatorIdOf(companyId, operator);
  }
  if (workOrder !== undefined) {
    set.workOrderId = workOrder === null ? null : workOrderIdOf(companyId, workOrder);
  }
  const update = db
    .update(productionLogs)
    .set(set)
    .where(and(notDeletedLog(companyId), eq(productionLogs.id, id), guard))
    .returning({ operatorId: productionLogs.operatorId });
  // The operator and work order are found or created first, so that the update's
  // sub-selects see them; the update is last and its result tells whether the log exists.
  const references = referenceStatements(scope, [{ operator, workOrder }], now, guard);
  const [first, ...rest]: BatchItem<"sqlite">[] = [...references, update];
  if (!first) return null;
  const results: unknown[] = await db.batch([first, ...rest]);
  const [updated] = results[results.length - 1] as { operatorId: number | null }[];
  return updated ?? null;
}
