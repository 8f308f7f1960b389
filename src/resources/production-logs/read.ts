/**
 * A production log as the API shows it: one joined query per call (machine,
 * SKU, shift instance and its definition, operator, work order, simple work
 * order), selected under distinct aliases and never put in a `db.batch`:
 * drizzle-orm 0.45 maps D1 batch results by column name, which shifts joined
 * rows with repeated names. Every read is scoped to a company and ignores
 * deleted logs.
 */

import { and, type Column, eq, isNull, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type NamedScope, notDeleted, sameCompany } from "../../db/company-scope";
import { inJsonList } from "../../db/json-list";
import {
  machines,
  operators,
  productionLogs,
  shiftDefinitions,
  shiftInstances,
  simpleWorkOrders,
  skus,
  workOrders,
} from "../../db/schema";
import { isoInstant as iso } from "../../http/instants";
import type { ProductionLogOut } from "./schemas";

/**
 * `column IN (values)` with the values bound as one JSON parameter; unlike an
 * `include` filter, an empty list matches nothing.
 */
export function inList(column: Column, values: readonly (string | number)[]): SQL {
  return inJsonList(column, values);
}

const expandedColumns = {
  id: productionLogs.id,
  type: productionLogs.type,
  sensorCount: productionLogs.sensorCount,
  count: productionLogs.count,
  nominalSpeed: productionLogs.nominalSpeed,
  countingFactor: productionLogs.countingFactor,
  start: productionLogs.start,
  end: productionLogs.end,
  isReviewed: productionLogs.isReviewed,
  isAutomated: productionLogs.isAutomated,
  live: productionLogs.live,
  createdAt: productionLogs.createdAt,
  updatedAt: productionLogs.updatedAt,
  deletedAt: productionLogs.deletedAt,
  machineId: machines.id,
  machineName: machines.name,
  machineIsCountEnabled: machines.isCountEnabled,
  machineExternalName: machines.externalName,
  shiftId: shiftInstances.id,
  shiftStart: shiftInstances.start,
  shiftEnd: shiftInstances.end,
  shiftName: shiftDefinitions.name,
  shiftIsConsidered: shiftDefinitions.isConsidered,
  operatorId: operators.id,
  operatorFirstName: operators.firstName,
  operatorLastName: operators.lastName,
  operatorEmail: operators.email,
  skuId: skus.id,
  skuName: skus.name,
  skuDescription: skus.description,
  skuUnit: skus.unit,
  workOrderId: workOrders.id,
  workOrderName: workOrders.name,
  workOrderDescription: workOrders.description,
  workOrderStatus: workOrders.status,
  simpleWorkOrderId: simpleWorkOrders.id,
  simpleWorkOrderName: simpleWorkOrders.name,
};

/**
 * The joined read. Machine, SKU and work order are joined whatever their
 * state (a log keeps showing what it was recorded for); a deleted operator or
 * simple work order no longer resolves and shows as null (the spec: deleting
 * an operator leaves logs pointing at a record that no longer resolves). Every
 * join also matches the company, so a stray id can never expand another
 * company's record.
 */
export function selectExpanded(db: Database) {
  return db
    .select(expandedColumns)
    .from(productionLogs)
    .innerJoin(
      machines,
      and(eq(machines.id, productionLogs.machineId), sameCompany(machines, productionLogs)),
    )
    .leftJoin(skus, and(eq(skus.id, productionLogs.skuId), sameCompany(skus, productionLogs)))
    .leftJoin(
      shiftInstances,
      and(
        eq(shiftInstances.id, productionLogs.shiftInstanceId),
        sameCompany(shiftInstances, productionLogs),
      ),
    )
    .leftJoin(shiftDefinitions, eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId))
    .leftJoin(
      operators,
      and(
        eq(operators.id, productionLogs.operatorId),
        sameCompany(operators, productionLogs),
        isNull(operators.deletedAt),
      ),
    )
    .leftJoin(
      workOrders,
      and(eq(workOrders.id, productionLogs.workOrderId), sameCompany(workOrders, productionLogs)),
    )
    .leftJoin(
      simpleWorkOrders,
      and(
        eq(simpleWorkOrders.id, productionLogs.simpleWorkOrderId),
        sameCompany(simpleWorkOrders, productionLogs),
        isNull(simpleWorkOrders.deletedAt),
      ),
    );
}

type ExpandedRow = Awaited<ReturnType<ReturnType<typeof selectExpanded>["all"]>>[number];

/**
 * Shapes a joined row as the API shows it (instants as ISO 8601 strings).
 *
 * @param row one row of the joined read.
 * @param scope the caller's company (the log's company), with its name and time zone.
 */
export function toOut(row: ExpandedRow, scope: Omit<NamedScope, "db">): ProductionLogOut {
  return {
    id: row.id,
    type: row.type,
    sensorCount: row.sensorCount,
    count: row.count,
    nominalSpeed: row.nominalSpeed,
    countingFactor: row.countingFactor,
    start: iso(row.start),
    end: iso(row.end),
    isReviewed: row.isReviewed,
    isAutomated: row.isAutomated,
    machineId: row.machineId,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
    live: row.live,
    machine: {
      id: row.machineId,
      name: row.machineName,
      isCountEnabled: row.machineIsCountEnabled,
      externalName: row.machineExternalName,
    },
    company: { id: scope.companyId, name: scope.companyName, timezone: scope.timezone },
    shift:
      row.shiftId === null ||
      row.shiftStart === null ||
      row.shiftEnd === null ||
      row.shiftName === null ||
      row.shiftIsConsidered === null
        ? null
        : {
            id: row.shiftId,
            name: row.shiftName,
            start: iso(row.shiftStart),
            end: iso(row.shiftEnd),
            isConsidered: row.shiftIsConsidered,
          },
    operator:
      row.operatorId === null
        ? null
        : {
            id: row.operatorId,
            firstName: row.operatorFirstName,
            lastName: row.operatorLastName,
            email: row.operatorEmail,
          },
    sku:
      row.skuId === null
        ? null
        : {
            id: row.skuId,
            name: row.skuName,
            description: row.skuDescription,
            unit: row.skuUnit,
          },
    workOrder:
      row.workOrderId === null || row.workOrderName === null || row.workOrderStatus === null
        ? null
        : {
            id: row.workOrderId,
            name: row.workOrderName,
            description: row.workOrderDescription,
            status: row.workOrderStatus,
          },
    simpleWorkOrder:
      row.simpleWorkOrderId === null || row.simpleWorkOrderName === null
        ? null
        : { id: row.simpleWorkOrderId, name: row.simpleWorkOrderName },
  };
}

/** The company's logs that are not deleted. */
export const notDeletedLog = (companyId: number) => notDeleted({ companyId }, productionLogs);

/**
 * The company's live logs with these ids, expanded, in the order of `ids`
 * (ids that do not resolve are left out). One query.
 *
 * @param ids lowercase uuids; bound as one JSON parameter, so any number fits.
 */
export async function findExpandedLogs(
  scope: NamedScope,
  ids: readonly string[],
): Promise<ProductionLogOut[]> {
  const { db } = scope;
  if (ids.length === 0) return [];
  const rows = await selectExpanded(db)
    .where(and(notDeletedLog(scope.companyId), inList(productionLogs.id, ids)))
    .all();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toOut(row, scope)] : [];
  });
}
