/**
 * `DELETE /v1/production-logs/{production_log_id}`: a soft delete, refused for a live log
 * (its realtime object's, ./running-shift.ts); the machine's stream is told when the log
 * may lie in the running shift, so that its live figures drop it at once.
 */

import type { CompanyScope } from "../../db/company-scope";
import { ApiError, notFound } from "../../http/errors";
import { MAX_INSTANCE_MS } from "../../shifts/plan";
import { type LiveLogOwnerOf, liveLogIssue } from "./running-shift";
import { findLogCore, softDeleteLog } from "./update";

/**
 * Deletes the company's log `id` unless it is live.
 *
 * @param owners reaches the machine's realtime object (./running-shift.ts).
 * @param scope the caller's company.
 * @param id the log's id, lowercase.
 * @param log its machine and end as read before the read barrier (undefined when D1 did
 *   not know it then).
 * @throws ApiError 422 `running_shift` for a live log; 404 when there is no such log.
 */
export async function deleteLog(
  owners: LiveLogOwnerOf,
  scope: CompanyScope,
  id: string,
  log: { machineId: number; end: number } | undefined,
): Promise<void> {
  if (!(await softDeleteLog(scope, id))) {
    const current = await findLogCore(scope, id);
    if (current?.live) {
      throw new ApiError(422, [liveLogIssue(["path", "production_log_id"], current, "deleted")]);
    }
    throw notFound("Production log not found");
  }
  // Only a log that ends after the earliest start a running instance can have may lie in
  // one: older ones do not wake the machine's object.
  if (log && log.end > Date.now() - MAX_INSTANCE_MS) {
    await owners(scope.companyId, log.machineId).forgetLog(id);
  }
}
