/**
 * The schema of a machine's signal store (`SignalStore`, ./signal-store.ts), step by step
 * (src/db/object-migrations.ts): the samples and their archive (src/resources/signals/
 * signal-migrations.ts), stop detection's tables (`detect_hours`, the hour summaries;
 * `detect_pending`, ranges to evaluate; `detect_state`, one row, with the settings the summaries were made with; `recorded_stops` and
 * `detected_stops`), and the outbox of the events it publishes.
 */
import type { ObjectMigration } from "../db/object-migrations";
import { signalTables } from "../resources/signals/signal-migrations";
import { outboxTables } from "../streams/outbox-migrations";

/** The steps of the signal store, oldest first; a change is a new step at the end. */
export const SIGNAL_STORE_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS` and the
  // archive's columns when missing: an object stored then has them, or some of them).
  (sql) => {
    signalTables(sql);
    sql.exec(`
    CREATE TABLE IF NOT EXISTS detect_hours (
      rule INTEGER NOT NULL,
      hour INTEGER NOT NULL,
      summary TEXT NOT NULL,
      variant INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (rule, hour)
    );
    CREATE TABLE IF NOT EXISTS detect_pending (
      id INTEGER PRIMARY KEY,
      start INTEGER NOT NULL,
      end INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS detect_state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      company_id INTEGER,
      machine_id INTEGER,
      count_signal INTEGER,
      settings TEXT,
      plan TEXT,
      recorded_at INTEGER,
      wake_at INTEGER
    );
    INSERT OR IGNORE INTO detect_state (id) VALUES (1);
    CREATE TABLE IF NOT EXISTS recorded_stops (
      id INTEGER PRIMARY KEY,
      start INTEGER NOT NULL,
      end INTEGER,
      dismissed INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS recorded_stops_start ON recorded_stops (start);
    CREATE TABLE IF NOT EXISTS detected_stops (
      key TEXT PRIMARY KEY,
      start INTEGER NOT NULL,
      end INTEGER,
      removed INTEGER NOT NULL DEFAULT 0,
      stop_id INTEGER,
      synced TEXT,
      dirty INTEGER NOT NULL DEFAULT 1
    );
    CREATE INDEX IF NOT EXISTS detected_stops_start ON detected_stops (start);
    CREATE INDEX IF NOT EXISTS detected_stops_dirty ON detected_stops (dirty) WHERE dirty = 1;
    CREATE INDEX IF NOT EXISTS detected_stops_open ON detected_stops (start) WHERE end IS NULL AND removed = 0;
    `);
    sql.exec(outboxTables("event_outbox"));
  },
  // Step 2: the detected downtime each recorded stop takes in (one breakdown, one stop:
  // docs/machine-state.md), with what D1 holds of it.
  `
  CREATE TABLE IF NOT EXISTS recorded_merges (
    id INTEGER PRIMARY KEY,
    want_start INTEGER,
    want_end INTEGER,
    synced TEXT,
    dirty INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX IF NOT EXISTS recorded_merges_want ON recorded_merges (want_start);
  CREATE INDEX IF NOT EXISTS recorded_merges_dirty ON recorded_merges (dirty) WHERE dirty = 1;
  `,
  // Step 3: per rule, the settings the recent hour summaries were made with (JSON, null:
  // unknown), so that a change of settings they do not depend on (the threshold) evaluates
  // the stored summaries again instead of decoding the samples to make the same ones.
  "ALTER TABLE detect_state ADD COLUMN summarized TEXT",
];
