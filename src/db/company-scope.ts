/**
 * Tenant isolation in one place. Every row a company owns carries `company_id`;
 * the conditions that select a company's rows are built here and nowhere else
 * (`test/architecture.test.ts` fails on an `eq(<table>.companyId, …)` written
 * anywhere else), so a query cannot reach another company's rows by forgetting
 * a condition: it either goes through {@link owned} / {@link live} or it does
 * not compile past review of that test.
 *
 * Soft delete is here too: a deleted row keeps its data with `deletedAt` set
 * (and `updatedAt`, so pull sync sees the deletion), and "live" means
 * `deletedAt IS NULL`.
 */
import { and, type Column, eq, isNull, type SQL } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

/** A table whose rows belong to one company. */
export type CompanyTable = SQLiteTable & { companyId: Column };

/** A company's table with soft delete (`deletedAt` and `updatedAt`, ms since the epoch). */
export type SoftDeleteTable = CompanyTable & { deletedAt: Column; updatedAt: Column };

/** The company a request acts for. */
export interface CompanyRef {
  /** The caller's company id (from its credential or the operator path; never from a body). */
  readonly companyId: number;
}

/** The company a request acts for, with the database it reads. */
export interface CompanyScope extends CompanyRef {
  readonly db: Database;
}

/**
 * The scope of one request: the database and the credential's company.
 *
 * @param db the request's Drizzle client.
 * @param companyId the company resolved from the credential.
 */
export function companyScope(db: Database, companyId: number): CompanyScope {
  return { db, companyId };
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
 * {@link owned}, and not soft-deleted.
 *
 * @returns one SQL condition for `.where()` or a join's `on`.
 */
export function live(
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
 * Soft-deletes the company's live rows of `table` that match `conditions`:
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
    .where(live(scope, table, ...conditions));
  return result.meta.changes ?? 0;
}
