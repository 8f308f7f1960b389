/**
 * The realtime object's lifecycle: the shift instance it works for (taken from D1 when the
 * stored one has ended, after closing that one), the alarm (the instance's end, the next
 * refresh of the live counts, the write-behind interval, which grows on a busy machine:
 * `nextWriteBehind`), and what follows a write (flush at once after a quiet spell, else hold
 * up to `MAX_HELD_WRITES`).
 */

import { companyScope } from "../db/company-scope";
import type { Env } from "../env";
import { logError } from "../observability/log";
import { instanceContains } from "../shifts/instances";
import { plannedInstances } from "../shifts/plan";
import { loadShiftPlan, runningInstance } from "../shifts/queries";
import { DAY_MS, MINUTE_MS, SECOND_MS } from "../time/units";
import type { MachineFlush } from "./machine-flush";
import type { MachineStore, StoredSegment } from "./machine-store";
import { realtimeObjectName } from "./machine-stub";
import type { MachineKey, RealtimeInstance } from "./machine-types";
import { currentSegment } from "./timeline";

/** How far ahead an idle machine looks for its next shift instance (a week and a day). */
const NEXT_START_HORIZON_MS = 8 * DAY_MS;

/** How often the live logs of a running instance are refreshed from the samples. */
export const REFRESH_MS = MINUTE_MS;
/**
 * How long a write waits in the object before D1 shows it without a reader asking, on a
 * machine that writes little (readers never wait for it: they pass the read barrier).
 */
export const WRITE_BEHIND_MS = 2_000;
/** The longest that wait grows to on a busy machine (see `nextWriteBehind`). */
export const MAX_WRITE_BEHIND_MS = 16_000;
/** Writes a second, over the last interval, from which a machine counts as busy. */
export const BUSY_WRITES_PER_SECOND = 2;

/**
 * The write-behind interval after a flush that pushed `held` writes held over `intervalMs`:
 * doubled (up to `MAX_WRITE_BEHIND_MS`) while the machine writes at least
 * `BUSY_WRITES_PER_SECOND`, back to `WRITE_BEHIND_MS` once it writes less.
 *
 * Why: each flush has a fixed cost (a signal-store call for the counts, one D1 batch, the
 * stream told) besides the logs it writes; at a fixed 2 s a busy plant of 50 machines paid
 * it 25 times a second. A growing interval pays it less often on busy lines only, while
 * readers still see every acknowledged write through the barrier and a quiet machine's D1
 * copy stays 2 s behind.
 */
export function nextWriteBehind(intervalMs: number, held: number): number {
  const busy = held * SECOND_MS >= BUSY_WRITES_PER_SECOND * intervalMs;
  return busy ? Math.min(MAX_WRITE_BEHIND_MS, intervalMs * 2) : WRITE_BEHIND_MS;
}
/**
 * Most writes held before the next one flushes them itself, whatever the write rate: each
 * held write is a log or two to write, and one flush (one D1 batch, in one invocation) must
 * stay well under D1's 1,000 queries per invocation. Not lower: every flush projects the
 * whole timeline, so flushing more often costs CPU on a busy line.
 */
export const MAX_HELD_WRITES = 200;

/** When a realtime object flushes, closes its instance and wakes up. */
export class MachineLifecycle {
  /**
   * The write-behind interval now, ms (`nextWriteBehind`), in memory only: after an
   * eviction the machine starts again at the quiet interval.
   */
  writeBehindMs = WRITE_BEHIND_MS;

