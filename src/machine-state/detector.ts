import { log, logError } from "../observability/log";
import { instanceContains } from "../shifts/instances";
import { MachinePublisher } from "../streams/publish";
import { HOUR_MS, hourStart } from "../time/units";
import { DetectorSummaries } from "./detector-summaries";
import { END_OF_DATA, evaluate } from "./evaluate";
import { ANALOG_RULE, COUNT_RULE, type RuleId } from "./hour-tables";
import { loadPrerequisites, PLAN_REFRESH_MS, plannedBlocks } from "./planned-time";
import type { StoredSettings } from "./rules";
import { syncDetectedStops } from "./stop-sync";

/** How soon a failed evaluation or write is tried again, ms. */
const DETECTION_RETRY_MS = 5_000;
/** The alarm an ingestion sets, in case the object goes before its evaluation ends, ms. */
const SAFETY_MS = 30_000;
/** Most rounds of evaluating and writing in one `process`. */
const MAX_ROUNDS = 20;
/**
 * Shortest time between two writes of detected stops to D1, ms: a stop opens or closes at
 * most this late, and the stops of a burst of ingestions share a batch.
 */
const WRITE_SPACING_MS = 1_000;
/**
 * How long a backfill's evaluation waits for the next call of its burst, ms: a gateway
 * catching up sends a machine-day in about 9 calls, a second or so apart on a loaded server,
 * and each evaluation, write of stops and call to the stream costs about as much as the
 * summaries of a call; the burst shares one.
 */
const BURST_QUIET_MS = 3_000;
/** Longest a backfill's evaluation waits while its burst goes on, ms. */
const BURST_MAX_MS = 10_000;

/**
 * Latest instant the detector sets the object's alarm to, from now, ms. Every wake it plans
 * lies within a day and a few minutes (a silence outlasting the gap, at most a day, after a
 * sample at most 5 minutes ahead; the end of the shift instance running now, at most 25
 * hours): a later one is a bad state (the runtime refuses alarms after 2189), and an
 * alarm that comes early only evaluates again and sets the next.
 */
export const MAX_WAKE_AHEAD_MS = 2 * 86_400_000;

/** The stop detector of one machine (docs/machine-state.md). */
export class Detector extends DetectorSummaries {
  private publisher: MachinePublisher | null = null;
  private running: Promise<void> | null = null;
  /** When stops were last written to D1 (ms; 0: not in this lifetime). */
  private lastWrite = 0;

