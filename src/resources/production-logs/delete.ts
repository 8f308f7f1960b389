/**
 * `DELETE /v1/production-logs/{production_log_id}`: a soft delete, refused for a live log
 * (./running-shift.ts); the machine's stream is told when the log may lie in the running
 * shift, so that its live figures drop it at once.
 */
import { eq } from "drizzle-orm";
import { type CompanyScope, softDelete } from "../../db/company-scope";
import { productionLogs } from "../../db/schema";
import { notFound } from "../../http/errors";
import { findLogCore } from "./queries";
import { type LiveLogOwnerOf, mayLieInRunningShift, refuseLiveLogDelete } from "./running-shift";

/**
 * Soft-deletes a log that is not live: from then on it is gone from reads, searches and
 * every report (they all filter `deleted_at IS NULL`). A live log (its realtime object's:
 * ./running-shift.ts) is left as it is, in the same statement.
 *
 * @returns false when it does not exist for this company, is already deleted, or is live.
 */
async function softDeleteLog(scope: CompanyScope, id: string): Promise<boolean> {
  const deleted = await softDelete(
    scope,
    productionLogs,
    eq(productionLogs.id, id),
    eq(productionLogs.live, false),
  );
  return deleted > 0;
}

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
    if (current?.live) refuseLiveLogDelete(current);
    throw notFound("Production log not found");
  }
  if (log && mayLieInRunningShift(log.end, Date.now())) {
    await owners(scope.companyId, log.machineId).forgetLog(id);
  }
}
