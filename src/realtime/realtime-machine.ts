/**
 * The per-machine realtime Durable Object (`<companyId>:<machineId>`): the running shift
 * instance's timeline (SKU segments, operator assignments) in its SQLite storage, shown as
 * live production logs in D1. Operations run one at a time in a FIFO queue; D1 gets the logs
 * write-behind, behind a read barrier; the alarm closes the instance at its end. Why and how:
 * docs/realtime.md ("Inside the realtime object", "Objects that wake without their name").
 *
 * Files: this one is the object (its queue and its operations); `./machine-store.ts` its
 * tables and their copy in memory, `./machine-flush.ts` the flush to D1,
 * `./machine-lifecycle.ts` the instance, the alarm and what follows a write,
 * `./machine-stub.ts` its name and stub, `./machine-types.ts` what it takes and answers;
 * the rules a write must pass are `./rules.ts`.
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject } from "../db/object-migrations";
import type { Env } from "../env";
import { MachinePublisher, nudgeLive, type Publishable } from "../streams/publish";
import { operatorAssigned, segmentChanged, segmentUpdated } from "./event-payloads";
import { MachineFlush } from "./machine-flush";
import {
  MachineLifecycle,
  nextWriteBehind,
  REFRESH_MS,
  WRITE_BEHIND_MS,
} from "./machine-lifecycle";
import type { RealtimeMachineRpc } from "./machine-rpc";
import { MachineStore } from "./machine-store";
import { machineKeyOf } from "./machine-stub";
import type {
  MachineKey,
  OperatorWrite,
  SegmentUpdate,
  SegmentView,
  SkuWrite,
  SnapshotResult,
  WriteResult,
} from "./machine-types";
import { REALTIME_MIGRATIONS } from "./realtime-migrations";
import { NOT_RUNNING, refuseSkuWrite, refuseStart } from "./rules";
import { currentSegment, projectTimeline } from "./timeline";

export class RealtimeMachine extends DurableObject<Env> implements RealtimeMachineRpc {
  /** Tail of the FIFO queue of operations. */
  private tail: Promise<unknown> = Promise.resolve();
  /** The tables, in storage and in memory. */
  private readonly store: MachineStore;
  /** The timeline to D1. */
  private readonly flusher: MachineFlush;
  /** The instance, the alarm, what follows a write. */
  private readonly lifecycle: MachineLifecycle;
  /** The machine's event stream, fed in the order of the writes (see `publishLater`). */
  private publisher: MachinePublisher | null = null;
  /** The machine this object is for, once known (`key`). */
  private knownKey: MachineKey | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, REALTIME_MIGRATIONS);
    this.store = new MachineStore(ctx.storage.sql);
    // The bindings are read at each use, as the object's own `env` is.
    const bindings = () => this.env;
    this.flusher = new MachineFlush(bindings, this.store, (promise) => ctx.waitUntil(promise));
    this.lifecycle = new MachineLifecycle(ctx.storage, bindings, this.store, this.flusher);
    // Events of answered writes that a restart kept from their stream go out now.
    if (this.store.meta()) this.drainEvents();
  }

  /**
   * The machine this object is for. The name is the one place the machine travels (messages
   * do not repeat it), and the first operation stores it with the object's state (the `meta`
   * row, `MachineLifecycle.ensureInstance`). An alarm that wakes the object after a restart
   * reaches it by its id alone, without the name (`ctx.id.name` undefined: the runtime keeps
   * only the id of a pending alarm, cloudflare/workerd#6850): the stored machine answers then.
   *
   * @throws Error when the object has neither a name nor a stored machine (never used, and
   *   reached other than by `machineObject`: a bug), or a name that is not a machine's.
   */
  private get key(): MachineKey {
    if (this.knownKey) return this.knownKey;
    const meta = this.store.meta();
    this.knownKey =
      this.ctx.id.name === undefined && meta
        ? { companyId: meta.company_id, machineId: meta.machine_id }
        : machineKeyOf(this.ctx.id.name);
    return this.knownKey;
  }

  /** The machine's publisher (its outbox lives in this object's storage). */
  private publisherFor(): MachinePublisher {
    this.publisher ??= new MachinePublisher(
      this.env,
      this.ctx.storage.sql,
      this.key.companyId,
      this.key.machineId,
    );
    return this.publisher;
  }

  /** Sends the stored events that their stream has not acknowledged yet, if any. */
  private drainEvents(): void {
    const publisher = this.publisherFor();
    if (publisher.pending() > 0) this.ctx.waitUntil(publisher.drain());
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
        this.store.forgetCopy();
        throw error;
      }
    };
    const result = this.tail.then(guarded, guarded);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /**
   * Publishes a write's event to the machine's live stream without making the write wait
   * for it: stored in this object's outbox before the write is answered (the output gate
   * holds the answer until storage has it), then sent; called inside the queue of
   * operations, so the events go out in the order of the revisions; batched while the
   * stream is busy, retried when it fails (`MachinePublisher`).
   */
  private publishLater(event: Publishable): void {
    const publisher = this.publisherFor();
    publisher.stage(event);
    this.ctx.waitUntil(publisher.drain());
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
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      const refused = refuseSkuWrite(instance, write, now);
      if (refused) return refused;
      const start = write.start ?? now;
      this.store.putSegment({
        start,
        end: write.end,
        sku: write.sku,
        nominalSpeed: write.nominalSpeed,
        countingFactor: write.countingFactor,
        simpleWorkOrder: write.simpleWorkOrder,
        quantity: write.quantity,
        customJson: write.customJson,
      });
      const revision = this.store.bumpRevision();
      await this.lifecycle.afterWrite(now);
      this.publishLater(segmentChanged(revision, write));
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
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      if (!instance) return NOT_RUNNING;
      const running = currentSegment(this.store.segments(), instance, now);
      if (!running) return { ok: false, reason: "no_current_segment" };
      // The same start replaces the segment in place (same log id).
      this.store.putSegment({
        ...running,
        simpleWorkOrder: update.simpleWorkOrder ?? running.simpleWorkOrder,
        quantity: update.quantity ?? running.quantity,
        customJson: update.customJson ?? running.customJson,
      });
      const revision = this.store.bumpRevision();
      await this.lifecycle.afterWrite(now);
      this.publishLater(segmentUpdated(revision, update));
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
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      const refused = refuseStart(instance, write.start);
      if (refused) return refused;
      this.store.putAssignment({
        operatorId: write.operatorId,
        firstName: write.firstName,
        lastName: write.lastName,
        start: write.start,
      });
      const revision = this.store.bumpRevision();
      await this.lifecycle.afterWrite(now);
      this.publishLater(operatorAssigned(revision, write));
      return { ok: true, revision };
    });
  }

  /**
   * A PATCH of a live log's operator (src/resources/production-logs/running-shift.ts): the
   * segment of that log has this operator (null: nobody) from now on, whatever the
   * assignments say, so every flush writes it; returns once D1 shows it, as a write does.
   *
   * @returns false when no segment of the running instance has that log (the instance
   *   ended meanwhile and its logs are ordinary ones).
   */
  async setLogOperator(logId: string, operatorId: number | null): Promise<boolean> {
    return this.enqueue(async () => {
      const now = Date.now();
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      if (!instance || !this.store.setLogOperator(logId, operatorId)) return false;
      await this.lifecycle.afterWrite(now);
      return true;
    });
  }

  /**
   * A log of the running instance that is not one of this object's was deleted through the
   * public API: the machine's stream drops it from the live figures now (it would otherwise
   * keep it until it reads the instance's logs again).
   */
  async forgetLog(logId: string): Promise<void> {
    await this.enqueue(async () => {
      const instance = await this.lifecycle.ensureInstance(this.key, Date.now());
      if (!instance) return;
      this.ctx.waitUntil(
        nudgeLive(this.env, this.key.companyId, this.key.machineId, {
          instanceId: instance.id,
          upserted: [],
          removed: [logId],
        }),
      );
    });
  }

  /**
   * The running instance's state, with every log refreshed from the samples first
   * (so the counts are exact at this instant, and the other views show the same).
   */
  async snapshot(): Promise<SnapshotResult> {
    return this.enqueue(async (): Promise<SnapshotResult> => {
      const now = Date.now();
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      if (!instance) return { ok: false, reason: "not_running" };
      const counts = await this.flusher.flush(true, { counts: true });
      const segments = this.store.segments();
      const projections = projectTimeline(segments, this.store.assignments(), instance, now);
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
        operators: [...this.store.assignments()],
        segments: views,
        revision: this.store.meta()?.revision ?? 0,
        at: now,
      };
    });
  }

  /**
   * The read barrier: once this returns, D1 shows every write applied before it
   * (and an instance that has ended is closed). Readers of production logs call it
   * on the machines marked in `realtime_pending` (`syncPendingMachines`).
   */
  async sync(): Promise<void> {
    await this.enqueue(async () => {
      await this.lifecycle.ensureInstance(this.key, Date.now());
      if (this.store.syncState().dirty === 1) await this.flusher.flush(false);
    });
  }

  /**
   * Starts the object's clock for a machine that may never be written to: takes the running
   * instance (or sets the alarm to the next one's start) and sets the alarm to its end, so
   * that every shift boundary of the machine wakes the object (the operator API calls it
   * when machines or shifts are created). Does nothing more when the clock runs already.
   */
  async arm(): Promise<void> {
    await this.enqueue(async () => {
      const before = this.store.meta()?.instance_id ?? null;
      const now = Date.now();
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      if (instance) this.lifecycle.scheduleAlarm(instance, now);
      this.boundaryCrossed(before, instance?.id ?? null);
    });
  }

  /**
   * The running instance changed (a shift ended, or one started): the machine's stream
   * recomputes its live figures at once, which publishes `shift.ended` (after the final
   * `oee`) and `shift.started` within a second or two of the boundary.
   */
  private boundaryCrossed(before: number | null, after: number | null): void {
    if (before === after) return;
    this.ctx.waitUntil(nudgeLive(this.env, this.key.companyId, this.key.machineId));
  }

  /**
   * Alarm: at the instance's end, closes it and moves to the next; before it, pushes
   * writes still waiting to D1, refreshes the live counts every `REFRESH_MS`, and
   * removes the machine's mark once a whole interval passed without writes; at a shift
   * boundary, has the machine's stream publish it. Reschedules itself while an instance
   * runs or the mark is there, and between shifts for the next one's start.
   */
  override async alarm(): Promise<void> {
    await this.enqueue(async () => {
      const meta = this.store.meta();
      if (!meta) return;
      this.drainEvents();
      const now = Date.now();
      const instance = await this.lifecycle.ensureInstance(this.key, now);
      this.boundaryCrossed(meta.instance_id, instance?.id ?? null);
      const sync = this.store.syncState();
      if (instance && now >= (sync.refresh_at ?? 0)) {
        await this.flusher.flush(true);
        this.store.setSync({ refresh_at: now + REFRESH_MS });
      } else if (sync.dirty === 1) {
        const held = this.store.heldWrites;
        await this.flusher.flush(false);
        this.lifecycle.writeBehindMs = nextWriteBehind(this.lifecycle.writeBehindMs, held);
      } else if (sync.marked === 1) {
        this.lifecycle.writeBehindMs = WRITE_BEHIND_MS;
        await this.flusher.flush(false, { mark: "remove" });
      }
      this.lifecycle.scheduleAlarm(instance, now);
    });
  }
}
