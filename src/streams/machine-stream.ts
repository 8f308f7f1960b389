/**
 * A machine's event stream (`MachineStream`, one object per machine, `m:<companyId>:<machineId>`):
 * its log and subscribers (./stream-core.ts), the forwarding of every event to the company's
 * stream, and the live figures (./live.ts: recomputed at most once per `TICK_MS` when a sample,
 * a stop or a flush marks them dirty; `shift.ended` / `shift.started` at the instance's end).
 * The log keeps at least `KEEP_EVENTS` and `KEEP_MS` of events, ids never reused. Every stop
 * event it records feeds the machine's alerts (./stop-alert-feed.ts: the webhook events of
 * a stop's state, due at once or at its thresholds, on the object's alarm).
 * docs/stream-events.md, docs/webhooks.md.
 */

import type { FlushHeldWrites } from "../durable/realtime-barrier";
import type { Env } from "../env";
import { logError } from "../observability/log";
import { SECOND_MS } from "../time/units";
import { computeLive, type LiveFigures, LiveState } from "./live";
import type { LiveLogChange } from "./live-inputs";
import { companyStream, type StreamEvent, type StreamEventInput } from "./names";
import { companyStreamObject } from "./publish";
import { StopAlertFeed } from "./stop-alert-feed";
import { MACHINE_STREAM_MIGRATIONS } from "./stream-migrations";
import { StreamObject } from "./stream-object";
import { type StreamDelivery, StreamOutbox } from "./stream-outbox";
import type { MachineStreamRpc } from "./stream-rpc";

/** Production and OEE are recomputed at most this often (ms). */
export const TICK_MS = SECOND_MS;

/**
 * A machine's stream object, less the one thing of the realtime layer it needs: the way to
 * flush a machine's held writes before the final figures of an ended shift (the read
 * barrier). The composition (src/index.ts) makes the concrete `MachineStream` with the
 * realtime layer's `heldWritesOf`, so that streams/ names nothing above it.
 */
export abstract class MachineStreamObject extends StreamObject implements MachineStreamRpc {
  /** Flushes one machine's realtime object to D1 (src/realtime/machine-stub.ts). */
  protected abstract heldWrites(): FlushHeldWrites;

