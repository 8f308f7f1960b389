/**
 * Production log queries; every one is scoped to a company and ignores deleted
 * logs.
 *
 * Reads are one joined query per call (machine, SKU, shift instance and its
 * definition, operator, work order, simple work order), selected under
 * distinct aliases and never put in a `db.batch`: drizzle-orm 0.45 maps D1
 * batch results by column name, which shifts joined rows with repeated names.
 *
 * Writes that must be atomic (a log and the operator or work order it names)
 * are one `db.batch`: the operator and work order are found or created by
 * statements of the same batch, and the log takes their id through a
 * sub-select, so that no other request can slip in between.
 */

import { and, asc, type Column, count, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { Principal } from "../../auth/principal";
import type { Database } from "../../db/client";
import { jsonChunks, jsonColumn } from "../../db/json-rows";
import {
  machines,
  nominalSpeeds,
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
import type { LogType, ProductionLogFilters, ProductionLogOut } from "./schemas";

/**
 * `column IN (values)` with the values bound as one JSON parameter; unlike an
 * `include` filter, an empty list matches nothing.
 */
function inList(column: Column, values: readonly (string | number)[]): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
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
      and(
        eq(machines.id, productionLogs.machineId),
        eq(machines.companyId, productionLogs.companyId),
      ),
    )
    .leftJoin(
      skus,
      and(eq(skus.id, productionLogs.skuId), eq(skus.companyId, productionLogs.companyId)),
    )
    .leftJoin(
      shiftInstances,
      and(
        eq(shiftInstances.id, productionLogs.shiftInstanceId),
        eq(shiftInstances.companyId, productionLogs.companyId),
      ),
    )
    .leftJoin(shiftDefinitions, eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId))
    .leftJoin(
      operators,
      and(
        eq(operators.id, productionLogs.operatorId),
        eq(operators.companyId, productionLogs.companyId),
        isNull(operators.deletedAt),
      ),
    )
    .leftJoin(
      workOrders,
      and(
        eq(workOrders.id, productionLogs.workOrderId),
        eq(workOrders.companyId, productionLogs.companyId),
      ),
    )
    .leftJoin(
      simpleWorkOrders,
      and(
        eq(simpleWorkOrders.id, productionLogs.simpleWorkOrderId),
        eq(simpleWorkOrders.companyId, productionLogs.companyId),
        isNull(simpleWorkOrders.deletedAt),
      ),
    );
}

type ExpandedRow = Awaited<ReturnType<ReturnType<typeof selectExpanded>["all"]>>[number];

/**
 * Shapes a joined row as the API shows it (instants as ISO 8601 strings).
 *
 * @param row one row of the joined read.
 * @param principal the caller, whose company is the log's company.
 */
function toOut(row: ExpandedRow, principal: Principal): ProductionLogOut {
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
    company: { id: principal.companyId, name: principal.companyName, timezone: principal.timezone },
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

const liveLog = (companyId: number) =>
  and(eq(productionLogs.companyId, companyId), isNull(productionLogs.deletedAt));

/**
 * The company's live logs with these ids, expanded, in the order of `ids`
 * (ids that do not resolve are left out). One query.
 *
 * @param ids lowercase uuids; bound as one JSON parameter, so any number fits.
 */
export async function findExpandedLogs(
  db: Database,
  principal: Principal,
  ids: readonly string[],
): Promise<ProductionLogOut[]> {
  if (ids.length === 0) return [];
  const rows = await selectExpanded(db)
    .where(and(liveLog(principal.companyId), inList(productionLogs.id, ids)))
    .all();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [toOut(row, principal)] : [];
  });
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
}

/** The company's live log with this id (its stored fields), or undefined. */
export function findLogCore(
  db: Database,
  companyId: number,
  id: string,
): Promise<LogCore | undefined> {
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
    })
    .from(productionLogs)
    .innerJoin(machines, eq(machines.id, productionLogs.machineId))
    .where(and(liveLog(companyId), eq(productionLogs.id, id)))
    .get();
}

