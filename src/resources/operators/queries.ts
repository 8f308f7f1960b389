/**
 * Operator queries; every one is scoped to a company and ignores deleted operators.
 */
import { asc, count, eq, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, notDeleted, owned, softDelete } from "../../db/company-scope";
import { jsonRowSelects } from "../../db/json-rows";
import { operators } from "../../db/schema";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import { fuzzyContains, normalizeForSearch } from "../../http/search";
import { syncConditions, syncOrder } from "../../http/sync";
import type { OperatorFilters, OperatorPatch } from "./schemas";

/** An operator as the API shows it (instants in ms since the epoch). */
export interface OperatorRow {
  id: number;
  firstName: string | null;
  lastName: string | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

const operatorColumns = {
  id: operators.id,
  firstName: operators.firstName,
  lastName: operators.lastName,
  createdAt: operators.createdAt,
  updatedAt: operators.updatedAt,
  deletedAt: operators.deletedAt,
};

/**
 * Inserts operators, all or none: one `INSERT ... SELECT FROM json_each(?)`
 * per chunk of rows (`src/db/json-rows.ts`; one for a typical 1,000-item
 * call), in one batch.
 *
 * @returns the created operators with their new integer ids, in the order given.
 */
export async function insertOperators(
  { db, companyId }: CompanyScope,
  items: readonly { firstName: string | null; lastName: string | null }[],
): Promise<OperatorRow[]> {
  const now = Date.now();
  // Every column in table order (id NULL = autoincrement), as drizzle's insert-select lists them.
  const [first, ...rest] = jsonRowSelects(
    { companyId },
    ["null", "company", "json", "json", "null", "json", "json", "now", "now", "null"],
    items.map((item) => [
      item.firstName,
      item.lastName,
      normalizeForSearch(item.firstName),
      normalizeForSearch(item.lastName),
    ]),
    { now },
  ).map((select) => db.insert(operators).select(select).returning(operatorColumns));
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  // Rows are inserted in item order, so autoincrement ids ascend with it; RETURNING
  // itself promises no order.
  return results.flat().sort((a, b) => a.id - b.id);
}

/** The company's operator with this id, or undefined (deleted, unknown, or another company's). */
export function findOperator(scope: CompanyScope, id: number): Promise<OperatorRow | undefined> {
  return scope.db
    .select(operatorColumns)
    .from(operators)
    .where(notDeleted(scope, operators, eq(operators.id, id)))
    .get();
}

/**
 * Applies a partial update (only the fields present), keeping the search columns in step.
 *
 * @returns false when the operator does not exist for this company (or is deleted).
 */
export async function updateOperator(
  scope: CompanyScope,
  id: number,
  patch: OperatorPatch,
): Promise<boolean> {
  const set: Partial<typeof operators.$inferInsert> = {};
  if (patch.firstName !== undefined) {
    set.firstName = patch.firstName;
    set.firstNameSearch = normalizeForSearch(patch.firstName);
  }
  if (patch.lastName !== undefined) {
    set.lastName = patch.lastName;
    set.lastNameSearch = normalizeForSearch(patch.lastName);
  }
  if (Object.keys(set).length === 0) return (await findOperator(scope, id)) !== undefined;
  set.updatedAt = Date.now();
  const updated = await scope.db
    .update(operators)
    .set(set)
    .where(notDeleted(scope, operators, eq(operators.id, id)))
    .returning({ id: operators.id });
  return updated.length > 0;
}

/**
 * Removes an operator from the roster (soft delete: `deleted_at` set). Production
 * logs and shifts keep their `operator_id`, which no longer resolves: readers
 * must join on `deleted_at IS NULL` and show `operator: null`.
 *
 * @returns false when the operator does not exist for this company (or is already deleted).
 */
export async function softDeleteOperator(scope: CompanyScope, id: number): Promise<boolean> {
  return (await softDelete(scope, operators, eq(operators.id, id))) > 0;
}

/**
 * One page of the company's operators matching every filter given, ordered by
 * first name, then last name (both accent- and case-insensitively, missing names
 * last), then id; with pull sync (src/http/sync.ts), by (`updatedAt`, id).
 */
export function filterOperators(
  scope: CompanyScope,
  filters: OperatorFilters,
  page: PageRequest,
): Promise<Page<OperatorRow>> {
  const conditions: (SQL | undefined)[] = [
    ...syncConditions(operators, filters),
    fuzzyContains(operators.firstNameSearch, filters.firstName?.search),
    fuzzyContains(operators.lastNameSearch, filters.lastName?.search),
  ];
  const where = owned(scope, operators, ...conditions);
  return paginate(
    page,
    scope.db.select({ count: count() }).from(operators).where(where),
    ({ limit, offset }) =>
      scope.db
        .select(operatorColumns)
        .from(operators)
        .where(where)
        .orderBy(
          ...syncOrder(operators, filters, [
            sql`${operators.firstNameSearch} ASC NULLS LAST`,
            sql`${operators.lastNameSearch} ASC NULLS LAST`,
            asc(operators.id),
          ]),
        )
        .limit(limit)
        .offset(offset),
  );
}
