/**
 * The schema of a company's exports object (`CompanyExports`, ./export-object.ts), step by step
 * (src/db/object-migrations.ts): `meta`, the company; `exports`, each export with where its
 * next file starts; `export_files`, its finished files; `export_left_out`, the signals an export left out.
 */
import type { ObjectMigration } from "../db/object-migrations";

/** The steps of `CompanyExports`, oldest first; a change is a new step at the end. */
export const EXPORT_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  `
  CREATE TABLE IF NOT EXISTS meta (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    company_id INTEGER NOT NULL
  );
  CREATE TABLE IF NOT EXISTS exports (
    id TEXT PRIMARY KEY,
    dataset TEXT NOT NULL,
    format TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    finished_at INTEGER,
    expires_at INTEGER,
    purge_at INTEGER,
    progress REAL NOT NULL DEFAULT 0,
    rows INTEGER NOT NULL DEFAULT 0,
    total_rows INTEGER,
    error TEXT,
    file_start TEXT NOT NULL,
    upload_key TEXT,
    upload_id TEXT,
    bookmark TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    not_before INTEGER NOT NULL DEFAULT 0,
    stepped_at INTEGER NOT NULL DEFAULT 0,
    steps INTEGER NOT NULL DEFAULT 0,
    peak_bytes INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE IF NOT EXISTS export_files (
    export_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    rows INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (export_id, idx)
  );
  CREATE TABLE IF NOT EXISTS export_left_out (
    export_id TEXT NOT NULL,
    signal INTEGER NOT NULL,
    machine_uuid TEXT NOT NULL,
    public_id TEXT NOT NULL,
    name TEXT NOT NULL,
    from_ms INTEGER NOT NULL,
    PRIMARY KEY (export_id, signal)
  );
  `,
];
