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
interface ClosedFragment {
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
interface OpenFragment {
  s: number;
  d: number;
  g: number | null;
  p: boolean;
}

/** An hour folded from one incoming state. */
interface HourVariant {
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
function foldVariant(
  ts: ArrayLike<number>,
  classes: ArrayLike<SampleClass>,
  initial: State,
  maxGapMs: number,
): HourVariant {
  // One pass over up to 180,000 samples an ingestion, as cheap as the block's own encoding:
  // plain locals for the run going on (no closure over them, no object, no null among the
  // numbers: NaN stands for "no gap"); objects only when a run ends. The rule's constants
  // are read once: a module that is compiled to CommonJS (tsx) reads an imported constant
  // through a getter, which made this loop ten times slower.
  const band = BAND;
  const down = DOWN;
  const up = UP;
  const frags: ClosedFragment[] = [];
  const n = ts.length;
  let open = false;
  let openS = 0;
  let openD = 0;
  let openG = Number.NaN;
  let openP = false;
  let lastT = Number.NaN;
  let lastGap = Number.NaN;
  let cur: State = initial;
  for (let i = 0; i < n; i++) {
    const t = ts[i] as number;
    const raw = classes[i] as SampleClass;
    let continuous = true;
    let gap = Number.NaN;
    if (i > 0) {
      gap = t - lastT;
      if (gap > maxGapMs) {
        continuous = false;
        if (open) {
          pushFragment(frags, openS, openD, openG, null, openP, maxGapMs);
          open = false;
        }
      }
    }
    const state: State = raw === band ? (continuous ? cur : up) : raw;
    if (state === down) {
      if (!open) {
        open = true;
        openS = t;
        openP = i === 0;
      }
      openD = t;
      openG = gap;
    } else if (open) {
      pushFragment(frags, openS, openD, openG, t, openP, maxGapMs);
      open = false;
    }
    lastGap = gap;
    lastT = t;
    cur = state;
  }
  return {
    frags,
    open: open ? { s: openS, d: openD, g: Number.isNaN(openG) ? null : openG, p: openP } : null,
    lastT,
    lastGap: Number.isNaN(lastGap) ? null : lastGap,
    cur,
  };
}

/** Keeps a run that ended inside the hour, unless it is inside the hour and too short ever to be a stop. */
function pushFragment(
  frags: ClosedFragment[],
  s: number,
  d: number,
  gap: number,
  e: number | null,
  p: boolean,
  maxGapMs: number,
): void {
  const g = Number.isNaN(gap) ? null : gap;
  const end = e ?? d + cover(g, maxGapMs);
  if (p || end - s >= MIN_RUN_MS) frags.push({ s, d, g, e, p });
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
