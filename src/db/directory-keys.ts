/**
 * Keys unique across every shard (machine uuids, signal public ids, webhook registration
 * ids), held by the directory (`directory_keys`, ./schema/directory.ts): each shard's unique
 * index only sees its own rows.
 */
import { ownedText } from "./company-scope";
import { inJsonListText } from "./json-list";
import type { DirectoryEnv } from "./shards";

/** What a key names. */
type DirectoryKeyKind = "machine" | "signal" | "webhook";

/**
 * Takes keys for a company, all or none (one statement), before the rows that carry them are
 * written to its shard: a key another row holds, in any shard, is refused here.
 *
 * @param values the keys (already in their stored case).
 * @returns false when one of them is taken (nothing taken then).
 */
async function reserveKeys(
  env: DirectoryEnv,
  kind: DirectoryKeyKind,
  companyId: number,
  values: readonly string[],
): Promise<boolean> {
  if (values.length === 0) return true;
  try {
    await env.DB.prepare(
      `INSERT INTO directory_keys (kind, value, company_id)
       SELECT ?1, value, CAST(?2 AS INTEGER) FROM json_each(?3)`,
    )
      .bind(kind, companyId, JSON.stringify(values))
      .run();
    return true;
  } catch (error) {
    if (String(error).includes("UNIQUE constraint failed")) return false;
    throw error;
  }
}

/**
 * Gives keys back, when the shard refused the rows that were to carry them. Best effort: a
 * key left behind by a crash between the two writes only keeps that value unusable.
 */
async function releaseKeys(
  env: DirectoryEnv,
  kind: DirectoryKeyKind,
  companyId: number,
  values: readonly string[],
): Promise<void> {
  if (values.length === 0) return;
  await env.DB.prepare(
    `DELETE FROM directory_keys WHERE kind = ?1 AND ${ownedText("?2")}
       AND ${inJsonListText("value", "?3")}`,
  )
    .bind(kind, companyId, JSON.stringify(values))
    .run();
}

/**
 * Writes rows under keys: takes the keys, runs the shard write, and gives the keys back when
 * it fails.
 *
 * @returns the write's result, or `"taken"` when a key is held by another row.
 */
export async function withKeys<T>(
  env: DirectoryEnv,
  kind: DirectoryKeyKind,
  companyId: number,
  values: readonly string[],
  write: () => Promise<T>,
): Promise<T | "taken"> {
  if (!(await reserveKeys(env, kind, companyId, values))) return "taken";
  try {
    return await write();
  } catch (error) {
    await releaseKeys(env, kind, companyId, values);
    throw error;
  }
}
