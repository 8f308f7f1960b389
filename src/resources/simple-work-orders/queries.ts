/**
 * The simple work orders' table as the shared queries read it (../crud-queries.ts: find,
 * search, soft delete), and their own writes: the create that finds, creates or restores by
 * name, and the rename. Every query is scoped to a company.
 *
 * Names are unique per company, deleted work orders included (unique index
 * `simple_work_orders_company_name_unique`), which is what makes creation
 * idempotent by name and lets a deleted work order be restored with its id.
 */
import { asc, eq, ne, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../../db/company-scope";
import { jsonRowSelects } from "../../db/json-rows";
import { simpleWorkOrders } from "../../db/schema";
import { ApiError } from "../../http/errors";
import { idListConditions, likePattern } from "../../http/search";
import { type CrudTable, findRow, updateRow } from "../crud-queries";
import type { SimpleWorkOrderFilters } from "./schemas";

/** A simple work order as the API shows it (instants in ms since the epoch). */
interface SimpleWorkOrderRow {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

const columns = {
  id: simpleWorkOrders.id,
  name: simpleWorkOrders.name,
  createdAt: simpleWorkOrders.createdAt,
  updatedAt: simpleWorkOrders.updatedAt,
  deletedAt: simpleWorkOrders.deletedAt,
};

/**
 * The work orders: searched by id lists and a LIKE pattern on the name, ordered by name,
 * then id.
 */
export const simpleWorkOrderTable: CrudTable<SimpleWorkOrderRow, SimpleWorkOrderFilters> = {
  table: simpleWorkOrders,
  select: (db) => db.select(columns).from(simpleWorkOrders),
  filters: (filters) => [
    ...idListConditions(simpleWorkOrders.id, filters.simpleWorkOrders),
    likePattern(simpleWorkOrders.name, filters.names?.search),
  ],
  order: [asc(simpleWorkOrders.name), asc(simpleWorkOrders.id)],
};

/**
 * Finds or creates one work order per name, in one batch of one
 * `INSERT ... SELECT FROM json_each(?) ... ON CONFLICT DO UPDATE` per chunk of
 * names (`src/db/json-rows.ts`): a new name is
 * inserted; an existing one is returned unchanged; a deleted one is restored
 * (same id, `deleted_at` cleared, `updated_at` set to now).
 *
 * @param names distinct, trimmed names.
 * @returns one work order per name, in the order given.
 */
export async function upsertSimpleWorkOrders(
  { db, companyId }: CompanyScope,
  names: readonly string[],
): Promise<SimpleWorkOrderRow[]> {
  const now = Date.now();
  // Every column in table order, as drizzle's insert-select lists them; `WHERE true`
  // lets SQLite parse the ON CONFLICT clause after a SELECT.
  const [first, ...rest] = jsonRowSelects(
    { companyId },
    ["json", "company", "json", "now", "now", "null"],
    names.map((name) => [crypto.randomUUID(), name]),
    { now, onConflict: true },
  ).map((select) =>
    db
      .insert(simpleWorkOrders)
      .select(select)
      .onConflictDoUpdate({
        target: [simpleWorkOrders.companyId, simpleWorkOrders.name],
        // SET expressions read the row as it was: an active row keeps its updated_at.
        set: {
          deletedAt: null,
          updatedAt: sql`CASE WHEN ${simpleWorkOrders.deletedAt} IS NULL THEN ${simpleWorkOrders.updatedAt} ELSE excluded.updated_at END`,
        },
      })
      .returning(columns),
  );
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  // RETURNING promises no order: give the rows back in the order of the names.
  const byName = new Map(results.flat().map((r) => [r.name, r]));
  return names.flatMap((name) => {
    const row = byName.get(name);
    return row ? [row] : [];
  });
}

function nameConflict(name: string, other: { id: string; deletedAt: number | null }): ApiError {
  const state = other.deletedAt === null ? "" : ", deleted";
  return new ApiError(
    409,
    `A simple work order named "${name}" already exists (id ${other.id}${state}); names are unique in the company, deleted work orders included`,
  );
}

/**
 * Renames an active work order.
 *
 * @returns false when the work order does not exist for this company (or is deleted).
 * @throws ApiError 409 naming the other work order (active or deleted) that holds the name.
 */
export async function renameSimpleWorkOrder(
  scope: CompanyScope,
  id: string,
  name: string | undefined,
): Promise<boolean> {
  const { db } = scope;
  const current = await findRow(scope, simpleWorkOrderTable, id);
  if (!current) return false;
  if (name === undefined || name === current.name) return true;
  const findHolder = () =>
    db
      .select({ id: simpleWorkOrders.id, deletedAt: simpleWorkOrders.deletedAt })
      .from(simpleWorkOrders)
      .where(
        owned(
          scope,
          simpleWorkOrders,
          eq(simpleWorkOrders.name, name),
          ne(simpleWorkOrders.id, id),
        ),
      )
      .get();
  const holder = await findHolder();
  if (holder) throw nameConflict(name, holder);
  try {
    return await updateRow(scope, simpleWorkOrderTable, id, { name });
  } catch (error) {
    // Another request took the name between the check and the update.
    if (String(error).includes("UNIQUE constraint failed")) {
      const raced = await findHolder();
      if (raced) throw nameConflict(name, raced);
    }
    throw error;
  }
}
