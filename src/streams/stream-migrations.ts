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
];
