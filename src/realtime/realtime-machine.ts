/**
 * The per-machine realtime Durable Object: one object per machine, named
 * `<companyId>:<machineId>` (`realtimeObjectName`), holding the running shift
 * instance's timeline (SKU segments and operator assignments, see
 * `./timeline.ts`) in its SQLite storage, and showing it as live production
 * logs in D1 (`./projection.ts`).
 *
 * Ordering and durability:
 * - Every operation (a write, a read, the alarm) runs in one FIFO queue inside
 *   the object, so writes are applied one at a time in the order they reached
 *   the object, and none can interleave with another's D1 round trips. (An
 *   input gate alone would not do: it opens while the object awaits D1.)
 * - A write changes the SQLite tables synchronously. D1 gets the logs behind
 *   it (write-behind), at most `WRITE_BEHIND_MS` later, in one `batch` of
 *   every changed log, so that a scanner line writing many times a second
 *   costs D1 one batch per interval, not one per write, and writes to many
 *   machines do not queue on D1's single writer. At most `MAX_HELD_WRITES`
 *   are held: the next one flushes them itself, so a batch stays small.
 *   "Takes effect immediately" holds through a read barrier: the first write
 *   after a quiet spell is flushed at once together with a `realtime_pending`
 *   row for the machine (so it returns only once D1 shows it and the machine
 *   is marked), later writes only mark the object dirty, and every reader of
 *   production logs first asks the marked machines' objects to flush
 *   (`syncPendingMachines`). The mark is removed, in the same batch as a last
 *   flush, once the object has been quiet for a whole interval.
 * - State is in `ctx.storage.sql`; nothing needed lives only in memory, so an
 *   evicted or restarted object carries on where it was. The object also keeps
 *   its tables in memory, loaded from storage on first use and changed together
 *   with it, so that a write or a flush reads nothing back from SQLite; an
 *   operation that throws drops that copy, and the next one reloads it.
 *
 * Shift boundaries: the object keeps the instance it works for. The alarm
 * (set to the instance's end, and every `REFRESH_MS` before it to refresh the
 * live counts from the samples) closes the instance at its end: the logs are
 * written a last time with `live = false`, the timeline is cleared, and the
 * object takes the machine's next running instance. Every operation first
 * checks the clock the same way, so a write that arrives after the end (before
 * the alarm ran) belongs to the new instance. The SKU segment the machine was
 * on at the end carries over when the next instance starts right then (the
 * machine keeps making it); operator assignments do not (a new shift has its
 * own crew).
 */

import { DurableObject } from "cloudflare:workers";
import { createDb } from "../db/client";
import { namedStub } from "../durable/named-stub";
import type { Env } from "../env";
import { operatorAssigned, segmentChanged, segmentUpdated } from "../events/payloads";
import { MachinePublisher, nudgeLive, type Publishable } from "../events/publish";
import { sumCountSignal } from "../resources/signals/count-sums";
import { runningInstance } from "../shifts/queries";
import {
  deleteLiveLog,
  type LiveLog,
  type LogCounts,
  readLogCounts,
  upsertLiveLogs,
} from "./projection";
import {
  type Assignment,
  currentSegment,
  projectTimeline,
  type Segment,
  type SegmentSku,
} from "./timeline";

/** How often the live logs of a running instance are refreshed from the samples. */
export const REFRESH_MS = 60_000;
/** Longest a write waits in the object before D1 shows it without a reader asking. */
export const WRITE_BEHIND_MS = 2_000;
/**
 * Most writes held before the next one flushes them itself, whatever the write rate: each
 * held write is a log or two to write, and one flush (one D1 batch, in one invocation) must
 * stay well under D1's 1,000 queries per invocation. Not lower: every flush projects the
 * whole timeline, so flushing more often costs CPU on a busy line.
 */
export const MAX_HELD_WRITES = 200;

/** The Durable Object name of a machine: deterministic, so every isolate reaches the same object. */
export function realtimeObjectName(companyId: number, machineId: number): string {
  return `${companyId}:${machineId}`;
}

/**
 * The stub of a machine's object (`<companyId>:<machineId>`), for the realtime routes and
 * the read barrier.
 *
 * @param env the bindings holding `REALTIME_MACHINE`.
 * @returns a stub; creating it makes no call.
 */
export function machineObject(
  env: Pick<Env, "REALTIME_MACHINE">,
  companyId: number,
  machineId: number,
): DurableObjectStub<RealtimeMachine> {
  return namedStub(env.REALTIME_MACHINE, realtimeObjectName(companyId, machineId));
}

