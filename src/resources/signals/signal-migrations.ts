/**
 * The signal store's tables (./store.ts), for the first step of the deployed store's schema
 * (src/db/object-migrations.ts; the class and its steps: src/machine-state/): `blocks`, one
 * row per signal and hour with its rollup, samples and archive object; `settings` (one row),
 * the retention, hot window and archive place; `archive_objects`, the catalog of the
 * signal's objects in R2.
 */
import { addMissingColumn } from "../../db/object-migrations";

/**
 * Creates the store's tables as the code before the runner left them (`IF NOT EXISTS`, and
 * the archive's five columns, which that code added to stores made before the archive).
 *
 * @param sql the object's database.
 */
export function signalTables(sql: SqlStorage): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS blocks (
      signal_id INTEGER NOT NULL,
      hour INTEGER NOT NULL,
      n INTEGER NOT NULL,
      sum REAL NOT NULL,
      lo REAL NOT NULL,
      hi REAL NOT NULL,
      minutes BLOB,
      samples BLOB,
      PRIMARY KEY (signal_id, hour)
    );
    CREATE TABLE IF NOT EXISTS settings (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      retention_ms INTEGER
    );
    INSERT OR IGNORE INTO settings (id, retention_ms) VALUES (1, NULL);
    CREATE TABLE IF NOT EXISTS archive_objects (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      signal_id INTEGER NOT NULL,
      kind TEXT NOT NULL,
      start INTEGER NOT NULL,
      "end" INTEGER NOT NULL,
      key TEXT NOT NULL UNIQUE,
      n INTEGER NOT NULL,
      bytes INTEGER NOT NULL,
      first INTEGER NOT NULL
    );
  `);
  addMissingColumn(sql, "blocks", "archive_id", "INTEGER");
  addMissingColumn(sql, "blocks", "archive_stale", "INTEGER NOT NULL DEFAULT 0");
  addMissingColumn(sql, "settings", "hot_window_ms", "INTEGER");
  addMissingColumn(sql, "settings", "place_company", "INTEGER");
  addMissingColumn(sql, "settings", "place_machine", "INTEGER");
}
