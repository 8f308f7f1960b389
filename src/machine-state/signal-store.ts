/**
 * The `SignalStore` Durable Object as deployed: the machine's signal storage
 * (src/resources/signals/store.ts) with its stop detector (./detector.ts) inside, so that the
 * detector sees every sample of the count signal as it is stored, without a call or a read
 * of its own (docs/machine-state.md). The operator API reaches the detector through the
 * methods below: settings, and the changes of recorded stops and shifts it must know.
 */

import type { MachineKey } from "../db/machines";
import { namedStub } from "../durable/named-stub";
import type { Env } from "../env";
import { latestSampleAt } from "../resources/signals/sample-bounds";
import {
  type IngestContext,
  SignalSampleStore,
  type WrittenBlock,
} from "../resources/signals/store";
import { HOUR_MS, hourStart } from "../time/units";
import { Detector } from "./detector";
import { type DetectionSettings, REEVALUATE_MS, type StoredSettings } from "./rules";
import { SIGNAL_STORE_MIGRATIONS } from "./signal-store-migrations";

/** A change of a stop recorded through the operator API, as the detector needs it. */
export interface RecordedStopChange {
  id: number;
  /**
   * The stop's own times now, as recorded (before, for a deletion: the times it showed,
   * with the detected downtime it took in).
   */
  start: number;
  end: number | null;
  /** The times it showed before an edit, so that both stretches are evaluated again. */
  previous?: { start: number; end: number | null };
  /**
   * `recorded`: a recorded stop created or edited (a detected stop a person edited becomes
   * one); `deleted`: a recorded stop deleted; `dismissed`: a detected stop a person deleted.
   */
  kind: "recorded" | "deleted" | "dismissed";
}

export class SignalStore extends SignalSampleStore {
  /** The machine's stop detector (subclasses observe it: test/fixtures/observed-signal-store.ts). */
  protected readonly detector: Detector;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env, SIGNAL_STORE_MIGRATIONS);
    this.detector = new Detector(
      ctx.storage,
      env,
      (work) => ctx.waitUntil(work),
      () => this.storageNextAt(),
    );
    // A machine that received samples from the future before they were refused is repaired
    // as it wakes: the store dropped those samples (its constructor), the detector repairs
    // its summaries, stretches, wake and stops after the bound, and the alarm, set for now,
    // evaluates the repaired history (D1 is not called here).
    const now = Date.now();
    if (this.detector.repairFuture(latestSampleAt(now), now, this.futureDropped)) {
      void ctx.blockConcurrencyWhile(() => ctx.storage.setAlarm(Date.now()));
    }
  }

  protected override blocksWritten(
    signalId: number,
    blocks: readonly WrittenBlock[],
    context: IngestContext | undefined,
  ): void {
    this.detector.onBlocks(signalId, blocks, context);
  }

  override async alarm(): Promise<void> {
    await this.detector.onAlarm();
    await this.storageAlarm();
    // The signal storage's alarm may have set a later one: the detector's wins when earlier.
    const at = this.detector.nextAlarm();
    let current = await this.ctx.storage.getAlarm();
    if (at !== null && (current === null || current > at)) {
      await this.ctx.storage.setAlarm(at);
      current = at;
    }
    this.detector.noteAlarm(current);
  }

  /** The machine's detection settings (defaults when never set). */
  detectionSettings(): StoredSettings {
    return this.detector.tables.settings();
  }

  /**
   * Sets the machine's detection settings. Summaries of the last `REEVALUATE_MS` are
   * rebuilt from the samples with them when what they depend on changed (the gap, the analog
   * rule, on or off; a new threshold keeps them) and evaluated again; older stops keep the
   * settings they were detected with.
   *
   * @param analogSignalId the internal id of the analog rule's signal (null without one).
   */
  async configureDetection(
    machine: MachineKey,
    settings: DetectionSettings,
    analogSignalId: number | null,
  ): Promise<StoredSettings> {
    const tables = this.detector.tables;
    tables.setMachine(machine.companyId, machine.machineId);
    const stored = { ...settings, analogSignalId };
    tables.setSettings(stored);
    const now = Date.now();
    const from = hourStart(now - REEVALUATE_MS);
    this.detector.rebuild(from, now + HOUR_MS, true);
    await this.detector.process();
    return tables.settings();
  }

  /**
   * A recorded stop of the machine was created, edited or deleted, or a person took over
   * or deleted a detected stop: the detector keeps its copy and evaluates the stretches.
   */
  async recordedStopChanged(machine: MachineKey, change: RecordedStopChange): Promise<void> {
    const tables = this.detector.tables;
    tables.setMachine(machine.companyId, machine.machineId);
    const taken = tables.detectedByStopId(change.id);
    if (taken) tables.forgetDetected(taken.key);
    if (change.kind === "deleted") {
      tables.removeRecorded(change.id);
      tables.forgetMerge(change.id);
    } else {
      tables.putRecorded(change.id, change.start, change.end, change.kind === "dismissed");
      // An edit writes the stop's own times alone: D1 shows no taken-in downtime until the
      // evaluation below takes it in again.
      if (tables.merge(change.id)) tables.mergeSynced(change.id, null);
    }
    const now = Date.now();
    for (const span of [change, change.previous]) {
      if (span) tables.addPending(span.start, (span.end ?? now) + 1);
    }
    await this.detector.process();
  }

  /**
   * The machine's shifts changed: the plan is read again and the whole history evaluated
   * again (a new definition has instances in the past too), from the summaries alone.
   */
  async planChanged(machine: MachineKey): Promise<void> {
    const tables = this.detector.tables;
    tables.setMachine(machine.companyId, machine.machineId);
    tables.setPlan(null);
    const now = Date.now();
    tables.addPending(tables.firstHour() ?? now, now + 1);
    await this.detector.process();
  }
}

/**
 * The stub of a machine's store with its detector (`<companyId>:<machineId>`).
 *
 * @returns a stub; creating it makes no call.
 */
export function machineStateStore(
  env: Pick<Env, "SIGNAL_STORE">,
  companyId: number,
  machineId: number,
): DurableObjectStub<SignalStore> {
  return namedStub(env.SIGNAL_STORE, `${companyId}:${machineId}`);
}
