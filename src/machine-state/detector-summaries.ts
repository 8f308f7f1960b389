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
   * @param otherAlarm when the rest of the object wants its alarm next, ms (null: never).
   */
  constructor(
    protected readonly storage: DurableObjectStorage,
    protected readonly env: Env,
    protected readonly background: (work: Promise<unknown>) => void,
    protected readonly otherAlarm: () => number | null = () => null,
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

  /** The rules whose first summaries `onBlocks` looked for in this lifetime. */
  private readonly basisChecked = new Set<RuleId>();

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
        // The count rule's summaries are now of two signals: not what either one makes.
        if (this.tables.countSignal() !== null) this.tables.setSummarized(COUNT_RULE, null);
        this.tables.setCountSignal(signalId);
      }
    }
    const found = this.ruleOf(signalId, context?.countSignal);
    if (!found) return;
    const [rule, signalRule] = found;
    // A rule's first summaries: all of them are made with the settings of now. (Asked once
    // per rule and lifetime: a store from before the basis was kept learns it at a PUT.)
    if (!this.basisChecked.has(rule)) {
      this.basisChecked.add(rule);
      if (this.tables.summarized(rule) === null && !this.tables.hasHours(rule)) {
        this.tables.setSummarized(rule, this.summaryBasis(rule));
      }
    }
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
   * What a rule's hour summaries depend on, as text (equal texts: equal summaries from the
   * same samples): whether detection is on, the gap, the rule's signal and, for the analog
   * rule, its threshold and hysteresis. The stop threshold is not among them: summaries
   * keep every run that may reach it (`MIN_RUN_MS`).
   */
  protected summaryBasis(rule: RuleId): string {
    const s = this.tables.settings();
    return JSON.stringify(
      rule === COUNT_RULE
        ? [s.enabled, s.maxSampleGapSeconds, this.tables.countSignal()]
        : [s.enabled, s.maxSampleGapSeconds, s.analogSignalId, s.analog],
    );
  }

  /**
   * Rebuilds the rules' summaries over `[from, to)` from the stored samples (after a change
   * of settings, a repair), and marks the stretch to evaluate.
   *
   * @param reuse true (a change of settings over the last `REEVALUATE_MS`) keeps a rule's
   *   summaries when what they depend on did not change (`summaryBasis`): the same summaries
   *   would come out, and no block of samples is decoded for them.
   */
  rebuild(from: number, to: number, reuse = false): void {
    const settings = this.tables.settings();
    const gapMs = settings.maxSampleGapSeconds * 1_000;
    const signals: [RuleId, number | null][] = [
      [COUNT_RULE, this.tables.countSignal()],
      [ANALOG_RULE, settings.analogSignalId],
    ];
    for (const [rule, signalId] of signals) {
      const basis = this.summaryBasis(rule);
      if (reuse && this.tables.summarized(rule) === basis) continue;
      if (reuse) this.tables.setSummarized(rule, basis);
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
