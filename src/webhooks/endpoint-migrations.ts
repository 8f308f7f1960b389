/**
 * The schema of a webhook's delivery object (`WebhookEndpoint`, ./endpoint-deliverer.ts), step
 * by step (src/db/object-migrations.ts): `owner`, the registration's company (one row), which
 * names the shard of its deliveries; `due`, each delivery held with when it is due.
 */
import type { ObjectMigration } from "../db/object-migrations";

/** The steps of `WebhookEndpoint`, oldest first; a change is a new step at the end. */
export const ENDPOINT_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  `
  CREATE TABLE IF NOT EXISTS owner (company_id INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS due (delivery_id TEXT PRIMARY KEY, due_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS due_at_idx ON due (due_at);
  `,
];
