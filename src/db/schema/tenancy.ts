/**
 * Companies and their API keys. Part of the data model (src/db/schema.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt } from "./timestamps";

/**
 * A customer company; every credential acts for exactly one. The directory (`DB`) holds the
 * authoritative row, with `shard`; the company's shard holds a mirror of it (same id, no
 * `shard`), which the shard's foreign keys and joins read (src/db/shards.ts).
 */
export const companies = sqliteTable(
  "companies",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    name: text("name").notNull(),
    /** IANA time zone name, for example `Europe/Rome`; shifts are wall-clock times in it. */
    timezone: text("timezone").notNull(),
    /** Webhook signing secret, `whsec_` + 32 random bytes in base64url. */
    webhookSecret: text("webhook_secret").notNull(),
    /** The secret before the last rotation, still signed with until `previousWebhookSecretExpiresAt`. */
    previousWebhookSecret: text("previous_webhook_secret"),
    previousWebhookSecretExpiresAt: integer("previous_webhook_secret_expires_at"),
    /**
     * Days of raw signal samples each machine's signal store keeps; older samples are
     * removed by the store's alarm, their hour and minute rollups stay. Null = kept forever.
     */
    signalRetentionDays: integer("signal_retention_days"),
    /**
     * Days of raw signal samples each machine's signal store keeps in itself (the hot
     * window); the samples of older hours move to the Parquet archive on R2, their hour and
     * minute rollups stay (docs/signal-storage.md, "The archive").
     */
    signalHotWindowDays: integer("signal_hot_window_days").notNull().default(35),
    /**
     * The binding name of the company's shard (`SHARD_0`, ...), in the directory's row only;
     * null in a shard's mirror row.
     */
    shard: text("shard"),
    /**
     * The version of the fields the mirror copies (all but `shard`): the directory adds 1 with
     * every change of them; a mirror row holds the version it was copied from, and a copy never
     * replaces a newer one (src/db/company-mirror.ts).
     */
    revision: integer("revision").notNull().default(0),
    /**
     * In the directory's row: the version the mirror is known to hold. Below `revision` = the
     * mirror is pending (a creation or a change not yet copied, for example cut short by a
     * crash): the next use of the company copies it. Unused in a mirror row.
     */
    mirroredRevision: integer("mirrored_revision").notNull().default(0),
    /**
     * While the company is being moved to another shard: until when (ms since the epoch) its
     * requests wait for the switch instead of using `shard` (src/operator/company-move/move.ts). A
     * mark past its time is ignored, so a move cut short cannot hold the company for ever.
     * Directory row only.
     */
    movingUntil: integer("moving_until"),
    createdAt: createdAt(),
  },
  (t) => [
    // The companies whose mirror is pending, for the cron's repair (empty when all is well).
    index("companies_mirror_pending_idx").on(t.id).where(sql`mirrored_revision < revision`),
  ],
);

/** API keys (`x-api-key`); only the SHA-256 hash of a key is stored. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    /** The first characters of the key, safe to display (for example `pm_4f3a9c1b`). */
    prefix: text("prefix").notNull(),
    /** Lowercase hex SHA-256 of the whole key. */
    keyHash: text("key_hash").notNull(),
    /** JSON array of `section.action` scopes. */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** Requests allowed per `rateLimitPeriodSeconds`; null = the default from settings. */
    rateLimitRequests: integer("rate_limit_requests"),
    rateLimitPeriodSeconds: integer("rate_limit_period_seconds"),
    createdAt: createdAt(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash_unique").on(t.keyHash),
    index("api_keys_company_idx").on(t.companyId),
  ],
);
