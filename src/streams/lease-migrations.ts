/**
 * The schema of a credential's connection leases object (`ConnectionLeases`,
 * ./lease-object.ts), step by step (src/db/object-migrations.ts): `leases`, each open
 * connection with its expiry and the stream holding it; `revoked`, one row once the
 * credential was revoked.
 */
import { addMissingColumn, type ObjectMigration } from "../db/object-migrations";

/** The steps of `ConnectionLeases`, oldest first; a change is a new step at the end. */
export const LEASE_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them, maybe without `stream`, a column added to it later).
  (sql) => {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS leases (
        id TEXT PRIMARY KEY, expires INTEGER NOT NULL, stream TEXT NOT NULL DEFAULT '');
      CREATE TABLE IF NOT EXISTS revoked (at INTEGER NOT NULL);
    `);
    addMissingColumn(sql, "leases", "stream", "TEXT NOT NULL DEFAULT ''");
  },
];