  /**
   * Evaluates what waits and writes what changed, one run at a time per object (a call
   * while one runs joins it, and the run goes on while something waits). Never rejects: a
   * failure is logged and retried by the alarm.
   */
  process(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      try {
        // What an ingestion adds while D1 is written waits for the next round.
        for (let round = 0; round < MAX_ROUNDS; round++) {
          await this.evaluatePending();
          // Writes at most every WRITE_SPACING_MS: the stops of a burst of ingestions (a
          // gateway catching up, a backfill) go to D1 and the stream together.
          const wait = this.lastWrite + WRITE_SPACING_MS - Date.now();
          if (wait > 0 && this.tables.hasWrites()) {
            await new Promise((done) => setTimeout(done, wait));
            await this.evaluatePending();
          }
          const machine = this.tables.machine();
          if (machine && this.tables.hasWrites()) {
            this.lastWrite = Date.now();
            await syncDetectedStops({
              env: this.env,
              tables: this.tables,
              machine,
              publisher: this.publisherFor(machine),
              background: this.background,
            });
          }
          // What a backfill's burst added meanwhile waits for the burst's own evaluation.
          if (!this.tables.hasPending() || this.burst) break;
        }
        this.retryAt = null;
      } catch (error) {
        logError("stop_detection_failed", error, { machine: this.tables.machine() });
        this.retryAt = Date.now() + DETECTION_RETRY_MS;
      }
      await this.alarmBy(this.nextAlarm())
        .then(() => this.giveBackSafety())
        .catch((error: unknown) => {
          logError("stop_detection_alarm_failed", error);
        });
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private publisherFor(machine: { companyId: number; machineId: number }): MachinePublisher {
    if (!this.publisher?.isFor(machine.companyId, machine.machineId)) {
      this.publisher = new MachinePublisher(
        this.env,
        this.storage.sql,
        machine.companyId,
        machine.machineId,
      );
    }
    return this.publisher;
  }

  /** Drains the stream outbox (after a restart or a failed send). */
  drainEvents(): Promise<void> {
    const machine = this.tables.machine();
    if (!machine) return Promise.resolve();
    const publisher = this.publisherFor(machine);
    return publisher.pending() > 0 ? publisher.drain() : Promise.resolve();
  }

  private async evaluatePending(): Promise<void> {
    for (;;) {
      const machine = this.tables.machine();
      const span = this.tables.peekPending();
      if (!machine || !span) return;
      const settings = this.tables.settings();
      const now = Date.now();
      const plan = this.tables.plan();
      const recordedAt = this.tables.recordedAt();
      const fresh =
        plan !== null &&
        now - plan.at < PLAN_REFRESH_MS &&
        recordedAt !== null &&
        now - recordedAt < PLAN_REFRESH_MS;
      const rules: RuleId[] =
        settings.analog && settings.analogSignalId !== null
          ? [COUNT_RULE, ANALOG_RULE]
          : [COUNT_RULE];
      const result = evaluate(
        this.tables,
        {
          plan: fresh ? plan : null,
          thresholdMs: settings.stopThresholdSeconds * 1_000,
          maxGapMs: settings.maxSampleGapSeconds * 1_000,
          rules,
          now,
        },
        span.start,
        span.end,
      );
      if (result.neededPlan && !fresh) {
        const { plan, recorded } = await loadPrerequisites(this.env, machine, now);
        this.tables.setPlan(plan);
        this.tables.loadRecorded(recorded, now);
        continue;
      }
      // The same synchronous step as the evaluation: nothing was added to what waits.
      this.tables.clearPending();
      for (const k of result.changes.kept) this.tables.wantDetected(k.key, k.start, k.end);
      for (const key of result.changes.removed) this.tables.removeDetected(key);
      for (const a of result.changes.added)
        this.tables.wantDetected(crypto.randomUUID(), a.start, a.end);
      for (const m of result.merges) this.tables.wantMerge(m.id, m.taken);
      this.planWake(settings, rules, now, span.end);
    }
  }

  /**
   * When the clock alone changes the answer: a run reaching the last sample ends when the
   * silence after it outlasts the gap; an open stop ends with its planned time.
   */
  private planWake(
    settings: StoredSettings,
    rules: readonly RuleId[],
    now: number,
    evaluatedTo: number,
  ): void {
    const gapMs = settings.maxSampleGapSeconds * 1_000;
    let at = END_OF_DATA;
    for (const rule of rules) {
      const last = this.tables.hours(rule, END_OF_DATA, true, 1)[0];
      const v =
        last && (last.variant === 1 && last.summary.down ? last.summary.down : last.summary.up);
      if (!v?.open) continue;
      const silenceOver = v.lastT + gapMs + 1;
      // Still to come: wake then. Already over: this evaluation settled the run if it reached
      // the last sample; else the tail waits for a wake at once (never a wake the evaluation
      // it causes would set again: that alarm would run without end).
      if (silenceOver > now) at = Math.min(at, silenceOver);
      else if (evaluatedTo > v.lastT) this.tailSettled.set(rule, v.lastT);
      else if (this.tailSettled.get(rule) !== v.lastT) at = Math.min(at, now + 1);
    }
    const plan = this.tables.plan();
    if (plan && this.tables.openDetected()) {
      const block = plannedBlocks(plan, now, now + 1).find((b) => instanceContains(b, now));
      if (block) at = Math.min(at, block.end);
    }
    this.tables.setWakeAt(
      at === END_OF_DATA ? null : Math.min(Math.max(at, now + 1), now + MAX_WAKE_AHEAD_MS),
    );
  }

  /** The burst of backfill calls waiting for one evaluation: its first and last call, ms. */
  private burst: { since: number; last: number } | null = null;

  /**
   * Evaluates what an ingestion marked. Where a person may be waiting (the ingestion's last
   * sample within the machine's gap of now: a stop may be opening or ending now), at once.
   * A backfill (older samples: a gateway catching up, a history loaded) waits until its
   * burst of calls is quiet for `BURST_QUIET_MS`, `BURST_MAX_MS` at most, and then evaluates
   * and writes once for the whole burst, also when its calls land while an evaluation runs.
   * What waits is in the store's table all along (the safety alarm resumes it after a
   * restart); `process` called meanwhile evaluates what waits then, once.
   *
   * @param lastSample the ingestion's last sample, ms.
   */
  protected evaluateAfter(lastSample: number): void {
    const now = Date.now();
    const gapMs = this.tables.settings().maxSampleGapSeconds * 1_000;
    if (lastSample >= now - gapMs) {
      // A run going on takes in what was added before it ends.
      this.background(this.process());
      return;
    }
    // A backfill's call while an evaluation runs starts or extends a burst too: joining the
    // run would cost it another evaluation, write of stops and call to the stream for each
    // call that lands during one (a loaded server's machine-day took about five).
    if (this.burst) {
      this.burst.last = now;
      return;
    }
    const burst = { since: now, last: now };
    this.burst = burst;
    const waitForQuiet = async () => {
      for (;;) {
        const due = Math.min(burst.last + BURST_QUIET_MS, burst.since + BURST_MAX_MS);
        const wait = due - Date.now();
        if (wait <= 0) break;
        await new Promise((done) => setTimeout(done, wait));
      }
      this.burst = null;
      await this.process();
    };
    this.background(waitForQuiet());
  }

  /** Called by the object's alarm: evaluates the tail when its time came, retries what failed. */
  async onAlarm(): Promise<void> {
    this.alarmAt = null;
    this.safetyArmed = false;
    this.safety = null;
    const wake = this.tables.wakeAt();
    const now = Date.now();
    if (wake !== null && wake <= now) {
      this.tables.setWakeAt(null);
      const tail = this.tailStart();
      if (tail !== null) this.tables.addPending(tail, now + 1);
    }
    await this.process();
    await this.drainEvents();
  }

  /** The first sample of the latest hour of either rule (where a running run is reached from). */
  private tailStart(): number | null {
    let start: number | null = null;
    for (const rule of [COUNT_RULE, ANALOG_RULE] as RuleId[]) {
      const last = this.tables.hours(rule, END_OF_DATA, true, 1)[0];
      if (last) start = start === null ? last.summary.firstT : Math.min(start, last.summary.firstT);
    }
    return start;
  }

  /**
   * The object's next alarm for detection: the wake, or a retry at `retryAt`, or a check a
   * while after an ingestion (in case the object goes before `process` ends).
   */
  nextAlarm(): number | null {
    const wake = this.tables.wakeAt();
    const retry = this.retryAt;
    const candidates = [wake, retry].filter((t): t is number => t !== null);
    return candidates.length === 0 ? null : Math.min(...candidates, Date.now() + MAX_WAKE_AHEAD_MS);
  }

  /**
   * Repairs what samples after `bound` left in the detector's tables before sample instants
   * were bounded (docs/machine-state.md, "Bounded by the samples"): the summaries of the hours
   * after the bound go and the bound's hour is summarized again from the samples the store
   * kept (the store dropped the others first: `dropFutureSamples`); the stretches waiting
   * are cut to the bound; a wake further than `MAX_WAKE_AHEAD_MS` is forgotten; and the
   * history from the bound's hour on is evaluated again, which removes the stops detected
   * after the bound (from D1 too, with their `stop.deleted`) and plans the wake afresh.
   * Synchronous, run as the object wakes: a handful of index seeks when there is nothing
   * to repair.
   *
   * @param bound the latest sample instant allowed now, ms.
   * @param now the object's clock, ms.
   * @param samplesDropped true when the store dropped samples of the hours after the bound.
   * @returns true when something was repaired (then `process` has work waiting).
   */
  repairFuture(bound: number, now: number, samplesDropped: boolean): boolean {
    const boundHour = hourStart(bound);
    let repaired = samplesDropped;
    const lastSample = this.tables.lastSampleAt();
    if (samplesDropped || (lastSample !== null && lastSample > bound)) {
      for (const rule of [COUNT_RULE, ANALOG_RULE] as RuleId[]) {
        this.tables.clearHours(rule, boundHour, Number.MAX_SAFE_INTEGER);
      }
      this.rebuild(boundHour, boundHour + HOUR_MS);
      repaired = true;
    }
    const lastStop = this.tables.lastDetectedStart();
    if (lastStop !== null && lastStop > bound) repaired = true;
    if (this.tables.cutPending(bound + 1)) repaired = true;
    const wake = this.tables.wakeAt();
    if (wake !== null && wake > now + MAX_WAKE_AHEAD_MS) {
      this.tables.setWakeAt(null);
      repaired = true;
    }
    if (repaired) {
      this.tables.addPending(boundHour, bound + 1);
      log("warn", "stop_detection_repaired", {
        machine: this.tables.machine(),
        after: new Date(bound).toISOString(),
      });
    }
    return repaired;
  }

  private retryAt: number | null = null;
  /**
   * Per rule, the last sample whose run was evaluated after its silence was over: a late
   * batch further back needs no wake for it (in memory: after a restart, one wake more).
   */
  private readonly tailSettled = new Map<RuleId, number>();
  private safetyArmed = false;
  /**
   * The object's alarm as this detector last set or saw it (undefined: not read yet), so
   * that an ingestion does not read and write the alarm each time.
   */
  private alarmAt: number | null | undefined = undefined;

  /** Records the object's alarm after someone else set it (the signal storage's own alarm). */
  noteAlarm(at: number | null): void {
    this.alarmAt = at;
  }

  /**
   * Sets the object's alarm to `at` unless it is set earlier already (a later one is moved).
   *
   * @returns the alarm it moved (null: none, or one already past), or undefined when it
   *   left the alarm as it was.
   */
  private async alarmBy(at: number | null): Promise<number | null | undefined> {
    if (at === null) return undefined;
    this.alarmAt ??= await this.storage.getAlarm();
    if (this.alarmAt !== null && this.alarmAt <= at && this.alarmAt > Date.now()) return undefined;
    const moved = this.alarmAt !== null && this.alarmAt > Date.now() ? this.alarmAt : null;
    this.alarmAt = at;
    await this.storage.setAlarm(at);
    return moved;
  }

  /**
   * The safety alarm this detector set after an ingestion, and the alarm it moved then (null:
   * none); null when there is none to give back.
   */
  private safety: { at: number; moved: number | null } | null = null;

  /** Sets an alarm soon after an ingestion, so that an object gone before `process` ends resumes. */
  protected armSafety(): void {
    if (this.safetyArmed) return;
    this.safetyArmed = true;
    const at = Date.now() + SAFETY_MS;
    this.background(
      this.alarmBy(at).then((moved) => {
        if (moved !== undefined) this.safety = { at, moved };
      }),
    );
  }

  /**
   * Gives the safety alarm back once nothing waits (no stretch, no burst, no retry): the
   * object's alarm goes to the earliest of the detector's next wake, the alarm the safety
   * one moved and what the rest of the object wants (`otherAlarm`: the signal storage's
   * archive and retention step, which a safety alarm that fired would run an hour early,
   * reading the company's settings from D1, once per backfill). None of them: no alarm.
   */
  private async giveBackSafety(): Promise<void> {
    const safety = this.safety;
    if (safety === null || this.alarmAt !== safety.at) return;
    if (this.burst || this.retryAt !== null || this.tables.hasPending()) return;
    const wanted = [this.nextAlarm(), safety.moved, this.otherAlarm()].filter(
      (t): t is number => t !== null && t > Date.now(),
    );
    this.safety = null;
    this.safetyArmed = false;
    const at = wanted.length === 0 ? null : Math.min(...wanted);
    this.alarmAt = at;
    if (at === null) await this.storage.deleteAlarm();
    else await this.storage.setAlarm(at);
  }
}
