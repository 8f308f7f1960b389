/**
 * Lookups shared by operator routes: the company or machine a path names.
 * The operator sees every company, so these check existence only.
 */

import { eq } from "drizzle-orm";
import type { Database } from "../db/client";
import type { CompanyScope } from "../db/company-scope";
import { findMachineOfAnyCompany } from "../db/machines";
import { companies } from "../db/schema";
import { notFound } from "../http/errors";

/**
 * The company with this id.
 *
 * @returns `{id}`.
 * @throws ApiError 404 `Company not found`.
 */
export async function requireCompany(scope: CompanyScope): Promise<{ id: number }> {
  const { db, companyId } = scope;
  const row = await db
    .select({ id: companies.id })
    .from(companies)
    .where(eq(companies.id, companyId))
    .get();
  if (!row) throw notFound("Company not found");
  return row;
}

/**
 * The machine (not deleted) with this id, and its company.
 *
 * @returns `{id, companyId}`.
 * @throws ApiError 404 `Machine not found`.
 */
export async function requireMachine(
  db: Database,
  machineId: number,
): Promise<{ id: number; companyId: number }> {
  const row = await findMachineOfAnyCompany(db, machineId);
  if (!row) throw notFound("Machine not found");
  return { id: row.id, companyId: row.companyId };
}