/**
 * The live nominal speeds of these machine/SKU pairs, keyed `machineId|skuId`.
 *
 * @returns `{nominalSpeed, countingFactor}` per pair that has one.
 */
export async function pairNominalSpeeds(
  db: Database,
  companyId: number,
  pairs: readonly { machineId: number; skuId: string }[],
): Promise<Map<string, { nominalSpeed: number; countingFactor: number }>> {
  const out = new Map<string, { nominalSpeed: number; countingFactor: number }>();
  if (pairs.length === 0) return out;
  const rows = await db
    .select({
      machineId: nominalSpeeds.machineId,
      skuId: nominalSpeeds.skuId,
      nominalSpeed: nominalSpeeds.nominalSpeed,
      countingFactor: nominalSpeeds.countingFactor,
    })
    .from(nominalSpeeds)
    .where(
      and(
        eq(nominalSpeeds.companyId, companyId),
        isNull(nominalSpeeds.deletedAt),
        ...idListConditions(nominalSpeeds.machineId, {
          include: [...new Set(pairs.map((p) => p.machineId))],
        }),
        ...idListConditions(nominalSpeeds.skuId, {
          include: [...new Set(pairs.map((p) => p.skuId))],
        }),
      ),
    )
    .all();
  for (const r of rows) {
    out.set(`${r.machineId}|${r.skuId}`, {
      nominalSpeed: r.nominalSpeed,
      countingFactor: r.countingFactor,
    });
  }
  return out;
}

/** An operator named on a log: found by exact first and last name, or created. */
export interface OperatorName {
  firstName: string;
  lastName: string;
}

/**
 * Statement creating the operators of a chunk (`[[firstName, lastName,
 * firstNameSearch, lastNameSearch], ...]`, distinct names) that have no live
 * operator of that exact name yet.
 */
function createOperatorsUnlessExist(db: Database, companyId: number, chunk: string, now: number) {
  // Every column in table order (id NULL = autoincrement), as drizzle's insert-select lists them.
  return db.insert(operators).select(
    sql`SELECT NULL, CAST(${companyId} AS INTEGER), ${jsonColumn(0)}, ${jsonColumn(1)}, NULL,
            ${jsonColumn(2)}, ${jsonColumn(3)}, CAST(${now} AS INTEGER), CAST(${now} AS INTEGER), NULL
          FROM json_each(${chunk})
          WHERE NOT EXISTS (SELECT 1 FROM ${operators}
            WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = ${jsonColumn(0)}
              AND ${operators.lastName} = ${jsonColumn(1)} AND ${operators.deletedAt} IS NULL)
          ORDER BY key`,
  );
}

/** The id of the company's live operator of that exact name (lowest id), as a sub-select. */
function operatorIdOf(companyId: number, name: OperatorName): SQL {
  return sql`(SELECT min(${operators.id}) FROM ${operators}
    WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = ${name.firstName}
      AND ${operators.lastName} = ${name.lastName} AND ${operators.deletedAt} IS NULL)`;
}

/**
 * Statement creating the work orders of a chunk (`[[id, name], ...]`) the
 * company has no work order of that name for (unique index).
 */
function createWorkOrdersUnlessExist(db: Database, companyId: number, chunk: string, now: number) {
  // Every column in table order, as drizzle's insert-select lists them; `WHERE true`
  // lets SQLite parse the ON CONFLICT clause after a SELECT.
  return db
    .insert(workOrders)
    .select(
      sql`SELECT ${jsonColumn(0)}, CAST(${companyId} AS INTEGER), ${jsonColumn(1)}, NULL, 'InProgress',
            CAST(${now} AS INTEGER), CAST(${now} AS INTEGER)
          FROM json_each(${chunk}) WHERE true ORDER BY key`,
    )
    .onConflictDoNothing({ target: [workOrders.companyId, workOrders.name] });
}