  /**
   * @param storage the object's storage (its alarm).
   * @param bindings the object's bindings (`DB` for the running instance), read at each use.
   * @param store the object's tables; `flusher` its flush.
   */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly bindings: () => Env,
    private readonly store: MachineStore,
    private readonly flusher: MachineFlush,
  ) {}

  private get env(): Env {
    return this.bindings();
  }

  /** Sets the alarm to `at` unless it is already set no later (`force`: set it anyway). */
  private alarmBy(at: number, force = false): void {
    const { alarm_at } = this.store.syncState();
    if (!force && alarm_at !== null && alarm_at <= at && alarm_at > Date.now()) return;
    this.store.setSync({ alarm_at: at });
    void this.storage.setAlarm(at);
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
  async afterWrite(now: number): Promise<void> {
    this.store.setSync({ dirty: 1 });
    this.alarmBy(now + this.writeBehindMs);
    try {
      if (this.store.syncState().marked === 0) {
        await this.flusher.flush(false, { mark: "add" });
      } else {
        this.store.heldWrites += 1;
        if (this.store.heldWrites >= MAX_HELD_WRITES) await this.flusher.flush(false);
      }
    } catch (error) {
      // flush changes nothing in storage or memory before D1 has answered.
      const meta = this.store.meta();
      logError("realtime_flush_failed", error, {
        machine: meta ? realtimeObjectName(meta.company_id, meta.machine_id) : null,
      });
    }
  }

  /**
   * Sets the alarm to the first of: the instance's end, the next refresh, and (while a
   * write may not be in D1 yet, or the mark is still there) the write-behind interval.
   */
  scheduleAlarm(instance: RealtimeInstance | null, now: number): void {
    const sync = this.store.syncState();
    const candidates: number[] = [];
    // The instance's end always (its boundary is published even on an idle machine); the
    // refresh only when the timeline has logs to refresh.
    if (instance) candidates.push(instance.end);
    if (instance && this.store.segments().length > 0) {
      candidates.push(sync.refresh_at ?? now + REFRESH_MS);
    }
    if (sync.dirty === 1 || sync.marked === 1) candidates.push(now + this.writeBehindMs);
    if (candidates.length === 0) return;
    this.alarmBy(Math.max(now + 1, Math.min(...candidates)), true);
  }

  /**
   * Between shifts: sets the alarm to the start of the machine's next instance (within
   * `NEXT_START_HORIZON_MS`), so that the object takes it and its stream publishes
   * `shift.started` then, whether or not anything is written to the machine.
   */
  private async wakeAtNextStart(key: MachineKey, now: number): Promise<void> {
    const plan = await loadShiftPlan(await companyScope(this.env, key.companyId));
    if (!plan) return;
    const upcoming = plannedInstances(
      plan,
      now + 1,
      now + NEXT_START_HORIZON_MS,
      new Set([key.machineId]),
    );
    const next = Math.min(...upcoming.map((i) => i.start));
    if (Number.isFinite(next)) this.alarmBy(next);
  }

  /**
   * The instance the object works for at `now`: the stored one while it runs;
   * otherwise closes the stored one (if any) and takes the machine's running
   * instance from D1. Null when the machine runs no shift now.
   */
  async ensureInstance(key: MachineKey, now: number): Promise<RealtimeInstance | null> {
    const meta = this.store.meta() ?? this.store.createMeta(key.companyId, key.machineId);
    const stored = this.store.instanceOf(meta);
    if (stored && instanceContains(stored, now)) return stored;
    // A clock behind the instance's start (it never goes back in production): keep the
    // timeline, answer "not running" rather than close an instance that has not ended.
    if (stored && now < stored.start) return null;

    let carried: StoredSegment | null = null;
    if (stored) {
      const segments = this.store.segments();
      const last = currentSegment(segments, stored, stored.end - 1);
      carried = segments.find((s) => s.logId === last?.logId) ?? null;
      await this.flusher.flush(true, { closing: stored });
      this.store.clearTimeline();
      this.store.setMeta({
        instance_id: null,
        instance_name: null,
        instance_start: null,
        instance_end: null,
        instance_considered: null,
        revision: 0,
      });
    }
    const next = await runningInstance(
      await companyScope(this.env, key.companyId),
      key.machineId,
      now,
    );
    if (!next) {
      await this.wakeAtNextStart(key, now);
      return null;
    }
    this.store.setMeta({
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
      this.store.putSegment({ ...carried, start: next.start, end: carriedEnd });
      // The carried segment's log is shown at once, as the closed ones are.
      await this.flusher.flush(false);
    }
    this.store.setSync({ refresh_at: now + REFRESH_MS });
    this.scheduleAlarm(instance, now);
    return instance;
  }
}
