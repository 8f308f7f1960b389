/**
 * Lookups shared by operator routes: the company, machine or row a path names, and the
 * shard that holds it. The operator sees every company, so these check existence only; every
 * one goes through the directory (src/db/shards.ts): a company by its directory row, a row by
 * its global id (`locateById`), a signal or a webhook registration by its key
 * (`directory_keys`).
 */

import { type CompanyScope, companyScope, scopeIn } from "../db/company-scope";
import { readDirectory } from "../db/directory-reads";
import { findMachineOfAnyCompany } from "../db/machines";
import {
  type DirectoryEnv,
  type GlobalIdTable,
  locateById,
  locateInEveryShard,
  UnknownCompanyError,
} from "../db/shards";
import { notFound } from "../http/errors";

/**
 * The scope of the company a path names: its shard, from the directory.
 *
 * @throws ApiError 404 `Company not found`.
 */
export async function requireCompanyScope(
  env: DirectoryEnv,
  companyId: number,
): Promise<CompanyScope> {
  try {
    return await companyScope(env, companyId);
  } catch (error) {
    if (error instanceof UnknownCompanyError) throw notFound("Company not found");
    throw error;
  }
}

/**
 * The company and shard of the row of `table` with this global id (`locateById`).
 *
 * @returns the owner's scope, or null when the row is nowhere its company lives.
 */
async function scopeOfRow(
  env: DirectoryEnv,
  table: GlobalIdTable,
  id: number,
): Promise<CompanyScope | null> {
  const found = await locateById(env, table, id);
  return found ? scopeIn(found.db, found.companyId) : null;
}

/**
 * The scope of the company that holds a key unique across shards (a signal's public id, a
 * webhook registration's id), from the directory.
 *
 * @returns the scope, or null when the directory knows no such key.
 */
export async function scopeOfKey(
  env: DirectoryEnv,
  kind: "signal" | "webhook",
  value: string,
): Promise<CompanyScope | null> {
  // A key's company never changes; a key a replica does not know yet is asked at the primary.
  const { value: row } = await readDirectory(
    env.DB,
    (session) =>
      session
        .prepare("SELECT company_id FROM directory_keys WHERE kind = ?1 AND value = ?2")
        .bind(kind, value)
        .first<{ company_id: number }>(),
    (found) => found !== null,
  );
  if (!row) return null;
  try {
    return await companyScope(env, row.company_id);
  } catch (error) {
    if (error instanceof UnknownCompanyError) return null;
    throw error;
  }
}

/**
 * The machine (not deleted) with this id, its company and the company's shard.
 *
 * @returns `{id, companyId, scope}`.
 * @throws ApiError 404 `Machine not found`.
 */
export async function requireMachine(
  env: DirectoryEnv,
  machineId: number,
): Promise<{ id: number; companyId: number; scope: CompanyScope }> {
  const scope = await scopeOfRow(env, "machines", machineId);
  const row = scope ? await findMachineOfAnyCompany(scope.db, machineId) : undefined;
  if (!scope || !row || row.companyId !== scope.companyId) throw notFound("Machine not found");
  return { id: row.id, companyId: row.companyId, scope };
}

/**
 * The shard of the row of `table` with this global id.
 *
 * @throws ApiError 404 with `message` when no company holds it.
 */
export async function requireRowScope(
  env: DirectoryEnv,
  table: GlobalIdTable,
  id: number,
  message: string,
): Promise<CompanyScope> {
  const scope = await scopeOfRow(env, table, id);
  if (!scope) throw notFound(message);
  return scope;
}

/**
 * The shard of the company holding a signal or a webhook registration.
 *
 * @throws ApiError 404 with `message` when the directory knows no such key.
 */
export async function requireKeyScope(
  env: DirectoryEnv,
  kind: "signal" | "webhook",
  value: string,
  message: string,
): Promise<CompanyScope> {
  const scope = await scopeOfKey(env, kind, value.toLowerCase());
  if (!scope) throw notFound(message);
  return scope;
}

/**
 * The shard of the company holding a webhook delivery (every shard asked: `locateInEveryShard`).
 *
 * @throws ApiError 404 `Delivery not found`.
 */
export async function requireDeliveryScope(
  env: DirectoryEnv,
  deliveryId: string,
): Promise<CompanyScope> {
  const found = await locateInEveryShard(env, "webhook_deliveries", deliveryId);
  if (!found) throw notFound("Delivery not found");
  return scopeIn(found.db, found.companyId);
}