/** The id of the company's work order of that name, as a sub-select. */
function workOrderIdOf(companyId: number, name: string): SQL {
  return sql`(SELECT ${workOrders.id} FROM ${workOrders}
    WHERE ${workOrders.companyId} = ${companyId} AND ${workOrders.name} = ${name})`;
}

/**
 * The find-or-create statements for the operators and work orders named by
 * some logs: one `INSERT ... SELECT FROM json_each(?)` per table and chunk of
 * distinct names, whatever the number of names.
 */
function referenceStatements(
  db: Database,
  companyId: number,
  named: readonly { operator?: OperatorName | null; workOrder?: string | null }[],
  now: number,
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
      createOperatorsUnlessExist(db, companyId, chunk, now),
    ),
    ...jsonChunks(workOrderRows).map((chunk) =>
      createWorkOrdersUnlessExist(db, companyId, chunk, now),
    ),
  ];
}

/** A log to insert, references resolved (instants in ms). */
export interface NewLog {
  machineId: number;
  skuId: string;
  shiftInstanceId: number | null;
  type: LogType;
  count: number;
  sensorCount: number;
  nominalSpeed: number;
  countingFactor: number;
  start: number;
  end: number;
  isReviewed: boolean;
  operator: OperatorName | null;
  workOrder: string | null;
}

/**
 * Inserts logs, all or none, in one batch of a constant number of statements
 * (`src/db/json-rows.ts`: one `INSERT ... SELECT FROM json_each(?)` per table
 * and chunk; for a typical 1,000-item call, three): the operators named that
 * do not exist yet, the work orders named that do not exist yet, then the
 * logs, which take their operator and work order ids through sub-selects on
 * the names (so that no other request can slip in between).
 *
 * @param logs the logs, every field resolved (`count` and `sensorCount` present).
 * @returns the new log ids, in the order given.
 */
export async function insertLogs(
  db: Database,
  companyId: number,
  logs: readonly NewLog[],
): Promise<string[]> {
  const now = Date.now();
  const ids = logs.map(() => crypto.randomUUID());
  const rows = logs.map((log, i) => [
    ids[i],
    log.machineId,
    log.skuId,
    log.shiftInstanceId,
    log.operator?.firstName ?? null,
    log.operator?.lastName ?? null,
    log.workOrder,
    log.type,
    log.count,
    log.sensorCount,
    log.nominalSpeed,
    log.countingFactor,
    log.start,
    log.end,
    log.isReviewed,
  ]);
  // Every column in table order, as drizzle's insert-select lists them. An item
  // without an operator has NULL names, which match no operator: NULL id.
  const inserts = jsonChunks(rows).map((chunk) =>
    db.insert(productionLogs).select(
      sql`SELECT j.id, CAST(${companyId} AS INTEGER), j.machine_id, j.sku_id, j.shift_instance_id,
            (SELECT min(${operators.id}) FROM ${operators}
              WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = j.first_name
                AND ${operators.lastName} = j.last_name AND ${operators.deletedAt} IS NULL),
            (SELECT ${workOrders.id} FROM ${workOrders}
              WHERE ${workOrders.companyId} = ${companyId} AND ${workOrders.name} = j.work_order),
            NULL, j.type, j.count, j.sensor_count, j.nominal_speed, j.counting_factor, j.start, j.end_at,
            j.is_reviewed, 0, 0, CAST(${now} AS INTEGER), CAST(${now} AS INTEGER), NULL
          FROM (SELECT key, ${jsonColumn(0)} AS id, ${jsonColumn(1)} AS machine_id,
                  ${jsonColumn(2)} AS sku_id, ${jsonColumn(3)} AS shift_instance_id,
                  ${jsonColumn(4)} AS first_name, ${jsonColumn(5)} AS last_name,
                  ${jsonColumn(6)} AS work_order, ${jsonColumn(7)} AS type, ${jsonColumn(8)} AS count,
                  ${jsonColumn(9)} AS sensor_count, ${jsonColumn(10)} AS nominal_speed,
                  ${jsonColumn(11)} AS counting_factor, ${jsonColumn(12)} AS start,
                  ${jsonColumn(13)} AS end_at, ${jsonColumn(14)} AS is_reviewed
                FROM json_each(${chunk})) AS j
          ORDER BY j.key`,
    ),
  );
  const [first, ...rest] = [...referenceStatements(db, companyId, logs, now), ...inserts];
  if (first) await db.batch([first, ...rest]);
  return ids;
}

