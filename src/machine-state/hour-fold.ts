/**
 * One UTC hour of a signal, summarized for detection (docs/machine-state.md, "Only the
 * touched hours"): the down runs inside the hour, and what its first and last samples need
 * to join the hours around it. The store keeps one summary per signal rule and hour beside
 * the samples, rewritten with the hour's block, so that the runs of any stretch of history
 * are found from these summaries without decoding another hour's samples.
 *
 * Each summary is folded once with an incoming state of up and, when the hour opens in the
 * analog rule's hysteresis band, once more with down: the hour before decides which one
 * holds (`runs.ts`).
 */
import { BAND, cover, DOWN, MIN_RUN_MS, type SampleClass, type State, UP } from "./rules";

/** A down run that ends inside the hour. Instants in ms. */
export interface ClosedFragment {
  /** Instant of its first down sample. */
  s: number;
  /** Instant of its last down sample. */
  d: number;
  /** ms from the sample before `d` to `d`; null when `d` is the hour's first sample. */
  g: number | null;
  /** Instant of the up sample that ended it; null when a silence ended it. */
  e: number | null;
  /** True when it begins at the hour's first sample (it may go on from the hour before). */
  p: boolean;
}

/** The down run still going at the hour's last sample. */
export interface OpenFragment {
  s: number;
  d: number;
  g: number | null;
  p: boolean;
}

/** An hour folded from one incoming state. */
export interface HourVariant {
  /** Closed runs, in order; runs shorter than `MIN_RUN_MS` that neither begin nor end at an edge of the hour are left out. */
  frags: ClosedFragment[];
  /** The run going on at the last sample, if any. */
  open: OpenFragment | null;
  /** The hour's last sample's instant. */
  lastT: number;
  /** ms from the sample before the last one to it; null when the hour has one sample. */
  lastGap: number | null;
  /** The state at the last sample. */
  cur: State;
}

/** One hour of one signal rule. */
export interface HourSummary {
  /** The hour's start, ms. */
  hour: number;
  /** Its first sample's instant. */
  firstT: number;
  /** Folded with the machine up before the hour (or after a silence). */
  up: HourVariant;
  /** Folded with the machine down before it; only when the first sample is in the band. */
  down: HourVariant | null;
}

/**
 * Folds an hour's samples from one incoming state.
 *
 * @param ts ascending distinct instants, ms; `classes[i]` what the sample at `ts[i]` says.
 * @param initial the state a first sample in the band takes.
 * @param maxGapMs the longest silence inside one stretch of data, ms.
 */
export function foldVariant(
  ts: ArrayLike<number>,
  classes: ArrayLike<SampleClass>,
  initial: State,
  maxGapMs: number,
): HourVariant {
  const frags: ClosedFragment[] = [];
  let open: OpenFragment | null = null;
  let lastT = Number.NaN;
  let lastGap: number | null = null;
  let cur: State = initial;
  const close = (f: OpenFragment, e: number | null) => {
    const end = e ?? f.d + cover(f.g, maxGapMs);
    // A run wholly inside the hour and shorter than any threshold can never be a stop.
    if (f.p || end - f.s >= MIN_RUN_MS) frags.push({ s: f.s, d: f.d, g: f.g, e, p: f.p });
  };
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i] as number;
    let gap: number | null = null;
    let continuous = true;
    if (i > 0) {
      gap = t - lastT;
      continuous = gap <= maxGapMs;
      if (!continuous && open) {
        close(open, null);
        open = null;
      }
    }
    const raw = classes[i] as SampleClass;
    const state: State = raw === BAND ? (continuous ? cur : UP) : raw;
    if (state === DOWN) {
      if (open) {
        open.d = t;
        open.g = gap;
      } else open = { s: t, d: t, g: gap, p: i === 0 };
    } else if (open) {
      close(open, t);
      open = null;
    }
    lastGap = gap;
    lastT = t;
    cur = state;
  }
  return { frags, open, lastT, lastGap, cur };
}

/**
 * Summarizes one hour of one signal rule.
 *
 * @param hour the hour's start, ms; `ts` its samples' instants (ascending, distinct, at
 *   least one), `classes` what each says.
 */
export function summarizeHour(
  hour: number,
  ts: ArrayLike<number>,
  classes: ArrayLike<SampleClass>,
  maxGapMs: number,
): HourSummary {
  return {
    hour,
    firstT: ts[0] as number,
    up: foldVariant(ts, classes, UP, maxGapMs),
    down: classes[0] === BAND ? foldVariant(ts, classes, DOWN, maxGapMs) : null,
  };
}
