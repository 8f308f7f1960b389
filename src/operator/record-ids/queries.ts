/**
 * D1 work of the record-ids route (./routes.ts): checks a list of id changes and writes them in
 * one batch. "Referred to" includes the writes a running machine holds: the check runs the read
 * barrier first, and the batch checks the references again inside its transaction, so a realtime
 * flush between the two makes it a 409 (docs/operator-api.md, "Fixed record ids").
 */

import { and, eq, inArray, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client";
import { type CompanyScope, notDeleted, type SoftDeleteTable } from "../../db/company-scope";
import { nominalSpeeds, productionLogs, simpleWorkOrders, skus } from "../../db/schema";
import { syncPendingMachines } from "../../durable/realtime-barrier";
import type { Env } from "../../env";
import { ApiError, unprocessable } from "../../http/errors";
import { heldWritesOf } from "../../realtime/machine-stub";

/** The kinds of record whose id the operator may choose. */
export const RECORD_TYPES = ["sku", "simpleWorkOrder", "nominalSpeed", "productionLog"] as const;
/** One of {@link RECORD_TYPES}. */
type RecordType = (typeof RECORD_TYPES)[number];

/** A type's table, with the columns the checks read. */
interface TypeTable {
  table: SoftDeleteTable;
  id: SQLiteColumn;
  companyId: SQLiteColumn;
  deletedAt: SQLiteColumn;
  /** The ids among `ids` that something refers to. */
  references: (db: Database, ids: string[]) => Promise<string[]>;
  /** The statement that gives record `id` the id `newId`. */
  rename: (db: Database, id: string, newId: string) => BatchItem<"sqlite">;
  /** The columns of other tables that refer to this type's id (for the batch's re-check). */
  referringColumns: SQLiteColumn[];
}

/** Marks the error of a batch refused by `guard` (a reference appeared meanwhile). */
const GUARD_MARK = "record-ids: referred to";

/**
 * A statement that fails (and so rolls back the whole batch, a D1 batch being one
 * transaction) when `column` of `table` refers to one of `ids`: `json()` of text that is
 * not JSON raises an error, evaluated only for a row that exists.
 */
function guard(db: Database, column: SQLiteColumn, ids: string[]): BatchItem<"sqlite"> {
  return db
    .select({ refused: sql`json(${GUARD_MARK})` })
    .from(column.table)
    .where(inArray(column, ids))
    .limit(1);
}

/** The ids among `ids` that a column of another table refers to. */
async function referredTo(db: Database, column: SQLiteColumn, ids: string[]): Promise<string[]> {
  const rows = await db
    .selectDistinct({ id: column })
    .from(column.table)
    .where(inArray(column, ids))
    .all();
  return rows.map((row) => String(row.id));
}

const TYPES: Record<RecordType, TypeTable> = {
  sku: {
    table: skus,
    id: skus.id,
    companyId: skus.companyId,
    deletedAt: skus.deletedAt,
    references: async (db, ids) => [
      ...(await referredTo(db, nominalSpeeds.skuId, ids)),
      ...(await referredTo(db, productionLogs.skuId, ids)),
    ],
    rename: (db, id, newId) => db.update(skus).set({ id: newId }).where(eq(skus.id, id)),
    referringColumns: [nominalSpeeds.skuId, productionLogs.skuId],
  },
  simpleWorkOrder: {
    table: simpleWorkOrders,
    id: simpleWorkOrders.id,
    companyId: simpleWorkOrders.companyId,
    deletedAt: simpleWorkOrders.deletedAt,
    references: (db, ids) => referredTo(db, productionLogs.simpleWorkOrderId, ids),
    rename: (db, id, newId) =>
      db.update(simpleWorkOrders).set({ id: newId }).where(eq(simpleWorkOrders.id, id)),
    referringColumns: [productionLogs.simpleWorkOrderId],
  },
  // Nothing refers to a nominal speed by id: logs copy its values.
  nominalSpeed: {
    table: nominalSpeeds,
    id: nominalSpeeds.id,
    companyId: nominalSpeeds.companyId,
    deletedAt: nominalSpeeds.deletedAt,
    references: async () => [],
    rename: (db, id, newId) =>
      db.update(nominalSpeeds).set({ id: newId }).where(eq(nominalSpeeds.id, id)),
    referringColumns: [],
  },
  // A live log is a segment of a machine's realtime timeline, which names it by id.
  productionLog: {
    table: productionLogs,
    id: productionLogs.id,
    companyId: productionLogs.companyId,
    deletedAt: productionLogs.deletedAt,
    references: async (db, ids) => {
      const rows = await db
        .select({ id: productionLogs.id })
        .from(productionLogs)
        .where(and(inArray(productionLogs.id, ids), eq(productionLogs.live, true)))
        .all();
      return rows.map((row) => row.id);
    },
    rename: (db, id, newId) =>
      db.update(productionLogs).set({ id: newId }).where(eq(productionLogs.id, id)),
    // A live log's own row is its reference (the realtime timeline names it): checked by
    // `references`; the realtime flush upserts by id, so a renamed log would come back.
    referringColumns: [],
  },
};

/**
 * Checks a list of id changes and writes them in one batch, all or none.
 *
 * @param env the bindings (`DB`, and the realtime objects for the read barrier).
 * @param scope the company whose records change (and its database).
 * @param changes `{type, id, newId}` with lowercase uuids.
 * @throws ApiError 422 at `["body", i, ...]` for an unknown or deleted record of another
 *   company, a repeated id, or a `newId` used by another record; 409 when something
 *   refers to a record (a SKU with nominal speeds or logs, a work order on logs, a live log),
 *   a running machine's held writes included; 503 when the barrier times out.
 */
export async function changeRecordIds(
  env: Pick<Env, "DB" | "REALTIME_MACHINE">,
  scope: CompanyScope,
  changes: readonly { type: RecordType; id: string; newId: string }[],
): Promise<void> {
  const { db, companyId } = scope;
  const seen = new Set<string>();
  changes.forEach((change, i) => {
    for (const field of ["id", "newId"] as const) {
      const key = `${change.type} ${change[field]}`;
      if (seen.has(key)) throw unprocessable(["body", i, field], "Each id may appear once");
      seen.add(key);
    }
  });
  // What running machines hold reaches D1 first, so that the references below include it.
  if (changes.some((change) => change.type !== "nominalSpeed")) {
    await syncPendingMachines(heldWritesOf(env), scope);
  }
  const updates: BatchItem<"sqlite">[] = [];
  for (const type of RECORD_TYPES) {
    const mine = changes.map((change, i) => ({ change, i })).filter((x) => x.change.type === type);
    if (mine.length === 0) continue;
    const t = TYPES[type];
    const ids = mine.map((x) => x.change.id);
    const newIds = mine.map((x) => x.change.newId);
    const found = await db
      .select({ id: t.id })
      .from(t.table)
      .where(notDeleted({ companyId }, t.table, inArray(t.id, ids)))
      .all();
    const foundIds = new Set(found.map((row) => String(row.id)));
    const taken = await db.select({ id: t.id }).from(t.table).where(inArray(t.id, newIds)).all();
    const takenIds = new Set(taken.map((row) => String(row.id)));
    for (const { change, i } of mine) {
      if (!foundIds.has(change.id)) {
        throw unprocessable(
          ["body", i, "id"],
          `No ${change.type} ${change.id} in this company`,
          "not_found",
        );
      }
      if (takenIds.has(change.newId)) {
        throw unprocessable(
          ["body", i, "newId"],
          `Another ${change.type} has id ${change.newId}`,
          "value_error.taken",
        );
      }
    }
    const referred = await t.references(db, ids);
    if (referred.length > 0) {
      throw new ApiError(
        409,
        `${type} ${referred[0]} is already referred to: give a fixed id before any use`,
      );
    }
    for (const column of t.referringColumns) updates.push(guard(db, column, ids));
    for (const { change } of mine) {
      updates.push(t.rename(db, change.id, change.newId));
    }
  }
  const [first, ...rest] = updates;
  if (!first) return;
  try {
    await db.batch([first, ...rest]);
  } catch (error) {
    if (!/malformed JSON|FOREIGN KEY/i.test(String(error))) throw error;
    throw new ApiError(
      409,
      "A record was referred to while its id changed (a realtime write): give a fixed id before any use",
    );
  }
}
