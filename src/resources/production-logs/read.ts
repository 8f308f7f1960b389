/**
 * Reading production logs as the API shows them: `GET /v1/production-logs/{id}` and the
 * search (`POST /v1/production-logs/filters`), each one joined query (machine, SKU, shift
 * instance and definition, operator, work order, simple work order) scoped to a company.
 * Never in a `db.batch`: drizzle maps D1 batch results by column name, which shifts joined
 * rows with repeated names. Every filter and the order have an index (docs/bounded-work.md).
 */

import { and, asc, type Column, count, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, type NamedScope, owned, sameCompany } from "../../db/company-scope";
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
import { dateConditions } from "../../http/filters";
import { isoInstant as iso } from "../../http/instants";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import { idListConditions, normalizeForSearch, numericConditions } from "../../http/search";
import { syncConditions, syncOrder } from "../../http/sync";
import { notDeletedLog } from "./queries";
import type { ProductionLogFilters, ProductionLogOut } from "./schemas";

/**
 * `column IN (values)` with the values bound as one JSON parameter; unlike an
 * `include` filter, an empty list matches nothing.
 */
function inList(column: Column, values: readonly (string | number)[]): SQL {
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
function selectExpanded(db: Database) {
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

/**
 * The company's logs with these ids, not deleted, expanded, in the order of `ids`
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

/**
 * The ids of the company's machines (deleted ones included, since their logs
 * stay readable) whose name contains the term, fuzzily (`normalizeForSearch`).
 * Done in code: `machines` has no normalized search column, and a company has
 * few machines.
 */
async function machineIdsMatching(scope: CompanyScope, term: string): Promise<number[]> {
  const { db, companyId } = scope;
  const rows = await db
    .select({ id: machines.id, name: machines.name })
    .from(machines)
    .where(owned({ companyId }, machines))
    .all();
  const wanted = normalizeForSearch(term);
  return rows.filter((m) => normalizeForSearch(m.name).includes(wanted)).map((m) => m.id);
}

/**
 * One page of the company's logs matching every filter given, expanded,
 * ordered by `start`, then id. The count runs on `production_logs` alone; the
 * page is one joined query.
 */
export async function filterLogs(
  scope: NamedScope,
  filters: ProductionLogFilters,
  page: PageRequest,
): Promise<Page<ProductionLogOut>> {
  const { db } = scope;
  const companyId = scope.companyId;
  const machineSearch = filters.machines?.search;
  const skuSearch = filters.skus?.search;
  const conditions: (SQL | undefined)[] = [
    owned({ companyId }, productionLogs),
    ...syncConditions(productionLogs, filters),
    ...idListConditions(productionLogs.machineId, filters.machines),
    machineSearch
      ? inList(productionLogs.machineId, await machineIdsMatching(scope, machineSearch))
      : undefined,
    ...idListConditions(productionLogs.skuId, {
      include: filters.skus?.include?.map((s) => s.toLowerCase()),
      exclude: filters.skus?.exclude?.map((s) => s.toLowerCase()),
    }),
    skuSearch
      ? sql`${productionLogs.skuId} IN (SELECT ${skus.id} FROM ${skus}
          WHERE ${skus.companyId} = ${companyId}
            AND (instr(${skus.skuSearch}, ${normalizeForSearch(skuSearch)}) > 0
              OR instr(${skus.nameSearch}, ${normalizeForSearch(skuSearch)}) > 0))`
      : undefined,
    ...dateConditions(productionLogs.start, filters.start),
    ...dateConditions(productionLogs.end, filters.end),
    ...numericConditions(productionLogs.count, filters.count),
    filters.isReviewed === undefined || filters.isReviewed === null
      ? undefined
      : eq(productionLogs.isReviewed, filters.isReviewed),
    filters.type ? eq(productionLogs.type, filters.type) : undefined,
  ];
  const where = and(...conditions);
  const result = await paginate(
    page,
    db.select({ count: count() }).from(productionLogs).where(where),
    ({ limit, offset }) =>
      selectExpanded(db)
        .where(where)
        .orderBy(
          ...syncOrder(productionLogs, filters, [
            asc(productionLogs.start),
            asc(productionLogs.id),
          ]),
        )
        .limit(limit)
        .offset(offset)
        .all(),
  );
  return { ...result, rows: result.rows.map((r) => toOut(r, scope)) };
}

/**
 * The machines a search can touch, for the read barrier: its `machines.include`
 * list less `exclude` when it names one, else every machine (undefined).
 */
export function machinesFilterCanTouch(filters: ProductionLogFilters): number[] | undefined {
  const include = filters.machines?.include;
  if (!include || include.length === 0) return undefined;
  const exclude = new Set(filters.machines?.exclude ?? []);
  return include.filter((id) => !exclude.has(id));
}