  /** Forwarding to the company stream: durable, in order, in batches. */
  private forwarding: StreamOutbox<StreamEventInput> | null = null;
  /** The figures are marked dirty and a tick is scheduled (in memory: an eviction forgets it). */
  private tickPending = false;
  /** One live computation at a time, and what it keeps for it (`./live.ts`). */
  private ticking: Promise<void> | null = null;
  private readonly live: LiveState;
  /** The alerts of the machine's stops (webhook events of their state). */
  private readonly alerts: StopAlertFeed;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, MACHINE_STREAM_MIGRATIONS);
    this.alerts = new StopAlertFeed(ctx.storage.sql, env, (at) => this.core.wakeBy(at));
    const log = this.core.log;
    this.live = new LiveState({
      get: () => log.meta("liveInputs"),
      set: (text) => log.setMeta("liveInputs", text),
    });
    // Forwards left unsent by a failure or a restart go out now.
    const forwarding = this.companyForwarding();
    if (forwarding && forwarding.pending() > 0) ctx.waitUntil(forwarding.drain());
  }

  /**
   * Appends one event to this stream, fans it out to every subscriber, keeps the state for
   * `reset`, and forwards it to the company's stream.
   *
   * @param stream this object's name (`m:...`), kept on first use.
   * @param input the event's kind and payload; `at` defaults to now (ms).
   * @returns the event as stored, with its id.
   */
  async append(stream: string, input: StreamEventInput): Promise<StreamEvent> {
    this.core.log.remember(stream);
    const event = this.record([input])[0] as StreamEvent;
    if (this.live.note(input)) this.markDirty();
    return event;
  }

  /**
   * Appends events in order, as `append` does each (a publisher's batch: one call for the
   * events that queued while its previous call was in flight).
   *
   * @param stream this object's name, kept on first use.
   * @param inputs the events, in order.
   * @param delivery the sender's outbox and each event's sequence number there: an event
   *   stored already (a resent batch whose answer was lost) is skipped (`StreamCore.fresh`).
   * @returns the id of the last one (0 for none).
   */
  async appendMany(
    stream: string,
    inputs: StreamEventInput[],
    delivery?: StreamDelivery,
  ): Promise<number> {
    this.core.log.remember(stream);
    const fresh = this.core.fresh(inputs, delivery);
    const last = this.record(fresh).at(-1)?.id ?? 0;
    if (fresh.map((i) => this.live.note(i)).includes(true)) this.markDirty();
    return last;
  }

  /**
   * Append + fan-out of each event, and its forward and its alerts staged, in the same
   * synchronous step; then one forward call and one alerts run for them all (a detector's
   * batch of a machine-day's stops made two of each when each event started its own: the
   * first took the first event alone, the second the rest).
   */
  private record(inputs: readonly StreamEventInput[]): StreamEvent[] {
    const name = this.core.log.stream();
    const forwarding = this.companyForwarding();
    let alertsDue = false;
    const events = inputs.map((input) => {
      const event = this.core.record(input);
      if (name?.kind === "machine" && this.alerts.note(input)) alertsDue = true;
      // Staged with the append (one storage step), sent after: a failed or interrupted
      // forward is retried from storage, never dropped.
      forwarding?.stage({ ...input, machineEventId: event.id });
      return event;
    });
    if (alertsDue && name?.kind === "machine") this.ctx.waitUntil(this.alerts.run(name.companyId));
    if (forwarding && events.length > 0) this.ctx.waitUntil(forwarding.drain());
    return events;
  }

  /**
   * The company stream's forwarding outbox (null until the object knows its name): in the
   * machine's order, one call in flight at a time; a failure is logged and retried (the
   * object's alarm covers an eviction meanwhile).
   */
  private companyForwarding(): StreamOutbox<StreamEventInput> | null {
    if (this.forwarding) return this.forwarding;
    const name = this.core.log.stream();
    if (name?.kind !== "machine") return null;
    const company = companyStream(name.companyId);
    this.forwarding = new StreamOutbox<StreamEventInput>(
      this.ctx.storage.sql,
      "forward_outbox",
      // A stub per call: one kept would fail for good once the company stream restarted (a
      // revocation that closed WebSockets ends its instance, and a stub does not follow).
      (batch, delivery) =>
        companyStreamObject(this.env, name.companyId).appendMany(company, batch, delivery),
      (error, retryAt) => {
        logError("company_stream_forward", error);
        this.ctx.waitUntil(this.core.wakeBy(retryAt));
      },
    );
    return this.forwarding;
  }

  // ---- live figures -------------------------------------------------------------------

  /** Something changed: the live figures are recomputed within `TICK_MS`. */
  private markDirty(): void {
    if (this.core.log.stream()?.kind !== "machine") return;
    // Marked and scheduled already: a busy machine's every write would otherwise cost a
    // storage write and two alarm calls.
    if (this.tickPending) return;
    this.tickPending = true;
    this.core.log.setMeta("dirty", "1");
    void this.scheduleTick();
  }

  /**
   * Marks the figures stale (a `count` sample arrived, a realtime flush wrote logs: `change`)
   * without an event of its own: the next tick emits `production` and `oee` when they changed.
   */
  async nudge(stream: string, change?: LiveLogChange): Promise<void> {
    this.core.log.remember(stream);
    if (change) this.live.tell(change);
    this.markDirty();
  }

  private async scheduleTick(): Promise<void> {
    const lastTick = Number(this.core.log.meta("lastTick") ?? 0);
    await this.core.wakeBy(Math.max(Date.now(), lastTick + TICK_MS));
  }

  override async alarm(): Promise<void> {
    // The alarm also ends connections whose access token expired (first: a restart it
    // needs leaves the rest to the next instance), retries forwards that failed, and writes
    // the alerts due (a threshold passed, a failed run retried).
    await this.closeExpired();
    const forwarding = this.companyForwarding();
    if (forwarding && forwarding.pending() > 0) this.ctx.waitUntil(forwarding.drain());
    this.ticking ??= this.tick().finally(() => {
      this.ticking = null;
    });
    const name = this.core.log.stream();
    const company = name?.kind === "machine" ? name.companyId : null;
    await Promise.all([this.ticking, company === null ? null : this.alerts.runIfDue(company)]);
    await this.core.scheduleClosing();
    // After the tick, which sets the alarm for the figures alone.
    const alertsAt = this.alerts.nextWake();
    if (alertsAt !== null) await this.core.wakeBy(alertsAt);
  }

  private async tick(): Promise<void> {
    const log = this.core.log;
    const name = log.stream();
    if (name?.kind !== "machine") return;
    const now = Date.now();
    log.setMeta("lastTick", String(now));
    this.tickPending = false;
    log.setMeta("dirty", null);
    const previous = log.meta("figures");
    const result = await computeLive(this.env, name.companyId, name.machineId, {
      heldWrites: this.heldWrites(),
      previous: previous === null ? null : (JSON.parse(previous) as LiveFigures),
      state: this.live,
      now,
    });
    this.record(result.events.map((event) => ({ ...event, machineId: name.machineId })));
    log.setMeta("figures", result.figures === null ? null : JSON.stringify(result.figures));
    // Dirty again meanwhile: another tick; else wake at the instance's end.
    const next =
      log.meta("dirty") === "1" ? Date.now() + TICK_MS : (result.figures?.shift.endMs ?? null);
    if (next !== null) await this.ctx.storage.setAlarm(Math.max(next, Date.now() + TICK_MS));
  }
}
