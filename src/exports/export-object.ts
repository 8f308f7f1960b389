/**
 * `CompanyExports`: the Durable Object that runs a company's bulk exports (one per company,
 * named by its id) in bounded steps, one per alarm invocation: a step reads batches of the
 * dataset (./sources.ts) within `STEP_MS` / `STEP_BATCHES` / `STEP_ROWS`, encodes them
 * (./encoders.ts) and uploads full parts to R2 (./r2-file.ts). Unfinished exports take turns;
 * what a restart needs is in SQLite (./export-store.ts); a failing step is retried, up to
 * `MAX_STEP_FAILURES`. docs/exports.md ("How an export runs").
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject } from "../db/object-migrations";
import { openSession, parseBookmark, type RequestSession } from "../db/session";
import { companyShard } from "../db/shards";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { logError } from "../observability/log";
import { DAY_MS, MINUTE_MS, SECOND_MS } from "../time/units";
import type { Column } from "./columns";
import { type FileEncoder, FORMAT_FILES, newEncoder } from "./encoders";
import { EXPORT_MIGRATIONS } from "./export-migrations";
import { type ActiveExport, ExportStore, type FileStart } from "./export-store";
import {
  type CompanyExportsRpc,
  type ExportRecord,
  type ExportStart,
  exportFileKey,
  exportFileName,
  type StartAnswer,
} from "./exports-rpc";
import { R2FileWriter } from "./r2-file";
import { EXPORT_FILES_KEPT_MS, MAX_ACTIVE_EXPORTS, MAX_FILE_BYTES } from "./schemas";
import {
  type ColumnBatch,
  type Cursor,
  exportColumns,
  firstCursor,
  progressAt,
  readBatch,
  type SourceContext,
} from "./sources";

/** Longest a step reads and encodes before it lets the next step (or export) go, ms. */
const STEP_MS = 2_000;
/** Most batches one step reads (bounds its D1 statements: a report page sends about ten). */
const STEP_BATCHES = 20;
/**
 * Rows after which a step ends (at the end of its batch): the garbage of encoding is
 * collected between steps, so workerd's memory stays flat (docs/exports.md, "Memory").
 */
const STEP_ROWS = 250_000;
/** Failed steps in a row after which the export fails. */
const MAX_STEP_FAILURES = 8;
/** How long an expired export's record is still answered (as `expired`), ms. */
const EXPIRED_KEPT_MS = 30 * DAY_MS;

/** The file an export is writing, in memory. */
interface OpenFile {
  index: number;
  name: string;
  writer: R2FileWriter;
  encoder: FileEncoder;
  rows: number;
  /** The batch to read next, and how many of its first rows are in earlier files already. */
  cursor: Cursor;
  skip: number;
}

/** The first `take` rows of a batch from `offset` (the batch itself when that is all of it). */
function sliceBatch(batch: ColumnBatch, offset: number, take: number): ColumnBatch {
  if (offset === 0 && take === batch.length) return batch;
  return { length: take, columns: batch.columns.map((c) => c.slice(offset, offset + take)) };
}

/** The text a failed export shows: an API error's own words, else a generic one. */
function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    return typeof error.detail === "string" ? error.detail : JSON.stringify(error.detail);
  }
  return "The export could not read its rows (an internal error); start it again";
}

