/**
 * The schema of a machine's realtime object (`RealtimeMachine`, ./realtime-machine.ts), step
 * by step (src/db/object-migrations.ts): `meta`, the machine and its running shift instance;
 * the timeline (`segments`, `log_operators`, `assignments`); `sync`, what D1 still lacks; and
 * the outbox of the events it publishes to the machine's stream.
 */
import type { ObjectMigration } from "../db/object-migrations";
import { outboxTables } from "../streams/outbox-migrations";

/** The steps of `RealtimeMachine`, oldest first; a change is a new step at the end. */
export const REALTIME_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  `
  CREATE TABLE IF NOT EXISTS meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    company_id INTEGER NOT NULL,
    machine_id INTEGER NOT NULL,
    instance_id INTEGER,
    instance_name TEXT,
    instance_start INTEGER,
    instance_end INTEGER,
    instance_considered INTEGER,
    revision INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS segments (
    log_id TEXT PRIMARY KEY,
    start INTEGER NOT NULL UNIQUE,
    end INTEGER,
    sku TEXT NOT NULL,
    nominal_speed REAL NOT NULL,
    counting_factor REAL NOT NULL,
    simple_work_order TEXT,
    quantity REAL,
    custom TEXT,
    has_log INTEGER NOT NULL DEFAULT 0,
    projected TEXT
  );
  CREATE TABLE IF NOT EXISTS log_operators (
    log_id TEXT PRIMARY KEY,
    operator_id INTEGER
  );
  CREATE TABLE IF NOT EXISTS assignments (
    operator_id INTEGER PRIMARY KEY,
    first_name TEXT,
    last_name TEXT,
    start INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS sync (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    dirty INTEGER NOT NULL DEFAULT 0,
    marked INTEGER NOT NULL DEFAULT 0,
    refresh_at INTEGER,
    alarm_at INTEGER
  );
  INSERT OR IGNORE INTO sync (id) VALUES (1);
  ` + outboxTables("event_outbox"),
];
