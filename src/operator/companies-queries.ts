/**
 * D1 queries of the operator's company routes (./companies-routes.ts): create (and place on
 * a shard) and list companies, their signal retention and their webhook signing secret. The
 * directory holds the authoritative row; the company's shard a mirror that every company
 * update writes too (src/db/shards.ts).
 */
import { asc, eq, inArray } from "drizzle-orm";
import { randomToken } from "../auth/api-keys";
import { createDb } from "../db/client";
import type { CompanyScope } from "../db/company-scope";
import { companies } from "../db/schema";
import { placeCompanies, type ShardState } from "../db/shard-placement";
import { type DirectoryEnv, directoryDb, shardBindings } from "../db/shards";

/** How long deliveries carry the old signature after a rotation (docs/webhooks.md). */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** A new webhook signing secret: `whsec_` + 32 random bytes in base64url (docs/webhooks.md). */
export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/**
 * Sets how long the company's raw signal samples are kept: in its shard's row (which the
 * signal lookups read) and in the directory's.
 *
 * @param days days kept, or null = forever.
 * @returns the setting now stored, or null when the company does not exist.
 */
export async function setSignalRetention(
  env: DirectoryEnv,
  scope: CompanyScope,
  days: number | null,
): Promise<{ days: number | null } | null> {
  const row = await scope.db
    .update(companies)
    .set({ signalRetentionDays: days })
    .where(eq(companies.id, scope.companyId))
    .returning({ days: companies.signalRetentionDays })
    .get();
  if (!row) return null;
  await directoryDb(env)
    .update(companies)
    .set({ signalRetentionDays: days })
    .where(eq(companies.id, scope.companyId));
  return row;
}

/** A company to create: name, IANA time zone, and the shard the operator names, if any. */
export interface CompanyInput {
  name: string;
  timezone: string;
  shard?: string | undefined;
}

/** A created company as the operator API shows it, with its secret. */
export interface CreatedCompany {
  id: number;
  name: string;
  timezone: string;
  shard: string;
  webhookSecret: string;
}

/**
 * Creates companies, each with a new webhook signing secret, and places each on a shard
 * (`placeCompanies`: the one named, else the emptiest). The directory rows come first, in
 * one batch (all or none), and give the ids; then each shard gets its companies' mirror rows
 * (same id), one batch per shard. When a shard refuses, the call's directory rows are
 * removed again, so a failed call leaves no company behind.
 *
 * @param shards the placeable shards (`placeableShards`), the named ones checked against them.
 * @returns the created companies in order, with their shard and secret.
 */
export async function createCompanies(
  env: DirectoryEnv,
  shards: readonly ShardState[],
  items: readonly CompanyInput[],
): Promise<CreatedCompany[]> {
  const directory = directoryDb(env);
  const placed = placeCompanies(
    shards,
    items.map((item) => item.shard),
  );
  const inserts = items.map((item, i) =>
    directory
      .insert(companies)
      .values({
        name: item.name,
        timezone: item.timezone,
        webhookSecret: newWebhookSecret(),
        shard: placed[i] ?? null,
      })
      .returning({
        id: companies.id,
        name: companies.name,
        timezone: companies.timezone,
        webhookSecret: companies.webhookSecret,
        createdAt: companies.createdAt,
      }),
  );
  const [first, ...rest] = inserts;
  if (!first) return [];
  const rows = (await directory.batch([first, ...rest])).flat();
  const created = rows.map((row, i) => ({ ...row, shard: placed[i] ?? "" }));
  const bindings = shardBindings(env);
  try {
    for (const [shard, binding] of bindings) {
      const mine = created.filter((company) => company.shard === shard);
      if (mine.length === 0) continue;
      const db = createDb(binding);
      const [head, ...tail] = mine.map(({ shard: _shard, ...mirror }) =>
        db.insert(companies).values(mirror),
      );
      if (head) await db.batch([head, ...tail]);
    }
  } catch (error) {
    await directory.delete(companies).where(
      inArray(
        companies.id,
        created.map((company) => company.id),
      ),
    );
    throw error;
  }
  return created.map(({ id, name, timezone, shard, webhookSecret }) => ({
    id,
    name,
    timezone,
    shard,
    webhookSecret,
  }));
}

/** Every company by id, with its shard, without secrets (the directory's rows). */
export function listCompanies(
  env: DirectoryEnv,
): Promise<{ id: number; name: string; timezone: string; shard: string | null }[]> {
  return directoryDb(env)
    .select({
      id: companies.id,
      name: companies.name,
      timezone: companies.timezone,
      shard: companies.shard,
    })
    .from(companies)
    .orderBy(asc(companies.id))
    .all();
}

/**
 * Gives the company a new webhook signing secret; the old one stays valid for
 * {@link SECRET_OVERLAP_MS} (deliveries carry both signatures meanwhile). Written to the
 * shard's row (which deliveries read) and the directory's.
 *
 * @returns the new secret, or null when the company does not exist.
 */
export async function rotateWebhookSecret(
  env: DirectoryEnv,
  scope: CompanyScope,
): Promise<string | null> {
  const { db, companyId } = scope;
  const current = await db
    .select({ secret: companies.webhookSecret })
    .from(companies)
    .where(eq(companies.id, companyId))
    .get();
  if (!current) return null;
  const change = {
    webhookSecret: newWebhookSecret(),
    previousWebhookSecret: current.secret,
    previousWebhookSecretExpiresAt: Date.now() + SECRET_OVERLAP_MS,
  };
  await db.update(companies).set(change).where(eq(companies.id, companyId));
  await directoryDb(env).update(companies).set(change).where(eq(companies.id, companyId));
  return change.webhookSecret;
}
