/**
 * The schemas of the two stream objects (./stream-object.ts), step by step
 * (src/db/object-migrations.ts): the log (`events`, the live `state`, `meta`), and for a
 * machine's stream the outbox of what it forwards to its company's stream.
 */
import type { ObjectMigration } from "../db/object-migrations";
import { outboxTables } from "./outbox-migrations";

const LOG_TABLES = `
  CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, data TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** The steps of `CompanyStream`, oldest first; a change is a new step at the end. */
export const COMPANY_STREAM_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  LOG_TABLES,
];

/** The steps of `MachineStream`, oldest first; a change is a new step at the end. */
export const MACHINE_STREAM_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  LOG_TABLES + outboxTables("forward_outbox"),
  // Step 2: the stop alerts' state (src/webhooks/stop-alerts.ts): the stops watched, the
  // alerts due, and the feed's own keys.
  `
  CREATE TABLE IF NOT EXISTS alert_stops (
    stop_id INTEGER PRIMARY KEY,
    start_ms INTEGER NOT NULL,
    end_ms INTEGER,
    programmed INTEGER NOT NULL,
    classified INTEGER NOT NULL DEFAULT 0,
    live INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS alert_due (
    stop_id INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    threshold INTEGER NOT NULL,
    due_ms INTEGER,
    PRIMARY KEY (stop_id, event_type, threshold));
  CREATE INDEX IF NOT EXISTS alert_due_at ON alert_due (due_ms) WHERE due_ms IS NOT NULL;
  CREATE TABLE IF NOT EXISTS alert_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  `,
];