/**
 * The machine of the company's log with this id, deleted or not (a primary-key
 * read), or undefined when D1 has no such log.
 */
export async function machineOfLog(
  db: Database,
  companyId: number,
  id: string,
): Promise<number | undefined> {
  const row = await db
    .select({ machineId: productionLogs.machineId })
    .from(productionLogs)
    .where(and(eq(productionLogs.companyId, companyId), eq(productionLogs.id, id)))
    .get();
  return row?.machineId;
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
 * @returns false when the log does not exist for this company (or is deleted).
 */
export async function updateLog(
  db: Database,
  companyId: number,
  id: string,
  changes: LogChanges,
): Promise<boolean> {
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
    .where(and(liveLog(companyId), eq(productionLogs.id, id)))
    .returning({ id: productionLogs.id });
  // The operator and work order are found or created first, so that the update's
  // sub-selects see them; the update is last and its result tells whether the log exists.
  const references = referenceStatements(db, companyId, [{ operator, workOrder }], now);
  const [first, ...rest]: BatchItem<"sqlite">[] = [...references, update];
  if (!first) return false;
  const results: unknown[] = await db.batch([first, ...rest]);
  const updated = results[results.length - 1] as { id: string }[];
  return updated.length > 0;
}

/**
 * Soft-deletes a log: from then on it is gone from reads, searches and every
 * report (they all filter `deleted_at IS NULL`).
 *
 * @returns false when it does not exist for this company (or is already deleted).
 */
export async function softDeleteLog(db: Database, companyId: number, id: string): Promise<boolean> {
  const now = Date.now();
  const deleted = await db
    .update(productionLogs)
    .set({ deletedAt: now, updatedAt: now })
    .where(and(liveLog(companyId), eq(productionLogs.id, id)))
    .returning({ id: productionLogs.id });
  return deleted.length > 0;
}

/**
 * The ids of the company's machines (deleted ones included, since their logs
 * stay readable) whose name contains the term, fuzzily (`normalizeForSearch`).
 * Done in code: `machines` has no normalized search column, and a company has
 * few machines.
 */
async function machineIdsMatching(
  db: Database,
  companyId: number,
  term: string,
): Promise<number[]> {
  const rows = await db
    .select({ id: machines.id, name: machines.name })
    .from(machines)
    .where(eq(machines.companyId, companyId))
    .all();
  const wanted = normalizeForSearch(term);
  return rows.filter((m) => normalizeForSearch(m.name).includes(wanted)).map((m) => m.id);
}

/**
 * One page of the company's live logs matching every filter given, expanded,
 * ordered by `start`, then id. The count runs on `production_logs` alone; the
 * page is one joined query.
 */
export async function filterLogs(
  db: Database,
  principal: Principal,
  filters: ProductionLogFilters,
  page: PageRequest,
): Promise<Page<ProductionLogOut>> {
  const companyId = principal.companyId;
  const machineSearch = filters.machines?.search;
  const skuSearch = filters.skus?.search;
  const conditions: (SQL | undefined)[] = [
    eq(productionLogs.companyId, companyId),
    ...syncConditions(productionLogs, filters),
    ...idListConditions(productionLogs.machineId, filters.machines),
    machineSearch
      ? inList(productionLogs.machineId, await machineIdsMatching(db, companyId, machineSearch))
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
  return { ...result, rows: result.rows.map((r) => toOut(r, principal)) };
}
