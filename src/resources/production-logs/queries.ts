/**
 * The D1 work the production-log operations share: the company's logs that are not deleted,
 * the stored fields a PATCH or DELETE starts from, a log's machine for the read barrier, and
 * the operator and work order a log names, found or created by statements that run in the
 * same `db.batch` as the log's own write (so no other request slips in between).
 */

import { and, eq, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, notDeleted, owned } from "../../db/company-scope";
import { jsonChunks, jsonColumn } from "../../db/json-rows";
import { machines, operators, productionLogs, workOrders } from "../../db/schema";
import { normalizeForSearch } from "../../http/search";
import type { LogType } from "./schemas";

/** The company's logs that are not deleted. */
export const notDeletedLog = (companyId: number) => notDeleted({ companyId }, productionLogs);

/** An operator named on a log: found by exact first and last name, or created. */
export interface OperatorName {
  firstName: string;
  lastName: string;
}

/**
 * Statement creating the operators of a chunk (`[[firstName, lastName,
 * firstNameSearch, lastNameSearch], ...]`, distinct names) that have no operator
 * of that exact name yet (not deleted).
 */
function createOperatorsUnlessExist(scope: CompanyScope, chunk: string, now: number, guard: SQL) {
  const { db, companyId } = scope;
  // Every column in table order (id NULL = autoincrement), as drizzle's insert-select lists them.
  return db.insert(operators).select(
    sql`SELECT NULL, CAST(${companyId} AS INTEGER), ${jsonColumn(0)}, ${jsonColumn(1)}, NULL,
            ${jsonColumn(2)}, ${jsonColumn(3)}, CAST(${now} AS INTEGER), CAST(${now} AS INTEGER), NULL
          FROM json_each(${chunk})
          WHERE NOT EXISTS (SELECT 1 FROM ${operators}
            WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = ${jsonColumn(0)}
              AND ${operators.lastName} = ${jsonColumn(1)} AND ${operators.deletedAt} IS NULL)
            AND ${guard}
          ORDER BY key`,
  );
}

/** The id of the company's operator of that exact name, not deleted (lowest id), as a sub-select. */
export function operatorIdOf(companyId: number, name: OperatorName): SQL {
  return sql`(SELECT min(${operators.id}) FROM ${operators}
    WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = ${name.firstName}
      AND ${operators.lastName} = ${name.lastName} AND ${operators.deletedAt} IS NULL)`;
}

/**
 * Statement creating the work orders of a chunk (`[[id, name], ...]`) the
 * company has no work order of that name for (unique index).
 */
function createWorkOrdersUnlessExist(scope: CompanyScope, chunk: string, now: number, guard: SQL) {
  const { db, companyId } = scope;
  // Every column in table order, as drizzle's insert-select lists them; `WHERE true`
  // lets SQLite parse the ON CONFLICT clause after a SELECT.
  return db
    .insert(workOrders)
    .select(
      sql`SELECT ${jsonColumn(0)}, CAST(${companyId} AS INTEGER), ${jsonColumn(1)}, NULL, 'InProgress',
            CAST(${now} AS INTEGER), CAST(${now} AS INTEGER)
          FROM json_each(${chunk}) WHERE ${guard} ORDER BY key`,
    )
    .onConflictDoNothing({ target: [workOrders.companyId, workOrders.name] });
}

/** The id of the company's work order of that name, as a sub-select. */
export function workOrderIdOf(companyId: number, name: string): SQL {
  return sql`(SELECT ${workOrders.id} FROM ${workOrders}
    WHERE ${workOrders.companyId} = ${companyId} AND ${workOrders.name} = ${name})`;
}

/**
 * The find-or-create statements for the operators and work orders named by
 * some logs: one `INSERT ... SELECT FROM json_each(?)` per table and chunk of
 * distinct names, whatever the number of names.
 *
 * @param guard a condition every statement also requires (the log write's own, so that a
 *   refused write creates nothing); default: none.
 */
export function referenceStatements(
  scope: CompanyScope,
  named: readonly { operator?: OperatorName | null; workOrder?: string | null }[],
  now: number,
  guard: SQL = sql`true`,
): BatchItem<"sqlite">[] {
  const operatorNames = new Map<string, OperatorName>();
  const workOrderNames = new Set<string>();
  for (const item of named) {
    if (item.operator) {
      const key = JSON.stringify([item.operator.firstName, item.operator.lastName]);
      operatorNames.set(key, item.operator);
    }
    if (item.workOrder) workOrderNames.add(item.workOrder);
  }
  const operatorRows = [...operatorNames.values()].map((n) => [
    n.firstName,
    n.lastName,
    normalizeForSearch(n.firstName),
    normalizeForSearch(n.lastName),
  ]);
  const workOrderRows = [...workOrderNames].map((name) => [crypto.randomUUID(), name]);
  return [
    ...jsonChunks(operatorRows).map((chunk) =>
      createOperatorsUnlessExist(scope, chunk, now, guard),
    ),
    ...jsonChunks(workOrderRows).map((chunk) =>
      createWorkOrdersUnlessExist(scope, chunk, now, guard),
    ),
  ];
}

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

/** The company's log with this id, not deleted (its stored fields), or undefined. */
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