/** The machine an operation is for (checked by the Worker: it exists and is the company's). */
export interface MachineKey {
  companyId: number;
  machineId: number;
}

/** `POST /v1/realtime/{machine_id}/sku`, resolved by the Worker. */
export interface SkuWrite extends MachineKey {
  sku: SegmentSku;
  nominalSpeed: number;
  countingFactor: number;
  simpleWorkOrder: { id: string; name: string } | null;
  quantity: number | null;
  /** The `custom` object as JSON text, or null. */
  customJson: string | null;
  /** ms; null = when the object applies the write. */
  start: number | null;
  /** ms; null = open. */
  end: number | null;
}

/**
 * `POST /v1/realtime/{machine_id}/sku` without a SKU, resolved by the Worker: changes
 * to the segment running when the object applies it. An absent field is unchanged.
 */
export interface SegmentUpdate extends MachineKey {
  simpleWorkOrder?: { id: string; name: string };
  quantity?: number;
  /** The `custom` object as JSON text. */
  customJson?: string;
}

/** `POST /v1/realtime/{machine_id}/operator`, resolved by the Worker. */
export interface OperatorWrite extends MachineKey {
  operatorId: number;
  firstName: string | null;
  lastName: string | null;
  /** ms. */
  start: number;
}

/** A shift instance as the object keeps it; instants in ms. */
export interface RealtimeInstance {
  id: number;
  name: string;
  start: number;
  end: number;
  isConsidered: boolean;
}

/** Why a write or a read was refused. */
export type RealtimeRefusal =
  | { ok: false; reason: "not_running" }
  | { ok: false; reason: "outside_instance"; field: "start" | "end"; instance: RealtimeInstance }
  | { ok: false; reason: "end_not_after_start" }
  | { ok: false; reason: "no_current_segment" };

export type WriteResult = { ok: true; revision: number } | RealtimeRefusal;

/** One segment with its log's counts, for the GET. */
export interface SegmentView {
  productionLogId: string;
  sku: SegmentSku;
  simpleWorkOrder: { id: string; name: string } | null;
  quantity: number | null;
  customJson: string | null;
  nominalSpeed: number;
  countingFactor: number;
  /** ms. */
  start: number;
  /** ms: where the segment ends on the timeline (null = open, until the instance ends). */
  end: number | null;
  /** ms: end of its log now; null = not begun, no log yet. */
  logEnd: number | null;
  sensorCount: number;
  count: number;
}

/** The state of a machine's running instance, for the GET. */
export interface Snapshot {
  ok: true;
  instance: RealtimeInstance;
  current: SegmentView | null;
  operators: Assignment[];
  segments: SegmentView[];
  revision: number;
  /** ms: the instant the snapshot was taken. */
  at: number;
}

export type SnapshotResult = Snapshot | { ok: false; reason: "not_running" };

const SCHEMA = `
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
`;

interface MetaRow extends Record<string, SqlStorageValue> {
  company_id: number;
  machine_id: number;
  instance_id: number | null;
  instance_name: string | null;
  instance_start: number | null;
  instance_end: number | null;
  instance_considered: number | null;
  revision: number;
}

interface SegmentRow extends Record<string, SqlStorageValue> {
  log_id: string;
  start: number;
  end: number | null;
  sku: string;
  nominal_speed: number;
  counting_factor: number;
  simple_work_order: string | null;
  quantity: number | null;
  custom: string | null;
  has_log: number;
  projected: string | null;
}

/**
 * Write-behind state: `dirty` = the timeline changed since the last flush;
 * `marked` = D1 has this machine's `realtime_pending` row; `refresh_at` = next
 * forced refresh of the live counts; `alarm_at` = the alarm as last set (ms).
 */
interface SyncRow extends Record<string, SqlStorageValue> {
  dirty: number;
  marked: number;
  refresh_at: number | null;
  alarm_at: number | null;
}

interface AssignmentRow extends Record<string, SqlStorageValue> {
  operator_id: number;
  first_name: string | null;
  last_name: string | null;
  start: number;
}