export class CompanyExports extends DurableObject<Env> implements CompanyExportsRpc {
  private readonly store: ExportStore;
  /** The files being written, by export id (lost on a restart, then written again). */
  private readonly open = new Map<string, OpenFile>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, EXPORT_MIGRATIONS);
    this.store = new ExportStore(ctx.storage.sql);
  }

  async start(companyId: number, request: ExportStart): Promise<StartAnswer> {
    this.store.rememberCompany(companyId);
    const active = this.store.activeCount();
    if (active >= MAX_ACTIVE_EXPORTS) return { ok: false, active };
    this.store.insert(request.id, request.spec, request.totalRows, {
      cursor: firstCursor(request.spec),
      skip: 0,
    });
    await this.arm();
    const record = this.store.record(request.id);
    if (!record) throw new Error("an export just inserted is not found");
    return { ok: true, record };
  }

  async describe(companyId: number, id: string): Promise<ExportRecord | null> {
    // An object is one company's: another company's id is simply not here.
    if (this.store.companyId() !== companyId) return null;
    return this.store.record(id, this.open.get(id)?.rows ?? 0);
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    await this.expire(now);
    const next = this.store.nextToRun(now);
    if (next) {
      try {
        await this.step(next);
      } catch (error) {
        await this.stepFailed(next, error);
      }
    }
    await this.arm();
  }

  /** Sets the alarm: at once while an export can step, else at the next expiry. */
  private async arm(): Promise<void> {
    const step = this.store.nextStepAt();
    const at = step !== null ? Math.max(step, Date.now()) : this.store.nextExpiryAt();
    if (at === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  /** The company's scope for this export's reads: a D1 session that resumes at its bookmark. */
  private async context(
    job: ActiveExport,
  ): Promise<{ ctx: SourceContext; session: RequestSession }> {
    const { spec } = job;
    const shard = await companyShard(this.env, spec.company.id);
    const bookmark = parseBookmark(job.bookmark ?? undefined);
    // Reads tolerate a replica's lag (an export is as of its start); the bookmark keeps
    // every step at least as fresh as the one before, so pages never go back in time.
    const session = openSession(
      shard.binding,
      shard.name,
      "first-unconstrained",
      bookmark === "malformed" ? null : bookmark,
    );
    const scope = {
      get db() {
        return session.db;
      },
      companyId: spec.company.id,
      companyName: spec.company.name,
      timezone: spec.company.timezone,
    };
    return { ctx: { env: this.env, scope }, session };
  }

  /** Starts the file after the finished ones (again, after a restart or a failed step). */
  private async openFile(job: ActiveExport, columns: readonly Column[], start: FileStart) {
    const { spec } = job;
    const index = job.filesDone + 1;
    const { extension, mediaType } = FORMAT_FILES[spec.format];
    const name = exportFileName(index, extension);
    const key = exportFileKey(spec.company.id, job.id, name);
    const writer = new R2FileWriter(this.env.HISTORY, key, mediaType, (uploadId) =>
      this.store.uploadStarted(job.id, key, uploadId),
    );
    const file: OpenFile = {
      index,
      name,
      writer,
      encoder: await newEncoder(spec.format, columns, writer),
      rows: 0,
      cursor: start.cursor,
      skip: start.skip,
    };
    this.open.set(job.id, file);
    return file;
  }

  /** Aborts a multipart upload a restart left behind. */
  private async abandon(upload: { key: string; uploadId: string } | null): Promise<void> {
    if (upload === null) return;
    try {
      await this.env.HISTORY.resumeMultipartUpload(upload.key, upload.uploadId).abort();
    } catch {
      // Already completed or aborted: nothing is left to free.
    }
  }

  /** One step of an export: see the file comment. */
  private async step(job: ActiveExport): Promise<void> {
    const { spec } = job;
    const columns = exportColumns(spec);
    let file = this.open.get(job.id);
    if (file === undefined || file.index !== job.filesDone + 1) {
      await this.abandon(job.upload);
      file = await this.openFile(job, columns, job.fileStart);
    }
    const { ctx, session } = await this.context(job);
    const deadline = Date.now() + STEP_MS;
    let rowsDone = job.rows;
    // The most bytes the file being written held at once: its part buffer and its encoder's.
    let heldBytes = 0;
    let rowsRead = 0;
    for (
      let batches = 0;
      batches < STEP_BATCHES && rowsRead < STEP_ROWS && Date.now() < deadline;
      batches++
    ) {
      const batchCursor = file.cursor;
      const { batch, next, leftOut } = await readBatch(ctx, spec, batchCursor, columns);
      if (leftOut && spec.dataset === "signals") {
        const signal = spec.selection.signals[leftOut.signal];
        if (signal) {
          this.store.leftOut(job.id, leftOut.signal, {
            machineUuid: signal.machineUuid,
            publicId: signal.publicId,
            name: signal.name,
            from: leftOut.from,
          });
        }
      }
      rowsRead += batch.length;
      let offset = Math.min(file.skip, batch.length);
      file.skip = 0;
      while (offset < batch.length) {
        const take = Math.min(batch.length - offset, spec.rowsPerFile - file.rows);
        await file.encoder.write(sliceBatch(batch, offset, take));
        heldBytes = Math.max(heldBytes, file.writer.peakBuffered + file.encoder.heldBytes());
        file.rows += take;
        offset += take;
        const full = file.rows >= spec.rowsPerFile || file.writer.bytes >= MAX_FILE_BYTES;
        if (full && (offset < batch.length || next !== null)) {
          // The next file starts right after this one's last row.
          const start: FileStart =
            offset < batch.length
              ? { cursor: batchCursor, skip: offset }
              : { cursor: next ?? batchCursor, skip: 0 };
          rowsDone += await this.closeFile(job, file, start);
          job.filesDone += 1;
          file = await this.openFile(job, columns, start);
          file.skip = 0;
          file.cursor = batchCursor;
        }
      }
      if (next === null) {
        await this.closeFile(job, file, null);
        heldBytes = Math.max(heldBytes, file.writer.peakBuffered + file.encoder.heldBytes());
        const now = Date.now();
        const step = { progress: 1, bookmark: session.bookmark(), heldBytes, ended: true };
        this.store.stepped(job.id, now, step);
        this.store.succeeded(job.id, now, now + EXPORT_FILES_KEPT_MS);
        return;
      }
      file.cursor = next;
    }
    const progress = progressAt(spec, file.cursor, rowsDone + file.rows, job.totalRows);
    this.store.stepped(job.id, Date.now(), { progress, bookmark: session.bookmark(), heldBytes });
  }

  /** Finishes a file and records it; returns its rows. */
  private async closeFile(job: ActiveExport, file: OpenFile, next: FileStart | null) {
    await file.encoder.finish();
    const bytes = await file.writer.close();
    this.store.fileDone(
      job.id,
      { index: file.index, name: file.name, rows: file.rows, bytes },
      next,
    );
    this.open.delete(job.id);
    return file.rows;
  }

  /** A failed step: the file in progress is dropped; the export waits, or fails for good. */
  private async stepFailed(job: ActiveExport, error: unknown): Promise<void> {
    const file = this.open.get(job.id);
    this.open.delete(job.id);
    await file?.writer.abort().catch(() => undefined);
    const text = errorText(error);
    const failures = job.failures + 1;
    const now = Date.now();
    // A refusal of the endpoint (a 4XX, other than a 429) will not change on a retry.
    const final =
      failures >= MAX_STEP_FAILURES ||
      (error instanceof ApiError && error.status < 500 && error.status !== 429);
    if (!(error instanceof ApiError)) {
      logError("export_step_failed", error, {
        exportId: job.id,
        companyId: job.spec.company.id,
        failures,
      });
    }
    if (final) {
      this.store.failed(job.id, now, now, text);
      return;
    }
    this.store.stepFailed(job.id, now + Math.min(MINUTE_MS, SECOND_MS * 2 ** (failures - 1)), text);
  }

  /** Deletes the files of exports past their time, and forgets records long expired. */
  private async expire(now: number): Promise<void> {
    const companyId = this.store.companyId();
    if (companyId === null) return;
    for (const id of this.store.dueToExpire(now)) {
      const keys = this.store.fileNames(id).map((name) => exportFileKey(companyId, id, name));
      if (keys.length > 0) await this.env.HISTORY.delete(keys);
      this.store.expired(id, now + EXPIRED_KEPT_MS);
    }
    this.store.purge(now);
  }
}
