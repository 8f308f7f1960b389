/**
 * The SQLite tables of a company's exports object (./export-object.ts): each export with
 * where its next file starts, and its finished files. Everything a restart needs is here;
 * the file being written lives in memory and is started again after a restart.
 */
import type { ExportFileRecord, ExportRecord, LeftOutRecord } from "./exports-rpc";
import type { ExportDataset, ExportFormat, ExportState } from "./schemas";
import type { Cursor, ExportSpec } from "./sources";

const SCHEMA = `
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
`;

/** Where a file starts: the batch at `cursor`, less its first `skip` rows. */
export interface FileStart {
  cursor: Cursor;
  skip: number;
}

/** An unfinished export, as a step needs it. */
export interface ActiveExport {
  id: string;
  spec: ExportSpec;
  state: ExportState;
  rows: number;
  totalRows: number | null;
  fileStart: FileStart;
  filesDone: number;
  upload: { key: string; uploadId: string } | null;
  bookmark: string | null;
  failures: number;
}

type Row = Record<string, SqlStorageValue>;

/** The states whose files may still change. */
const ACTIVE = "('queued', 'running')";

export class ExportStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

  /** The company this object serves, once it has been told. */
  companyId(): number | null {
    const row = this.sql.exec<{ company_id: number }>("SELECT company_id FROM meta").toArray()[0];
    return row?.company_id ?? null;
  }

  /** Keeps the company (the first call of the object names it; a restart reads it here). */
  rememberCompany(companyId: number): void {
    this.sql.exec("INSERT OR IGNORE INTO meta (id, company_id) VALUES (1, ?)", companyId);
  }

  /** How many exports are queued or running. */
  activeCount(): number {
    return this.sql
      .exec<{ n: number }>(`SELECT count(*) AS n FROM exports WHERE state IN ${ACTIVE}`)
      .one().n;
  }

  /** Adds a queued export. */
  insert(id: string, spec: ExportSpec, totalRows: number | null, start: FileStart): void {
    this.sql.exec(
      `INSERT INTO exports (id, dataset, format, spec, state, created_at, total_rows, file_start)
       VALUES (?, ?, ?, ?, 'queued', ?, ?, ?)`,
      id,
      spec.dataset,
      spec.format,
      JSON.stringify(spec),
      spec.now,
      totalRows,
      JSON.stringify(start),
    );
  }

  /** One export as the API shows it; `openRows` adds the rows of the file being written. */
  record(id: string, openRows = 0): ExportRecord | null {
    const row = this.sql
      .exec<Row>(
        `SELECT id, dataset, format, state, created_at, finished_at, expires_at, progress, rows,
           total_rows, error, steps, peak_bytes FROM exports WHERE id = ?`,
        id,
      )
      .toArray()[0];
    if (!row) return null;
    const state = row.state as ExportState;
    const files =
      state === "expired" || state === "failed"
        ? []
        : this.sql
            .exec<{ name: string; rows: number; bytes: number }>(
              "SELECT name, rows, bytes FROM export_files WHERE export_id = ? ORDER BY idx",
              id,
            )
            .toArray()
            .map((f): ExportFileRecord => ({ name: f.name, rows: f.rows, bytes: f.bytes }));
    const leftOut =
      state === "expired"
        ? []
        : this.sql
            .exec<Row>(
              `SELECT machine_uuid, public_id, name, from_ms FROM export_left_out
               WHERE export_id = ? ORDER BY signal`,
              id,
            )
            .toArray()
            .map(
              (r): LeftOutRecord => ({
                machineUuid: r.machine_uuid as string,
                publicId: r.public_id as string,
                name: r.name as string,
                from: r.from_ms as number,
              }),
            );
    return {
      id: row.id as string,
      dataset: row.dataset as ExportDataset,
      format: row.format as ExportFormat,
      state,
      createdAt: row.created_at as number,
      finishedAt: (row.finished_at as number | null) ?? null,
      expiresAt: (row.expires_at as number | null) ?? null,
      progress: row.progress as number,
      rows: (row.rows as number) + (state === "running" ? openRows : 0),
      totalRows: (row.total_rows as number | null) ?? null,
      error: (row.error as string | null) ?? null,
      files,
      leftOut,
      steps: row.steps as number,
      peakBytes: row.peak_bytes as number,
    };
  }

  /**
   * The unfinished export whose turn it is (round robin: the one that stepped longest ago),
   * among those not waiting after a failed step.
   */
  nextToRun(now: number): ActiveExport | null {
    const row = this.sql
      .exec<Row>(
        `SELECT id FROM exports WHERE state IN ${ACTIVE} AND not_before <= ?
         ORDER BY stepped_at, created_at, id LIMIT 1`,
        now,
      )
      .toArray()[0];
    return row ? this.active(row.id as string) : null;
  }

  /** An unfinished export, as a step reads it. */
  active(id: string): ActiveExport | null {
    const row = this.sql
      .exec<Row>(
        `SELECT e.id, e.spec, e.state, e.rows, e.total_rows, e.file_start, e.upload_key,
           e.upload_id, e.bookmark, e.failures,
           (SELECT count(*) FROM export_files f WHERE f.export_id = e.id) AS files_done
         FROM exports e WHERE e.id = ? AND e.state IN ${ACTIVE}`,
        id,
      )
      .toArray()[0];
    if (!row) return null;
    return {
      id: row.id as string,
      spec: JSON.parse(row.spec as string) as ExportSpec,
      state: row.state as ExportState,
      rows: row.rows as number,
      totalRows: (row.total_rows as number | null) ?? null,
      fileStart: JSON.parse(row.file_start as string) as FileStart,
      filesDone: row.files_done as number,
      upload:
        row.upload_key && row.upload_id
          ? { key: row.upload_key as string, uploadId: row.upload_id as string }
          : null,
      bookmark: (row.bookmark as string | null) ?? null,
      failures: row.failures as number,
    };
  }

  /** The earliest instant an unfinished export may step again; null when none is left. */
  nextStepAt(): number | null {
    const row = this.sql
      .exec<{ at: number | null }>(
        `SELECT min(not_before) AS at FROM exports WHERE state IN ${ACTIVE}`,
      )
      .one();
    return row.at ?? null;
  }

  /** The earliest expiry or purge still to come; null when none. */
  nextExpiryAt(): number | null {
    const row = this.sql
      .exec<{ at: number | null }>(
        `SELECT min(CASE WHEN state IN ('succeeded', 'failed') THEN expires_at ELSE purge_at END)
           AS at FROM exports WHERE state IN ('succeeded', 'failed', 'expired')`,
      )
      .one();
    return row.at ?? null;
  }

  /**
   * Records that a step ran: its progress, its session's bookmark, the most bytes its file
   * held in memory, and that it is running (or, `ended`, that it was the last one).
   */
  stepped(
    id: string,
    now: number,
    step: { progress: number; bookmark: string | null; heldBytes: number; ended?: boolean },
  ): void {
    this.sql.exec(
      `UPDATE exports SET state = CASE WHEN ? THEN state ELSE 'running' END, stepped_at = ?,
         progress = CASE WHEN ? THEN progress ELSE ? END, bookmark = coalesce(?, bookmark),
         failures = 0, not_before = 0, steps = steps + 1, peak_bytes = max(peak_bytes, ?)
       WHERE id = ?`,
      step.ended ? 1 : 0,
      now,
      step.ended ? 1 : 0,
      step.progress,
      step.bookmark,
      step.heldBytes,
      id,
    );
  }

  /**
   * Records a signal the export stopped reading, from `from` (ms) on. A step that read it
   * again (after a restart or a failed step, from an earlier point of a file written again)
   * keeps the earlier instant: the files hold its points before that one only.
   *
   * @param signal its index in the export's selection.
   */
  leftOut(id: string, signal: number, record: LeftOutRecord): void {
    this.sql.exec(
      `INSERT INTO export_left_out (export_id, signal, machine_uuid, public_id, name, from_ms)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (export_id, signal) DO UPDATE SET from_ms = min(from_ms, excluded.from_ms)`,
      id,
      signal,
      record.machineUuid,
      record.publicId,
      record.name,
      record.from,
    );
  }

  /** Records the multipart upload of the file being written (aborted if a restart abandons it). */
  uploadStarted(id: string, key: string, uploadId: string): void {
    this.sql.exec(
      "UPDATE exports SET upload_key = ?, upload_id = ? WHERE id = ?",
      key,
      uploadId,
      id,
    );
  }

  /** Records a finished file and where the next one starts, in one transaction. */
  fileDone(id: string, file: ExportFileRecord & { index: number }, next: FileStart | null): void {
    this.sql.exec(
      "INSERT INTO export_files (export_id, idx, name, rows, bytes) VALUES (?, ?, ?, ?, ?)",
      id,
      file.index,
      file.name,
      file.rows,
      file.bytes,
    );
    this.sql.exec(
      `UPDATE exports SET rows = rows + ?, upload_key = NULL, upload_id = NULL,
         file_start = coalesce(?, file_start) WHERE id = ?`,
      file.rows,
      next === null ? null : JSON.stringify(next),
      id,
    );
  }

  /** Marks an export succeeded; its files are kept until `expiresAt`. */
  succeeded(id: string, now: number, expiresAt: number): void {
    this.sql.exec(
      `UPDATE exports SET state = 'succeeded', progress = 1, finished_at = ?, expires_at = ?,
         error = NULL WHERE id = ?`,
      now,
      expiresAt,
      id,
    );
  }

  /** Marks an export failed, with the reason shown to the client. */
  failed(id: string, now: number, expiresAt: number, error: string): void {
    this.sql.exec(
      `UPDATE exports SET state = 'failed', finished_at = ?, expires_at = ?, error = ?,
         upload_key = NULL, upload_id = NULL WHERE id = ?`,
      now,
      expiresAt,
      error,
      id,
    );
  }

  /** Counts a failed step: the export waits until `notBefore`; the error is kept meanwhile. */
  stepFailed(id: string, notBefore: number, error: string): void {
    this.sql.exec(
      `UPDATE exports SET failures = failures + 1, not_before = ?, error = ?, upload_key = NULL,
         upload_id = NULL WHERE id = ?`,
      notBefore,
      error,
      id,
    );
  }

  /** The names of an export's files (to delete them). */
  fileNames(id: string): string[] {
    return this.sql
      .exec<{ name: string }>("SELECT name FROM export_files WHERE export_id = ? ORDER BY idx", id)
      .toArray()
      .map((r) => r.name);
  }

  /** Finished or failed exports whose files are due for deletion at `now`. */
  dueToExpire(now: number): string[] {
    return this.sql
      .exec<{ id: string }>(
        `SELECT id FROM exports WHERE state IN ('succeeded', 'failed') AND expires_at <= ?`,
        now,
      )
      .toArray()
      .map((r) => r.id);
  }

  /** Marks an export's files deleted; its record stays until `purgeAt`. */
  expired(id: string, purgeAt: number): void {
    this.sql.exec("DELETE FROM export_files WHERE export_id = ?", id);
    this.sql.exec("UPDATE exports SET state = 'expired', purge_at = ? WHERE id = ?", purgeAt, id);
  }

  /** Forgets the records of exports expired before `now`. */
  purge(now: number): void {
    this.sql.exec(
      `DELETE FROM export_left_out WHERE export_id IN
         (SELECT id FROM exports WHERE state = 'expired' AND purge_at <= ?)`,
      now,
    );
    this.sql.exec("DELETE FROM exports WHERE state = 'expired' AND purge_at <= ?", now);
  }
}