interface StoredSegment extends Segment {
  hasLog: boolean;
  projected: string | null;
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export class RealtimeMachine extends DurableObject<Env> {
  /** Tail of the FIFO queue of operations. */
  private tail: Promise<unknown> = Promise.resolve();
  /** The `sync` row in memory (see `syncState`). */
  private syncRow: SyncRow | null = null;
  /**
   * Writes held since the last flush, counted in memory only: after an eviction it
   * restarts at 0, and the alarm flushes what the storage marks dirty anyway.
   */
  private heldWrites = 0;
  /** The `meta` row in memory (`undefined`: not loaded; null: no row yet). */
  private metaRow: MetaRow | null | undefined = undefined;
  /** The `segments` table in memory, ascending `start` (null: not loaded). */
  private timeline: StoredSegment[] | null = null;
  /** The `assignments` table in memory, by `start` then operator id (null: not loaded). */
  private crew: Assignment[] | null = null;
  /** The machine's event stream, fed in the order of the writes (see `publishLater`). */
  private publisher: MachinePublisher | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  /**
   * Runs `task` after every operation queued before it; the queue goes on if it throws.
   * A task that throws may have changed storage and not memory (or the reverse), so the
   * in-memory copy of the tables is dropped, to be reloaded by the next operation.
   */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const guarded = async () => {
      try {
        return await task();
      } catch (error) {
        this.forgetCopy();
        throw error;
      }
    };
    const result = this.tail.then(guarded, guarded);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Drops the in-memory copy of the tables (they are reloaded from storage on use). */
  private forgetCopy(): void {
    this.metaRow = undefined;
    this.timeline = null;
    this.crew = null;
    this.syncRow = null;
  }

  /** The `sync` row, read once: only this object writes it, one operation at a time. */
  private syncState(): SyncRow {
    this.syncRow ??= this.ctx.storage.sql.exec<SyncRow>("SELECT * FROM sync WHERE id = 1").one();
    return this.syncRow;
  }

  /**
   * Writes the columns of `patch` that differ from `current` to the one row of a
   * single-row table (`meta`, `sync`); returns the row as it now is, for the copy in memory.
   */
  private patchRow<Row extends Record<string, SqlStorageValue>>(
    table: "meta" | "sync",
    current: Row,
    patch: Partial<Row>,
  ): Row {
    const changed = Object.entries(patch).filter(([column, value]) => current[column] !== value);
    if (changed.length === 0) return current;
    this.ctx.storage.sql.exec(
      `UPDATE ${table} SET ${changed.map(([column]) => `${column} = ?`).join(", ")} WHERE id = 1`,
      ...changed.map(([, value]) => value ?? null),
    );
    return { ...current, ...patch };
  }

  /** Updates columns of the `sync` row, in storage and in memory; skips an unchanged value. */
  private setSync(patch: Partial<Pick<SyncRow, "dirty" | "marked" | "refresh_at" | "alarm_at">>) {
    this.syncRow = this.patchRow<SyncRow>("sync", this.syncState(), patch);
  }

  /** Sets the alarm to `at` unless it is already set no later (`force`: set it anyway). */
  private alarmBy(at: number, force = false): void {
    const { alarm_at } = this.syncState();
    if (!force && alarm_at !== null && alarm_at <= at && alarm_at > Date.now()) return;
    this.setSync({ alarm_at: at });
    void this.ctx.storage.setAlarm(at);
  }

  /**
   * After a write was applied to the timeline: the first write after a quiet spell is
   * flushed at once with the machine's `realtime_pending` mark; later ones are held (the
   * object is dirty) for the alarm or a reader's `sync`, up to `MAX_HELD_WRITES`. Dirty and
   * the alarm are set first, so that a failed flush is retried by the alarm.
   *
   * A flush that fails here does not fail the write: the write is applied and stored in
   * this object (a second attempt without `start` would add a second segment), only D1's
   * copy is late. The failure is logged and the object stays dirty: the alarm, set above
   * and retried by the platform while it throws, or the next write or read pushes it.
   */
  private async afterWrite(now: number): Promise<void> {
    this.setSync({ dirty: 1 });
    this.alarmBy(now + WRITE_BEHIND_MS);
    try {
      if (this.syncState().marked === 0) {
        await this.flush(false, { mark: "add" });
      } else {
        this.heldWrites += 1;
        if (this.heldWrites >= MAX_HELD_WRITES) await this.flush(false);
      }
    } catch (error) {
      // flush changes nothing in storage or memory before D1 has answered.
      const meta = this.meta();
      console.error(
        JSON.stringify({
          level: "error",
          event: "realtime_flush_failed",
          machine: meta ? realtimeObjectName(meta.company_id, meta.machine_id) : null,
          error: String(error),
        }),
      );
    }
  }

  /**
   * Publishes a write's event to the machine's live stream without making the write wait
   * for it: called inside the queue of operations, so the events go out in the order of
   * the revisions; batched while the stream is busy (`MachinePublisher`).
   */
  private publishLater(key: MachineKey, event: Publishable): void {
    if (!this.publisher?.isFor(key.companyId, key.machineId)) {
      this.publisher = new MachinePublisher(this.env, key.companyId, key.machineId);
    }
    this.ctx.waitUntil(this.publisher.publish(event));
  }

  /** The `meta` row (from memory once loaded); null before the object's first operation. */
  private meta(): MetaRow | null {
    if (this.metaRow === undefined) {
      this.metaRow =
        this.ctx.storage.sql.exec<MetaRow>("SELECT * FROM meta WHERE id = 1").toArray()[0] ?? null;
    }
    return this.metaRow;
  }

  /**
   * Updates columns of the `meta` row, in storage and in memory (the row must exist);
   * skips an unchanged value.
   */
  private setMeta(
    patch: Partial<
      Pick<
        MetaRow,
        | "instance_id"
        | "instance_name"
        | "instance_start"
        | "instance_end"
        | "instance_considered"
        | "revision"
      >
    >,
  ): void {
    const current = this.meta();
    if (!current) throw new Error("RealtimeMachine: meta row missing");
    this.metaRow = this.patchRow<MetaRow>("meta", current, patch);
  }

  private instanceOf(meta: MetaRow | null): RealtimeInstance | null {
    if (
      !meta ||
      meta.instance_id === null ||
      meta.instance_start === null ||
      meta.instance_end === null
    ) {
      return null;
    }
    return {
      id: meta.instance_id,
      name: meta.instance_name ?? "",
      start: meta.instance_start,
      end: meta.instance_end,
      isConsidered: meta.instance_considered === 1,
    };
  }

  /**
   * The segments in ascending `start`, from memory once loaded. The array and its items
   * are the object's copy: change them only together with storage (`putSegment`,
   * `markProjected`, `clearTimeline`).
   */
  private segments(): readonly StoredSegment[] {
    this.timeline ??= this.ctx.storage.sql
      .exec<SegmentRow>("SELECT * FROM segments ORDER BY start")
      .toArray()
      .map((r) => ({
        logId: r.log_id,
        start: r.start,
        end: r.end,
        sku: JSON.parse(r.sku) as SegmentSku,
        nominalSpeed: r.nominal_speed,
        countingFactor: r.counting_factor,
        simpleWorkOrder: parseJson<{ id: string; name: string }>(r.simple_work_order),
        quantity: r.quantity,
        customJson: r.custom,
        hasLog: r.has_log === 1,
        projected: r.projected,
      }));
    return this.timeline;
  }

  /** The operator assignments by `start` then operator id, from memory once loaded. */
  private assignments(): readonly Assignment[] {
    this.crew ??= this.ctx.storage.sql
      .exec<AssignmentRow>("SELECT * FROM assignments ORDER BY start, operator_id")
      .toArray()
      .map((r) => ({
        operatorId: r.operator_id,
        firstName: r.first_name,
        lastName: r.last_name,
        start: r.start,
      }));
    return this.crew;
  }

  /** Assigns an operator from `assignment.start` (moving their start when assigned already). */
  private putAssignment(assignment: Assignment): void {
    const crew = this.assignments().filter((a) => a.operatorId !== assignment.operatorId);
    this.ctx.storage.sql.exec(
      `INSERT INTO assignments (operator_id, first_name, last_name, start) VALUES (?, ?, ?, ?)
       ON CONFLICT (operator_id) DO UPDATE SET first_name = excluded.first_name,
         last_name = excluded.last_name, start = excluded.start`,
      assignment.operatorId,
      assignment.firstName,
      assignment.lastName,
      assignment.start,
    );
    crew.push({ ...assignment });
    crew.sort((a, b) => a.start - b.start || a.operatorId - b.operatorId);
    this.crew = crew;
  }

  /** Empties the timeline and the assignments (the instance is closed). */
  private clearTimeline(): void {
    this.ctx.storage.sql.exec("DELETE FROM segments");
    this.ctx.storage.sql.exec("DELETE FROM assignments");
    this.timeline = [];
    this.crew = [];
  }

  /**
   * Records what D1 now holds for a segment's log (see `flush`); writes nothing when that
   * is what the segment already records (a refresh of a log that kept its end).
   */
  private markProjected(segment: StoredSegment, hasLog: boolean, projected: string | null): void {
    if (segment.hasLog === hasLog && segment.projected === projected) return;
    this.ctx.storage.sql.exec(
      "UPDATE segments SET has_log = ?, projected = ? WHERE log_id = ?",
      hasLog ? 1 : 0,
      projected,
      segment.logId,
    );
    segment.hasLog = hasLog;
    segment.projected = projected;
  }

  /**
   * Inserts or replaces the segment starting at `segment.start` (a replaced one keeps its
   * log id and whether D1 has its log; its projection is stale).
   */
  private putSegment(segment: Omit<Segment, "logId">): void {
    const timeline = this.segments() as StoredSegment[];
    const logId = crypto.randomUUID();
    this.ctx.storage.sql.exec(
      `INSERT INTO segments (log_id, start, end, sku, nominal_speed, counting_factor,
         simple_work_order, quantity, custom, has_log, projected)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)
       ON CONFLICT (start) DO UPDATE SET end = excluded.end, sku = excluded.sku,
         nominal_speed = excluded.nominal_speed, counting_factor = excluded.counting_factor,
         simple_work_order = excluded.simple_work_order, quantity = excluded.quantity,
         custom = excluded.custom, projected = NULL`,
      logId,
      segment.start,
      segment.end,
      JSON.stringify(segment.sku),
      segment.nominalSpeed,
      segment.countingFactor,
      segment.simpleWorkOrder === null ? null : JSON.stringify(segment.simpleWorkOrder),
      segment.quantity,
      segment.customJson,
    );
    // Field by field: a carried segment comes with its old log id, which must not win.
    const fields = {
      start: segment.start,
      end: segment.end,
      sku: segment.sku,
      nominalSpeed: segment.nominalSpeed,
      countingFactor: segment.countingFactor,
      simpleWorkOrder: segment.simpleWorkOrder,
      quantity: segment.quantity,
      customJson: segment.customJson,
      projected: null,
    };
    // Writes usually start now, after every segment: search from the end.
    let at = timeline.length;
    while (at > 0 && (timeline[at - 1]?.start ?? 0) > segment.start) at -= 1;
    const same = timeline[at - 1];
    if (same && same.start === segment.start) {
      timeline[at - 1] = { ...same, ...fields };
    } else {
      timeline.splice(at, 0, { logId, hasLog: false, ...fields });
    }
  }

  /** Counts one more write applied in this instance; returns the new revision. */
  private bumpRevision(): number {
    const revision = (this.meta()?.revision ?? 0) + 1;
    this.setMeta({ revision });
    return revision;
  }

  /**
   * Sets the alarm to the first of: the instance's end, the next refresh, and (while a
   * write may not be in D1 yet, or the mark is still there) the write-behind interval.
   */
  private scheduleAlarm(instance: RealtimeInstance | null, now: number): void {
    const sync = this.syncState();
    const candidates: number[] = [];
    if (instance) candidates.push(instance.end, sync.refresh_at ?? now + REFRESH_MS);
    if (sync.dirty === 1 || sync.marked === 1) candidates.push(now + WRITE_BEHIND_MS);
    if (candidates.length === 0) return;
    this.alarmBy(Math.max(now + 1, Math.min(...candidates)), true);
  }

  /**
   * The instance the object works for at `now`: the stored one while it runs;
   * otherwise closes the stored one (if any) and takes the machine's running
   * instance from D1. Null when the machine runs no shift now.
   */
  private async ensureInstance(key: MachineKey, now: number): Promise<RealtimeInstance | null> {
    const sql = this.ctx.storage.sql;
    let meta = this.meta();
    if (!meta) {
      sql.exec(
        "INSERT INTO meta (id, company_id, machine_id, revision) VALUES (1, ?, ?, 0)",
        key.companyId,
        key.machineId,
      );
      this.metaRow = undefined;
      meta = this.meta();
    } else if (meta.company_id !== key.companyId || meta.machine_id !== key.machineId) {
      // The name is derived from both ids: reaching another machine's object is a bug.
      throw new Error(
        `RealtimeMachine ${meta.company_id}:${meta.machine_id} called for ${key.companyId}:${key.machineId}`,
      );
    }
    const stored = this.instanceOf(meta);
    if (stored && stored.start <= now && now < stored.end) return stored;
    // A clock behind the instance's start (it never goes back in production): keep the
    // timeline, answer "not running" rather than close an instance that has not ended.
    if (stored && now < stored.start) return null;

    let carried: StoredSegment | null = null;
    if (stored) {
      const segments = this.segments();
      const last = currentSegment(segments, stored, stored.end - 1);
      carried = segments.find((s) => s.logId === last?.logId) ?? null;
      await this.flush(true, { closing: stored });
      this.clearTimeline();
      this.setMeta({
        instance_id: null,
        instance_name: null,
        instance_start: null,
        instance_end: null,
        instance_considered: null,
        revision: 0,
      });
    }
    const next = await runningInstance(createDb(this.env.DB), key.companyId, key.machineId, now);
    if (!next) return null;
    this.setMeta({
      instance_id: next.id,
      instance_name: next.name,
      instance_start: next.start,
      instance_end: next.end,
      instance_considered: next.isConsidered ? 1 : 0,
      revision: 0,
    });
    const instance: RealtimeInstance = {
      id: next.id,
      name: next.name,
      start: next.start,
      end: next.end,
      isConsidered: next.isConsidered,
    };
    const carriedEnd = carried?.end ?? null;
    if (
      carried &&
      stored &&
      next.start === stored.end &&
      (carriedEnd === null || carriedEnd > next.start)
    ) {
      this.putSegment({ ...carried, start: next.start, end: carriedEnd });
      // The carried segment's log is shown at once, as the closed ones are.
      await this.flush(false);
    }
    this.setSync({ refresh_at: now + REFRESH_MS });
    this.scheduleAlarm(instance, now);
    return instance;
  }

  /**
   * Pushes the logs of the timeline to D1 in one batch.
   *
   * @param force rewrite every log (the counts may have changed with new samples),
   *   not only those whose fields or end changed.
   * @param options.closing close this instance: every log ends where its segment
   *   ends and becomes `live = false`.
   * @param options.mark also add or remove the machine's `realtime_pending` row, in the
   *   same batch (see the file comment).
   * @param options.counts also read every log's counts, in the same batch.
   * @returns the counts of the logs written (with `options.counts`: of every log), by
   *   log id.
   */
  private async flush(
    force: boolean,
    options: { closing?: RealtimeInstance; mark?: "add" | "remove"; counts?: boolean } = {},
  ): Promise<Map<string, LogCounts>> {
    const counts = new Map<string, LogCounts>();
    const meta = this.meta();
    const instance = options.closing ?? this.instanceOf(meta);
    if (!meta) return counts;
    if (!instance) {
      if (options.mark) await this.env.DB.batch([this.markStatement(meta, options.mark)]);
      this.afterFlush(options.mark);
      return counts;
    }
    const closing = options.closing !== undefined;
    const now = closing ? Math.max(Date.now(), instance.end) : Date.now();
    const segments = this.segments();
    const projections = projectTimeline(segments, this.assignments(), instance, now);
    const statements: D1PreparedStatement[] = [];
    const logs: Omit<LiveLog, "sensorCount">[] = [];
    const updates: { segment: StoredSegment; hasLog: boolean; projected: string | null }[] = [];
    const withLogs: string[] = [];
    projections.forEach((p, i) => {
      const stored = segments[i];
      if (!stored) return;
      if (p.logEnd === null) {
        if (stored.hasLog) {
          statements.push(deleteLiveLog(this.env.DB, meta.company_id, stored.logId));
          updates.push({ segment: stored, hasLog: false, projected: null });
        }
        return;
      }
      withLogs.push(stored.logId);
      const signature = JSON.stringify([p.logEnd, p.operatorId, instance.id, !closing]);
      if (!force && stored.hasLog && stored.projected === signature) return;
      logs.push({
        id: stored.logId,
        skuId: stored.sku.id,
        shiftInstanceId: instance.id,
        operatorId: p.operatorId,
        simpleWorkOrderId: stored.simpleWorkOrder?.id ?? null,
        nominalSpeed: stored.nominalSpeed,
        countingFactor: stored.countingFactor,
        start: stored.start,
        end: p.logEnd,
        live: !closing,
        now: Date.now(),
      });
      updates.push({ segment: stored, hasLog: true, projected: signature });
    });
    const owner = { companyId: meta.company_id, machineId: meta.machine_id };
    // The pulses come from the machine's signal store, before the D1 batch that stores them.
    const sums = await sumCountSignal(this.env, owner, logs);
    const counted = logs.map((log, i) => ({ ...log, sensorCount: sums[i] ?? 0 }));
    statements.push(...upsertLiveLogs(this.env.DB, owner, counted));
    if (options.counts) statements.push(...readLogCounts(this.env.DB, meta.company_id, withLogs));
    if (options.mark) statements.push(this.markStatement(meta, options.mark));
    if (statements.length === 0) {
      this.afterFlush(options.mark);
      return counts;
    }
    const results = await this.env.DB.batch<{ id: string; sensor_count: number; count: number }>(
      statements,
    );
    for (const result of results) {
      for (const row of result.results ?? []) {
        counts.set(row.id, { id: row.id, sensorCount: row.sensor_count, count: row.count });
      }
    }
    for (const u of updates) this.markProjected(u.segment, u.hasLog, u.projected);
    this.afterFlush(options.mark);
    // D1 shows changed logs: the machine's live figures (its stream's OEE) are stale. The
    // stream recomputes them at most once a second, however often this runs.
    if (updates.length > 0) {
      this.ctx.waitUntil(nudgeLive(this.env, meta.company_id, meta.machine_id));
    }
    return counts;
  }

  /** The statement adding or removing this machine's `realtime_pending` row. */
  private markStatement(meta: MetaRow, mark: "add" | "remove"): D1PreparedStatement {
    return mark === "add"
      ? this.env.DB.prepare(
          `INSERT INTO realtime_pending (company_id, machine_id, since)
           VALUES (CAST(?1 AS INTEGER), CAST(?2 AS INTEGER), CAST(?3 AS INTEGER))
           ON CONFLICT (company_id, machine_id) DO NOTHING`,
        ).bind(meta.company_id, meta.machine_id, Date.now())
      : this.env.DB.prepare(
          `DELETE FROM realtime_pending
           WHERE company_id = CAST(?1 AS INTEGER) AND machine_id = CAST(?2 AS INTEGER)`,
        ).bind(meta.company_id, meta.machine_id);
  }

  /** After a successful flush: nothing is waiting for D1; the mark as the flush left it. */
  private afterFlush(mark: "add" | "remove" | undefined): void {
    this.heldWrites = 0;
    this.setSync(mark ? { dirty: 0, marked: mark === "add" ? 1 : 0 } : { dirty: 0 });
  }

  /**
   * Applies a SKU write: a segment from `start` (default: now) with this SKU,
   * work order, quantity and custom values; returns once D1 shows it.
   *
   * @returns the revision (writes applied in this instance), or why it was refused:
   *   `not_running` (no shift now), `outside_instance` (`start` not in the running
   *   instance), `end_not_after_start`.
   */
  async applySku(write: SkuWrite): Promise<WriteResult> {
    return this.enqueue(async (): Promise<WriteResult> => {
      const now = Date.now();
      const instance = await this.ensureInstance(write, now);
      if (!instance) return { ok: false, reason: "not_running" };
      const start = write.start ?? now;
      if (start < instance.start || start >= instance.end) {
        return { ok: false, reason: "outside_instance", field: "start", instance };
      }
      if (write.end !== null && write.end <= start) {
        return { ok: false, reason: "end_not_after_start" };
      }
      this.putSegment({
        start,
        end: write.end,
        sku: write.sku,
        nominalSpeed: write.nominalSpeed,
        countingFactor: write.countingFactor,
        simpleWorkOrder: write.simpleWorkOrder,
        quantity: write.quantity,
        customJson: write.customJson,
      });
      const revision = this.bumpRevision();
      await this.afterWrite(now);
      this.publishLater(write, segmentChanged(revision, write));
      return { ok: true, revision };
    });
  }

  /**
   * Changes the segment running now (a scanner that reads a work-order barcode, or a new
   * quantity): its work order, quantity and custom values, keeping its SKU, start and
   * end; returns once D1 shows it.
   *
   * @returns the revision, or why it was refused: `not_running` (no shift now),
   *   `no_current_segment` (no SKU is running now).
   */
  async updateSegment(update: SegmentUpdate): Promise<WriteResult> {
    return this.enqueue(async (): Promise<WriteResult> => {
      const now = Date.now();
      const instance = await this.ensureInstance(update, now);
      if (!instance) return { ok: false, reason: "not_running" };
      const running = currentSegment(this.segments(), instance, now);
      if (!running) return { ok: false, reason: "no_current_segment" };
      // The same start replaces the segment in place (same log id).
      this.putSegment({
        ...running,
        simpleWorkOrder: update.simpleWorkOrder ?? running.simpleWorkOrder,
        quantity: update.quantity ?? running.quantity,
        customJson: update.customJson ?? running.customJson,
      });
      const revision = this.bumpRevision();
      await this.afterWrite(now);
      this.publishLater(update, segmentUpdated(revision, update));
      return { ok: true, revision };
    });
  }

  /**
   * Applies an operator assignment from `start`; returns once D1 shows it.
   *
   * @returns the revision, or why it was refused (`not_running`, `outside_instance`).
   */
  async assignOperator(write: OperatorWrite): Promise<WriteResult> {
    return this.enqueue(async (): Promise<WriteResult> => {
      const now = Date.now();
      const instance = await this.ensureInstance(write, now);
      if (!instance) return { ok: false, reason: "not_running" };
      if (write.start < instance.start || write.start >= instance.end) {
        return { ok: false, reason: "outside_instance", field: "start", instance };
      }
      this.putAssignment({
        operatorId: write.operatorId,
        firstName: write.firstName,
        lastName: write.lastName,
        start: write.start,
      });
      const revision = this.bumpRevision();
      await this.afterWrite(now);
      this.publishLater(write, operatorAssigned(revision, write));
      return { ok: true, revision };
    });
  }

  /**
   * The running instance's state, with every log refreshed from the samples first
   * (so the counts are exact at this instant, and the other views show the same).
   */
  async snapshot(key: MachineKey): Promise<SnapshotResult> {
    return this.enqueue(async (): Promise<SnapshotResult> => {
      const now = Date.now();
      const instance = await this.ensureInstance(key, now);
      if (!instance) return { ok: false, reason: "not_running" };
      const counts = await this.flush(true, { counts: true });
      const segments = this.segments();
      const projections = projectTimeline(segments, this.assignments(), instance, now);
      const views: SegmentView[] = projections.map((p) => {
        const c = counts.get(p.segment.logId);
        return {
          productionLogId: p.segment.logId,
          sku: p.segment.sku,
          simpleWorkOrder: p.segment.simpleWorkOrder,
          quantity: p.segment.quantity,
          customJson: p.segment.customJson,
          nominalSpeed: p.segment.nominalSpeed,
          countingFactor: p.segment.countingFactor,
          start: p.segment.start,
          // Running to the end of the instance = open: the next write may still end it.
          end: p.end >= instance.end ? null : p.end,
          logEnd: p.logEnd,
          sensorCount: c?.sensorCount ?? 0,
          count: c?.count ?? 0,
        };
      });
      const current = currentSegment(segments, instance, now);
      return {
        ok: true,
        instance,
        current: views.find((v) => v.productionLogId === current?.logId) ?? null,
        operators: [...this.assignments()],
        segments: views,
        revision: this.meta()?.revision ?? 0,
        at: now,
      };
    });
  }

  /**
   * The read barrier: once this returns, D1 shows every write applied before it
   * (and an instance that has ended is closed). Readers of production logs call it
   * on the machines marked in `realtime_pending` (`syncPendingMachines`).
   */
  async sync(key: MachineKey): Promise<void> {
    await this.enqueue(async () => {
      await this.ensureInstance(key, Date.now());
      if (this.syncState().dirty === 1) await this.flush(false);
    });
  }

  /**
   * Alarm: at the instance's end, closes it and moves to the next; before it, pushes
   * writes still waiting to D1, refreshes the live counts every `REFRESH_MS`, and
   * removes the machine's mark once a whole interval passed without writes.
   * Reschedules itself while an instance runs or the mark is there.
   */
  override async alarm(): Promise<void> {
    await this.enqueue(async () => {
      const meta = this.meta();
      if (!meta) return;
      const now = Date.now();
      const instance = await this.ensureInstance(
        { companyId: meta.company_id, machineId: meta.machine_id },
        now,
      );
      const sync = this.syncState();
      if (instance && now >= (sync.refresh_at ?? 0)) {
        await this.flush(true);
        this.setSync({ refresh_at: now + REFRESH_MS });
      } else if (sync.dirty === 1) {
        await this.flush(false);
      } else if (sync.marked === 1) {
        await this.flush(false, { mark: "remove" });
      }
      this.scheduleAlarm(instance, now);
    });
  }
}
