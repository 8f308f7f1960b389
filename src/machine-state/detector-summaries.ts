/**
 * The detector's intake (docs/machine-state.md, "Only the touched hours"): the hour summaries
 * of the count rule and of the analog rule, written in the ingestion's own synchronous step
 * (`onBlocks`) or rebuilt from the stored samples after a change of settings (`rebuild`), and
 * the stretches they touch marked to evaluate. ./detector.ts extends it with the evaluation,
 * the writes and the clock.
 */
import type { Env } from "../env";
import { decodeSamples } from "../resources/signals/blocks";
import type { WrittenBlock } from "../resources/signals/store";
import { HOUR_MS } from "../time/units";
import { summarizeHour } from "./hour-fold";
import { ANALOG_RULE, COUNT_RULE, type RuleId } from "./hour-tables";
import { classify, type SignalRule } from "./rules";
import { DetectorTables } from "./tables";

/** The summaries half of a machine's stop detector, over its `SignalStore`'s storage. */
export abstract class DetectorSummaries {
  readonly tables: DetectorTables;

  /**
   * @param storage the object's storage (SQLite and alarm).
   * @param env the object's bindings.
   * @param background keeps the object alive for work after an answer (`ctx.waitUntil`).
   */
  constructor(
    protected readonly storage: DurableObjectStorage,
    protected readonly env: Env,
    protected readonly background: (work: Promise<unknown>) => void,
  ) {
    this.tables = new DetectorTables(storage.sql);
  }

  /** Evaluates what waits (./detector.ts); never rejects. */
  abstract process(): Promise<void>;

  /** Sets the alarm that covers an evaluation the object might not finish (./detector.ts). */
  protected abstract armSafety(): void;

  /**
   * Evaluates what an ingestion marked: at once when its last sample is recent, else once
   * its burst of calls is over (./detector.ts).
   */
  protected abstract evaluateAfter(lastSample: number): void;

  /** The rule a signal is read with here, or null when detection does not read it. */
  private ruleOf(signalId: number, countSignal: boolean | undefined): [RuleId, SignalRule] | null {
    const settings = this.tables.settings();
    if (!settings.enabled) return null;
    if (countSignal ?? signalId === this.tables.countSignal())
      return [COUNT_RULE, { kind: "count" }];
    if (settings.analog && signalId === settings.analogSignalId) {
      return [
        ANALOG_RULE,
        {
          kind: "analog",
          threshold: settings.analog.threshold,
          hysteresis: settings.analog.hysteresis,
        },
      ];
    }
    return null;
  }

  /**
   * Summarizes the hours an ingestion wrote, in its synchronous step, and marks them to
   * evaluate; `process` evaluates them after the answer (`evaluateAfter`).
   */
  onBlocks(
    signalId: number,
    blocks: readonly WrittenBlock[],
    context: { companyId: number; machineId: number; countSignal: boolean } | undefined,
  ): void {
    if (context) {
      this.tables.setMachine(context.companyId, context.machineId);
      if (context.countSignal && this.tables.countSignal() !== signalId) {
        this.tables.setCountSignal(signalId);
      }
    }
    const found = this.ruleOf(signalId, context?.countSignal);
    if (!found) return;
    const [rule, signalRule] = found;
    const gapMs = this.tables.settings().maxSampleGapSeconds * 1_000;
    for (const block of blocks) this.summarize(rule, signalRule, gapMs, block);
    const first = blocks[0];
    const last = blocks[blocks.length - 1];
    if (!first || !last) return;
    this.tables.addPending(first.hour, last.hour + HOUR_MS);
    this.armSafety();
    this.evaluateAfter(last.merged.ts[last.merged.ts.length - 1] ?? last.hour);
  }

  private summarize(
    rule: RuleId,
    signalRule: SignalRule,
    gapMs: number,
    block: WrittenBlock,
  ): void {
    const { ts, values } = block.merged;
    if (ts.length === 0) return;
    const classes = new Uint8Array(values.length);
    if (signalRule.kind === "count") {
      // The count rule inline (`classify`'s): this runs over every sample of the hour.
      for (let i = 0; i < values.length; i++) classes[i] = (values[i] as number) > 0 ? 0 : 1;
    } else {
      for (let i = 0; i < values.length; i++)
        classes[i] = classify(signalRule, values[i] as number);
    }
    this.tables.putHour(
      rule,
      summarizeHour(block.hour, ts, classes as ArrayLike<0 | 1 | 2>, gapMs),
    );
  }

  /**
   * Rebuilds a rule's summaries over `[from, to)` from the stored samples (after a change of
   * settings), and marks the stretch to evaluate.
   */
  rebuild(from: number, to: number): void {
    const settings = this.tables.settings();
    const gapMs = settings.maxSampleGapSeconds * 1_000;
    const signals: [RuleId, number | null][] = [
      [COUNT_RULE, this.tables.countSignal()],
      [ANALOG_RULE, settings.analogSignalId],
    ];
    for (const [rule, signalId] of signals) {
      this.tables.clearHours(rule, from, to);
      if (signalId === null || !settings.enabled) continue;
      const found = this.ruleOf(signalId, rule === COUNT_RULE);
      if (!found) continue;
      const rows = this.storage.sql
        .exec<{ hour: number; n: number; samples: ArrayBuffer | null }>(
          "SELECT hour, n, samples FROM blocks WHERE signal_id = ? AND hour >= ? AND hour < ? ORDER BY hour",
          signalId,
          from,
          to,
        )
        .toArray();
      for (const r of rows) {
        if (r.samples === null) continue;
        this.summarize(rule, found[1], gapMs, {
          hour: r.hour,
          merged: decodeSamples(r.hour, r.n, r.samples),
        });
      }
    }
    this.tables.addPending(from, to);
  }
}
