/**
 * The D1 half of the create / search / get / update / delete shape (./crud.ts): a resource
 * declares its table once ({@link CrudTable}: the row the API shows, its search filters and
 * order, the `*_search` twins of its fuzzy fields), and these read, change and soft-delete
 * its rows, every one inside the company scope (src/db/company-scope.ts), in the query
 * builder (docs/architecture.md, "D1 query styles").
 */
import { count, eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import {
  type CompanyScope,
  notDeleted,
  owned,
  type SoftDeleteTable,
  softDelete,
} from "../db/company-scope";
import { type Page, type PageRequest, paginate } from "../http/pagination";
import { normalizeForSearch } from "../http/search";
import { type SyncFilters, syncConditions, syncOrder } from "../http/sync";

/** A company's table with soft delete and an `id` column. */
type IdTable = SoftDeleteTable & { id: SQLiteColumn };

/**
 * A select of the rows as the API shows them, `FROM` (and joins) written, `WHERE` to come:
 * what `db.select(columns).from(table)` gives, as much of it as the queries here use.
 */
interface RowSelect<Row> {
  where(where: SQL): {
    get(): Promise<Row | undefined>;
    orderBy(...order: SQL[]): { limit(limit: number): { offset(offset: number): Promise<Row[]> } };
  };
}

/** What a resource declares of its table for the shared queries. */
export interface CrudTable<Row, Filters extends SyncFilters> {
  /** The table: its rows belong to a company, are soft-deleted and have an `id`. */
  table: IdTable;
  /**
   * The select of a row as the API shows it (`db.select(columns).from(table)`, joins
   * included, a joined row's columns nested as drizzle nests them).
   */
  select(db: Database): RowSelect<Row>;
  /** The search's conditions beyond pull sync's (`undefined` ones are skipped). */
  filters(filters: Filters): (SQL | undefined)[];
  /** The search's order without pull sync; it ends with a unique column, so pages never overlap. */
  order: SQL[];
  /** Each fuzzy-searchable field's `*_search` column, kept in step by {@link patchSet}. */
  searchTwins?: Readonly<Record<string, string>>;
}

/** The company's row (not deleted) with this id, or undefined (deleted, unknown, another company's). */
export function findRow<Row>(
  scope: CompanyScope,
  t: CrudTable<Row, never>,
  id: string | number,
): Promise<Row | undefined> {
  return t
    .select(scope.db)
    .where(notDeleted(scope, t.table, eq(t.table.id, id)))
    .get();
}

/**
 * Applies a partial update to the company's row (not deleted) with this id, `updatedAt` set
 * to now; an empty `set` changes nothing and only checks that the row exists.
 *
 * @param set the columns to change (property names of the table), as drizzle's `set` takes them.
 * @returns false when the row does not exist for this company (or is deleted).
 * @throws the D1 error of a unique index the change breaks.
 */
export async function updateRow<Row>(
  scope: CompanyScope,
  t: CrudTable<Row, never>,
  id: string | number,
  set: Record<string, unknown>,
): Promise<boolean> {
  if (Object.keys(set).length === 0) return (await findRow(scope, t, id)) !== undefined;
  const updated = await scope.db
    .update(t.table)
    .set({ ...set, updatedAt: Date.now() })
    .where(notDeleted(scope, t.table, eq(t.table.id, id)))
    .returning({ id: t.table.id });
  return updated.length > 0;
}

/**
 * The `set` of a PATCH: every field given (`undefined` = absent), with the `*_search` twin of
 * each fuzzy-searchable one (`normalizeForSearch` of the new value; null clears both).
 *
 * @param patch the validated body (field names are the table's property names).
 */
export function patchSet(
  t: Pick<CrudTable<unknown, never>, "searchTwins">,
  patch: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const set: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    set[field] = value;
    const twin = t.searchTwins?.[field];
    if (twin !== undefined) set[twin] = normalizeForSearch(value as string | null);
  }
  return set;
}

/**
 * Soft-deletes the company's row with this id (`deletedAt` and `updatedAt` now): gone from
 * GET and the searches (pull sync still sees it).
 *
 * @returns false when the row does not exist for this company (or is already deleted).
 */
export async function softDeleteRow(
  scope: CompanyScope,
  t: Pick<CrudTable<unknown, never>, "table">,
  id: string | number,
): Promise<boolean> {
  return (await softDelete(scope, t.table, eq(t.table.id, id))) > 0;
}

/**
 * One page of the company's rows matching every filter: pull sync's conditions
 * (src/http/sync.ts: not deleted unless `includeDeleted`, `updatedAt`, the `syncAfter`
 * cursor), then the table's own; in the table's order, or by (`updatedAt`, id) for pull sync.
 * The count and the page run side by side (`paginate`).
 */
export function searchRows<Row, Filters extends SyncFilters>(
  scope: CompanyScope,
  t: CrudTable<Row, Filters>,
  filters: Filters,
  page: PageRequest,
): Promise<Page<Row>> {
  const { db } = scope;
  const where = owned(scope, t.table, ...syncConditions(t.table, filters), ...t.filters(filters));
  return paginate(
    page,
    db.select({ count: count() }).from(t.table).where(where),
    ({ limit, offset }) =>
      t
        .select(db)
        .where(where)
        .orderBy(...syncOrder(t.table, filters, t.order))
        .limit(limit)
        .offset(offset),
  );
}
