/**
 * The operators' table as the shared queries read it (../crud-queries.ts: find, search,
 * update, soft delete), and the insert of a create. Every query is scoped to a company.
 *
 * Removing an operator is a soft delete: production logs and shifts keep their
 * `operator_id`, which no longer resolves; readers join on `deleted_at IS NULL` and show
 * `operator: null`.
 */
import { asc, sql } from "drizzle-orm";
import type { CompanyScope } from "../../db/company-scope";
import { jsonRowSelects } from "../../db/json-rows";
import { operators } from "../../db/schema";
import { fuzzyContains, normalizeForSearch } from "../../http/search";
import type { CrudTable } from "../crud-queries";
import type { OperatorFilters } from "./schemas";

/** An operator as the API shows it (instants in ms since the epoch). */
interface OperatorRow {
  id: number;
  firstName: string | null;
  lastName: string | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

const { id, firstName, lastName, createdAt, updatedAt, deletedAt } = operators;
const columns = { id, firstName, lastName, createdAt, updatedAt, deletedAt };

/**
 * The operators: searched fuzzily on first and last name (their `*_search` twins), ordered
 * by first name, then last name (both accent- and case-insensitively, missing names last),
 * then id.
 */
export const operatorTable: CrudTable<OperatorRow, OperatorFilters> = {
  table: operators,
  select: (db) => db.select(columns).from(operators),
  filters: (filters) => [
    fuzzyContains(operators.firstNameSearch, filters.firstName?.search),
    fuzzyContains(operators.lastNameSearch, filters.lastName?.search),
  ],
  order: [
    sql`${operators.firstNameSearch} ASC NULLS LAST`,
    sql`${operators.lastNameSearch} ASC NULLS LAST`,
    asc(operators.id),
  ],
  searchTwins: { firstName: "firstNameSearch", lastName: "lastNameSearch" },
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
  ).map((select) => db.insert(operators).select(select).returning(columns));
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  // Rows are inserted in item order, so autoincrement ids ascend with it; RETURNING
  // itself promises no order.
  return results.flat().sort((a, b) => a.id - b.id);
}
