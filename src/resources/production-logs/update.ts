/**
 * Changing one production log: the stored fields a PATCH starts from, the
 * machine a read barrier must flush, the update (with its operator and work
 * order found or created in the same batch) and the soft delete. Every one is
 * scoped to a company and ignores deleted logs.
 */

import { and, eq, type SQL } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { type CompanyScope, owned, softDelete } from "../../db/company-scope";
import { machines, productionLogs } from "../../db/schema";
import { type OperatorName, operatorIdOf, referenceStatements, workOrderIdOf } from "./queries";
import { notDeletedLog } from "./read";
import type { LogType } from "./schemas";

/** The stored fields of a log that a PATCH needs (instants in ms). */
export interface LogCore {
  id: string;
  machineId: number;
  machineName: string;
  skuId: string | null;
  type: LogType;
  count: number;
  nominalSpeed: number;
  countingFactor: number;
  start: number;
  end: number;
  /** Kept by the machine's realtime object (the running shift's log: ./running-shift.ts). */
  live: boolean;
  shiftInstanceId: number | null;
}

/** The company's live log with this id (its stored fields), or undefined. */
export function findLogCore(scope: CompanyScope, id: string): Promise<LogCore | undefined> {
  const { db, companyId } = scope;
  return db
    .select({
      id: productionLogs.id,
      machineId: productionLogs.machineId,
      machineName: machines.name,
      skuId: productionLogs.skuId,
      type: productionLogs.type,
      count: productionLogs.count,
      nominalSpeed: productionLogs.nominalSpeed,
      countingFactor: productionLogs.countingFactor,
      start: productionLogs.start,
      end: productionLogs.end,
      live: productionLogs.live,
      shiftInstanceId: productionLogs.shiftInstanceId,
    })
    .from(productionLogs)
    .innerJoin(machines, eq(machines.id, productionLogs.machineId))
    .where(and(notDeletedLog(companyId), eq(productionLogs.id, id)))
    .get();
}

/**
 * The machine and end (ms) of the company's log with this id, deleted or not (a
 * primary-key read), or undefined when D1 has no such log.
 */
export function machineOfLog(
  scope: CompanyScope,
  id: string,
): Promise<{ machineId: number; end: number } | undefined> {
  const { db, companyId } = scope;
  return db
    .select({ machineId: productionLogs.machineId, end: productionLogs.end })
    .from(productionLogs)
    .where(owned({ companyId }, productionLogs, eq(productionLogs.id, id)))
    .get();
}

/** The columns a PATCH may set; `operator` and `workOrder` by name (null = remove). */
export interface LogChanges {
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
 * Updates a live log (only the fields given), finding or creating its
 * operator and work order in the same batch.
 *
 * @param guard a condition the update (and the operator and work order it creates)
 *   also requires, checked in the same statements (the rule of shifts that have ended).
 * @returns the log's operator id after the update, or null when the log does not exist
 *   for this company (or is deleted), or `guard` does not hold.
 */
export async function updateLog(
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

/**
 * Soft-deletes a log that is not live: from then on it is gone from reads, searches and
 * every report (they all filter `deleted_at IS NULL`). A live log (its realtime object's:
 * ./running-shift.ts) is left as it is, in the same statement.
 *
 * @returns false when it does not exist for this company, is already deleted, or is live.
 */
export async function softDeleteLog(scope: CompanyScope, id: string): Promise<boolean> {
  const deleted = await softDelete(
    scope,
    productionLogs,
    eq(productionLogs.id, id),
    eq(productionLogs.live, false),
  );
  return deleted > 0;
}
