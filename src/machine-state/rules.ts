/**
 * The rules that turn a machine's samples into states (docs/machine-state.md): what a sample
 * of the `count` signal or of the analog signal says about the machine, the settings of
 * detection, their defaults and bounds. Pure: the hour fold (`hour-fold.ts`) and the run
 * composition (`runs.ts`) apply them.
 */

/** A sample that says the machine produced (a piece counted, or the analog value high). */
export const UP = 0;
/** A sample that says the machine did not produce (no piece, or the analog value low). */
export const DOWN = 1;
/** An analog value inside the hysteresis band: the machine keeps the state it had. */
export const BAND = 2;

/** What one sample says, before the band is resolved. */
export type SampleClass = typeof UP | typeof DOWN | typeof BAND;
/** The machine's state at a sample. */
export type State = typeof UP | typeof DOWN;

/** The rule one signal is read with. */
export type SignalRule =
  | { kind: "count" }
  | {
      kind: "analog";
      /** Below this value the machine is down (the signal's own unit). */
      threshold: number;
      /** The machine is up again from `threshold + hysteresis` on. */
      hysteresis: number;
    };

/** The rules of a machine, as the operator sets them (`PUT .../stop-detection`). */
export interface DetectionSettings {
  /** Whether the store detects stops at all; default true. */
  enabled: boolean;
  /** Shortest detected stop, seconds; default 300. */
  stopThresholdSeconds: number;
  /**
   * Longest time between two samples that still counts as one stretch of data, seconds;
   * default 300. A longer silence is no data, never a stop.
   */
  maxSampleGapSeconds: number;
  /** The optional analog rule: a named signal of the machine, down below its threshold. */
  analog: { signal: string; threshold: number; hysteresis: number } | null;
}

/** The settings of a machine nobody configured: the count rule, 300 s, 300 s. */
export const DEFAULT_SETTINGS: DetectionSettings = {
  enabled: true,
  stopThresholdSeconds: 300,
  maxSampleGapSeconds: 300,
  analog: null,
};

/**
 * Shortest threshold the operator may set, seconds. Down runs shorter than this that lie
 * inside one hour are not kept in the hour summaries (`hour-fold.ts`), since no setting can
 * make them a stop.
 */
export const MIN_THRESHOLD_SECONDS = 60;
/** Longest threshold, seconds (a day). */
export const MAX_THRESHOLD_SECONDS = 86_400;
/** Bounds of `maxSampleGapSeconds`: one second to a day. */
export const MIN_SAMPLE_GAP_SECONDS = 1;
export const MAX_SAMPLE_GAP_SECONDS = 86_400;

/** `MIN_THRESHOLD_SECONDS` in ms. */
export const MIN_RUN_MS = MIN_THRESHOLD_SECONDS * 1_000;

/**
 * What one sample says.
 *
 * Count rule: the value is the number of pieces counted from the sample's instant to the
 * next sample's (the same reading as a production log's `sensorCount`, the sum of the values
 * of the samples inside it): more than 0 is production, 0 or less is none.
 * Analog rule: below `threshold` down, from `threshold + hysteresis` on up, between them
 * the state before.
 */
export function classify(rule: SignalRule, value: number): SampleClass {
  if (rule.kind === "count") return value > 0 ? UP : DOWN;
  if (value < rule.threshold) return DOWN;
  return value >= rule.threshold + rule.hysteresis ? UP : BAND;
}

/**
 * How long a down sample followed by a silence longer than the gap stands for, ms: the
 * time since the sample before it (the sampling period it kept), when that was within the
 * gap; otherwise nothing.
 *
 * @param gapBefore ms from the sample before to this one, or null when there is none.
 * @param maxGapMs the settings' `maxSampleGapSeconds` in ms.
 */
export function cover(gapBefore: number | null, maxGapMs: number): number {
  return gapBefore !== null && gapBefore <= maxGapMs ? gapBefore : 0;
}

/** How far back a change of settings or shifts is evaluated again, ms (the reports' default week). */
export const REEVALUATE_MS = 7 * 86_400_000;

/** Settings as the store keeps them: the operator's, and the analog signal's id. */
export type StoredSettings = DetectionSettings & { analogSignalId: number | null };
