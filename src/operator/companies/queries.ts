/**
 * D1 queries of the operator's company routes (./routes.ts): create (and place on
 * a shard) and list companies, their signal retention and their webhook signing secret. The
 * directory holds the authoritative row; each change writes it first (its revision + 1) and
 * then copies it to the company's mirror in its shard (src/db/company-mirror.ts), so a crash
 * between the two leaves the mirror pending, and it is repaired, never silently stale.
 */
import { asc, eq, inArray, sql } from "drizzle-orm";
import { randomToken } from "../../auth/api-keys";
import { type CompanyRow, copyToMirror, markMirrored, mirrorUpsert } from "../../db/company-mirror";
import type { CompanyScope } from "../../db/company-scope";
import { companies } from "../../db/schema";
import { placeCompanies, type ShardState } from "../../db/shard-placement";
import { type DirectoryEnv, directoryDb, shardBindings } from "../../db/shards";
import { logError } from "../../observability/log";
import { DAY_MS } from "../../time/units";

/** How long deliveries carry the old signature after a rotation (docs/webhooks.md). */
const SECRET_OVERLAP_MS = DAY_MS;

/** A new webhook signing secret: `whsec_` + 32 random bytes in base64url (docs/webhooks.md). */
function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/**
 * Sets how long the company's raw signal samples are kept: in the directory's row (revision
 * + 1), then copied to its shard's mirror (which the signal lookups read). Three statements.
 *
 * @param days days kept, or null = forever.
 * @returns the setting now stored, or null when the company does not exist.
 * @throws the shard's error when the copy fails: the directory keeps the setting and the
 *   mirror stays pending until repaired (a retry of the same call also repairs it).
 */
export async function setSignalRetention(
  env: DirectoryEnv,
  scope: CompanyScope,
  days: number | null,
): Promise<{ days: number | null } | null> {
  const row = await directoryDb(env)
    .update(companies)
    .set({ signalRetentionDays: days, revision: sql`revision + 1` })
    .where(eq(companies.id, scope.companyId))
    .returning()
    .get();
  if (!row) return null;
  await copyToMirror(env.DB, scope.db.$client, [row]);
  return { days: row.signalRetentionDays };
}

/**
 * Sets the company's hot window: the days of raw samples each machine's signal store keeps
 * in itself before moving them to the archive (docs/signal-storage.md, "The archive"). Same
 * path as the retention: the directory's row (revision + 1), then the mirror.
 *
 * @returns the setting now stored, or null when the company does not exist.
 * @throws the shard's error when the copy fails (the mirror stays pending until repaired).
 */
export async function setSignalHotWindow(
  env: DirectoryEnv,
  scope: CompanyScope,
  days: number,
): Promise<{ days: number } | null> {
  const row = await directoryDb(env)
    .update(companies)
    .set({ signalHotWindowDays: days, revision: sql`revision + 1` })
    .where(eq(companies.id, scope.companyId))
    .returning()
    .get();
  if (!row) return null;
  await copyToMirror(env.DB, scope.db.$client, [row]);
  return { days: row.signalHotWindowDays };
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
 * one batch (all or none), with their mirrors pending (revision 1, none mirrored); then each
 * shard gets its companies' mirror rows (copies of the directory rows), one batch per shard;
 * then one directory batch records the mirrors written. When a shard refuses, the call's
 * directory rows are removed again, so a failed call leaves no company behind; a crash
 * before that leaves pending companies, which their first use or the cron completes.
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
        revision: 1,
        mirroredRevision: 0,
      })
      .returning(),
  );
  const [first, ...rest] = inserts;
  if (!first) return [];
  const rows = (await directory.batch([first, ...rest])).flat();
  const created = rows.map((row, i) => ({ row, shard: placed[i] ?? "" }));
  const bindings = shardBindings(env);
  const written: CompanyRow[] = [];
  try {
    for (const [shard, binding] of bindings) {
      const mine = created.filter((company) => company.shard === shard).map(({ row }) => row);
      const [head, ...tail] = mine.map((row) => mirrorUpsert(binding, row));
      if (!head) continue;
      await binding.batch([head, ...tail]);
      written.push(...mine);
    }
  } catch (error) {
    await directory.delete(companies).where(
      inArray(
        companies.id,
        created.map(({ row }) => row.id),
      ),
    );
    throw error;
  }
  try {
    await env.DB.batch(written.map((row) => markMirrored(env.DB, row)));
  } catch (error) {
    // The companies exist and their mirrors are written; they only stay marked pending, and
    // their first use (or the cron) records the mirrors again: answering an error here
    // would make the operator create them twice.
    logError("company_mirror_mark_failed", error);
  }
  return created.map(({ row, shard }) => ({
    id: row.id,
    name: row.name,
    timezone: row.timezone,
    shard,
    webhookSecret: row.webhookSecret,
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
 * {@link SECRET_OVERLAP_MS} (deliveries carry both signatures meanwhile). One directory
 * statement moves the current secret to `previous` and sets the new one (revision + 1), so
 * two rotations at once cannot both keep the same old secret; then the row is copied to
 * the shard's mirror, which deliveries read. Three statements.
 *
 * @returns the new secret, or null when the company does not exist.
 * @throws the shard's error when the copy fails: the directory keeps the new secret and the
 *   mirror stays pending until repaired.
 */
export async function rotateWebhookSecret(
  env: DirectoryEnv,
  scope: CompanyScope,
): Promise<string | null> {
  const row = await directoryDb(env)
    .update(companies)
    .set({
      previousWebhookSecret: sql`webhook_secret`,
      webhookSecret: newWebhookSecret(),
      previousWebhookSecretExpiresAt: Date.now() + SECRET_OVERLAP_MS,
      revision: sql`revision + 1`,
    })
    .where(eq(companies.id, scope.companyId))
    .returning()
    .get();
  if (!row) return null;
  await copyToMirror(env.DB, scope.db.$client, [row]);
  return row.webhookSecret;
}
