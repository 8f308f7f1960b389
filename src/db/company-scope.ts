/**
 * Tenant isolation and soft delete in one place: every condition that selects a company's
 * rows is built here ({@link owned}, {@link notDeleted}; for SQL text {@link ownedSql},
 * {@link ownedText}) and nowhere else (test/architecture.test.ts fails on one written
 * elsewhere). A query reaches a company's database only through a {@link CompanyScope}, which
 * picks its shard. docs/architecture.md ("Tenant isolation and soft delete").
 */
import { and, type Column, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";
import { companies } from "./schema";
import { companyDb, type DirectoryEnv, UnknownCompanyError } from "./shards";

/** A table whose rows belong to one company. */
type CompanyTable = SQLiteTable & { companyId: Column };

/** A company's table with soft delete (`deletedAt` and `updatedAt`, ms since the epoch). */
export type SoftDeleteTable = CompanyTable & { deletedAt: Column; updatedAt: Column };

/** The company a request acts for. */
export interface CompanyRef {
  /** The caller's company id (from its credential or the operator path; never from a body). */
  readonly companyId: number;
}

/**
 * The company a request acts for, with the database it reads: the one shape in which a
 * query reaches a company's rows. Every query and report takes it (never a database and a
 * company id apart), so the place that picks the database is this object.
 */
export interface CompanyScope extends CompanyRef {
  readonly db: Database;
}

/**
 * A {@link CompanyScope} that also carries what answers show of the company, read once:
 * from the credential (`scopeOf` in src/app-env.ts) or from the company's row
 * ({@link loadNamedScope}).
 */
export interface NamedScope extends CompanyScope {
  /** The company's name, as answers show it in `company.name`. */
  readonly companyName: string;
  /** The company's IANA time zone. */
  readonly timezone: string;
}

/**
 * The scope of a company: its shard and the company. A public request gets its scope from
 * `scopeOf` (src/app-env.ts); this is for the operator API (the company of its path) and for
 * work outside a request that knows a company id (a Durable Object's key, a queue message).
 * The shard comes from the directory through `companyDb` (./shards.ts), the one routing
 * function.
 *
 * @param env the bindings (`DB`, the directory; the shards are found by name).
 * @param companyId the company.
 * @throws UnknownCompanyError when the company is not in the directory.
 */
export async function companyScope(env: DirectoryEnv, companyId: number): Promise<CompanyScope> {
  return { db: await companyDb(env, companyId), companyId };
}

/**
 * The scope of a company in a database already known to be its shard: one that came from a
 * scope of the same company, or from `locateById` (./shards.ts). Never a way to choose a
 * database: that is {@link companyScope}.
 *
 * @param db the client of the company's shard.
 * @param companyId the company.
 */
export function scopeIn(db: Database, companyId: number): CompanyScope {
  return { db, companyId };
}

/**
 * The named scope of a company read from its row in its shard (a directory read, cached,
 * and one statement), for work that runs outside a request (the event streams).
 *
 * @param env the bindings (`DB`).
 * @param companyId the company.
 * @returns the scope, or null when the company does not exist.
 */
export async function loadNamedScope(
  env: DirectoryEnv,
  companyId: number,
): Promise<NamedScope | null> {
  let db: Database;
  try {
    db = await companyDb(env, companyId);
  } catch (error) {
    if (error instanceof UnknownCompanyError) return null;
    throw error;
  }
  const [row] = await db
    .select({ name: companies.name, timezone: companies.timezone })
    .from(companies)
    .where(eq(companies.id, companyId));
  return row ? { db, companyId, companyName: row.name, timezone: row.timezone } : null;
}

/**
 * The condition "this company's rows of `table`" and every other condition given.
 *
 * @param scope the request's company.
 * @param table a company-owned table.
 * @param conditions further conditions (undefined ones are skipped, as `and` does).
 * @returns one SQL condition for `.where()` or a join's `on`.
 */
export function owned(
  scope: CompanyRef,
  table: CompanyTable,
  ...conditions: (SQL | undefined)[]
): SQL {
  // `and` with a first defined argument never yields undefined.
  return and(eq(table.companyId, scope.companyId), ...conditions) as SQL;
}

/**
 * A company column as written in raw SQL: `company_id`, or qualified by a table alias
 * (`l.company_id`). A leading `+` keeps SQLite from choosing that column's index, where a
 * statement's plan must seek by another one (the unary plus changes no value).
 */
type CompanyColumnText = `${"" | "+"}${"" | `${string}.`}company_id`;

/**
 * The condition "this company's rows" in a statement written as SQL text through
 * drizzle's `sql` template (an `INSERT ... SELECT`, a correlated subquery, a
 * `json_each` scan), the company bound as a parameter.
 *
 * @param scope the company.
 * @param column the company column as the statement names it (default `company_id`).
 * @returns `<column> = ?` with the company id bound.
 */
export function ownedSql(scope: CompanyRef, column: CompanyColumnText = "company_id"): SQL {
  return sql`${sql.raw(column)} = ${scope.companyId}`;
}

/**
 * The condition "this company's rows" as the text of a D1 prepared statement (code that
 * runs beside D1 without drizzle: the realtime objects, the event streams), the company
 * bound by the caller at parameter `param`. D1 binds a JavaScript number as REAL, so the
 * parameter is cast to INTEGER: the comparison then seeks the integer index.
 *
 * @param param the statement's parameter that carries the company id (`?1`).
 * @param column the company column as the statement names it (default `company_id`).
 * @returns `<column> = CAST(<param> AS INTEGER)`.
 */
export function ownedText(param: `?${number}`, column: CompanyColumnText = "company_id"): string {
  return `${column} = CAST(${param} AS INTEGER)`;
}

/**
 * The condition "this company's rows" as SQL text, the company given by an SQL expression
 * rather than a parameter: a trigger's `NEW.company_id`, a row of another table.
 *
 * @param expression the company's SQL expression (for example `NEW.company_id`).
 * @param column the company column as the statement names it (default `company_id`).
 * @returns `<column> = <expression>`.
 */
export function ownedBy(expression: string, column: CompanyColumnText = "company_id"): string {
  return `${column} = ${expression}`;
}

/**
 * {@link owned}, and not soft-deleted.
 *
 * @returns one SQL condition for `.where()` or a join's `on`.
 */
export function notDeleted(
  scope: CompanyRef,
  table: CompanyTable & { deletedAt: Column },
  ...conditions: (SQL | undefined)[]
): SQL {
  return owned(scope, table, isNull(table.deletedAt), ...conditions);
}

/**
 * The join condition "same company": a row of `joined` belongs to the company of the
 * row of `base` it is joined to (with the base row itself scoped by {@link owned}).
 *
 * @returns `joined.company_id = base.company_id`.
 */
export function sameCompany(joined: CompanyTable, base: CompanyTable): SQL {
  return eq(joined.companyId, base.companyId);
}

/**
 * The columns a soft delete sets: `deletedAt` now, and `updatedAt` now where the table
 * has one (pull sync finds a deletion by its `updatedAt`). For the operator API, whose
 * routes address rows by their global id; a company's request uses {@link softDelete}.
 *
 * @param table the table whose rows are deleted.
 * @param now ms since the epoch (default: the current time).
 * @returns the object for drizzle's `.set()`.
 */
export function softDeleted<T extends SQLiteTable & { deletedAt: Column }>(
  table: T,
  now: number = Date.now(),
): Partial<T["$inferInsert"]> {
  const stamp: Record<string, number> = { deletedAt: now };
  if ("updatedAt" in table) stamp.updatedAt = now;
  return stamp as Partial<T["$inferInsert"]>;
}

/**
 * Soft-deletes the company's rows of `table` not deleted yet that match `conditions`:
 * sets `deletedAt` and `updatedAt` to now (one statement).
 *
 * @param conditions which rows (for example `eq(table.id, id)`).
 * @returns how many rows were deleted (0 when none matched: unknown, another
 *   company's, or already deleted).
 */
export async function softDelete<T extends SoftDeleteTable>(
  scope: CompanyScope,
  table: T,
  ...conditions: SQL[]
): Promise<number> {
  const result = await scope.db
    .update(table)
    .set(softDeleted(table))
    .where(notDeleted(scope, table, ...conditions));
  return result.meta.changes ?? 0;
}
