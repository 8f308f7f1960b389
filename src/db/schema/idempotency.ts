/**
 * Idempotency keys and the chunks of their stored answers. Part of the data model (src/db/schema.ts).
 */
import {
  blob,
  foreignKey,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
} from "drizzle-orm/sqlite-core";
import { companies } from "./tenancy";
import { createdAt } from "./timestamps";

/**
 * Responses kept for `Idempotency-Key` retries (src/http/idempotency.ts): one row
 * per credential and key, first `in_flight` (a lock, with its owner's token),
 * then `done` with the stored response, until `expires_at` (24 hours).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** `Principal.credentialId`: keys are scoped to the credential that sent them. */
    credentialId: text("credential_id").notNull(),
    key: text("key").notNull(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    /** Lowercase hex SHA-256 of the method, path, query and canonical JSON body. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_flight", "done"] }).notNull(),
    /** Token of the request holding the lock; null once done. */
    lockToken: text("lock_token"),
    /** When the lock was taken, ms; a lock older than the lock timeout is abandoned. */
    lockedAt: integer("locked_at").notNull(),
    /** The stored response: status, headers (JSON object) and body text. */
    status: integer("status"),
    headers: text("headers"),
    body: text("body"),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.credentialId, t.key] }),
    index("idempotency_keys_expiry_idx").on(t.credentialId, t.expiresAt),
  ],
);

/**
 * A stored response too large for one row (D1 rows hold at most 2 MB): its body,
 * gzip-compressed, in pieces of at most 1 MB (`seq` from 0), written in the same batch
 * that marks the key done and deleted with the key (src/http/idempotency.ts).
 */
export const idempotencyChunks = sqliteTable(
  "idempotency_chunks",
  {
    credentialId: text("credential_id").notNull(),
    key: text("key").notNull(),
    seq: integer("seq").notNull(),
    data: blob("data", { mode: "buffer" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.credentialId, t.key, t.seq] }),
    foreignKey({
      columns: [t.credentialId, t.key],
      foreignColumns: [idempotencyKeys.credentialId, idempotencyKeys.key],
    }).onDelete("cascade"),
  ],
);
