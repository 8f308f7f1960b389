/**
 * The time of one shift instance (docs/metrics.md, "The time of one shift instance"): every
 * instant of W = [start, end) sorted into one class (programmed stop, non-programmed stop,
 * other stop, production, uncovered: late start, early stop, no data), summed into the
 * shift indicators, a pure function. The figures it ends with are `oeeFigures`' (./oee.ts).
 */
import { type LogSpan, minutesOf, oeeFigures, type ShiftIndicators, type StopSpan } from "./oee";

/** Time classes in priority order (lower wins). */
const TimeClass = {
  Programmed: 1,
  NonProgrammed: 2,
  OtherStop: 3,
  Production: 4,
  Uncovered: 5,
} as const;
type TimeClass = (typeof TimeClass)[keyof typeof TimeClass];

/** The record kind of classified stops (for the annotated time), beside TimeClass 1-4. */
const CLASSIFIED = 0;
/** Record kinds: classified stops and the four covering TimeClass values. */
const KINDS = 5;

/**
 * Classifies every instant of the instance window and sums the classes.
 *
 * docs/metrics.md, "The time of one shift instance": each instant of W = [start, end)
 * gets the first matching class of: programmed stop, non-programmed stop
 * included in availability, other stop, production log, uncovered. Stops and
 * logs are clipped to the elapsed part of W, [start, min(now, end)); an open
 * stop runs until min(now, end). Uncovered time before
 * the first covered instant is late start; after the last covered instant it is
 * early stop, but only once the instance has ended; the rest is no data. An
 * instance with nothing covered counts its whole past part as no data. The
 * future part of a running instance is in no class, and its `availableTime` is
 * the elapsed planned time, `min(now, end) - start` (its figures "so far"); an
 * ended instance's is its whole length.
 *
 * Three steps: the records clipped and sorted by kind (`clippedCoverage`), one sweep that
 * classifies each segment between their boundaries (`classifySegments`), the uncovered time
 * split (`splitUncovered`). Cost: O(n log n) in the number of stops and logs (one sort of
 * their boundaries, then one sweep). Raises nothing: a pure function.
 *
 * @param window the instance, `{start, end}` in ms.
 * @param stops the machine's stops overlapping the window (deleted ones excluded by the caller).
 * @param logs the machine's production logs overlapping the window (deleted ones excluded).
 * @param now the current instant, ms.
 * @returns the shift indicators in minutes and fractions.
 */
export function computeShiftIndicators(
  window: { start: number; end: number },
  stops: readonly StopSpan[],
  logs: readonly Pick<LogSpan, "start" | "end">[],
  now: number,
): ShiftIndicators {
  const { start, end } = window;
  const pastEnd = Math.max(start, Math.min(end, now));
  const coverage = clippedCoverage(start, pastEnd, stops, logs);
  const swept = classifySegments(coverage, pastEnd);
  const { lateStart, earlyStop, noData } = splitUncovered(swept, now >= end);

  // "So far": a running instance is measured over its elapsed planned time, not its whole
  // length, so that its figures are those of what has happened (docs/metrics.md). The
  // ratios are taken on whole ms, exact, before the minutes are.
  const available = pastEnd - start;
  const programmed = swept.totals[TimeClass.Programmed] ?? 0;
  const nonProgrammed = swept.totals[TimeClass.NonProgrammed] ?? 0;
  const unavailable = nonProgrammed + lateStart + earlyStop + noData;
  const { availability, netAvailability } = oeeFigures({
    availableTime: available,
    programmedDowntime: programmed,
    unavailableTime: unavailable,
    idealTime: 0,
    total: 0,
    good: 0,
  });
  return {
    availableTime: minutesOf(available),
    programmedDowntime: minutesOf(programmed),
    nonProgrammedDowntime: minutesOf(nonProgrammed),
    otherStopsTime: minutesOf(swept.totals[TimeClass.OtherStop] ?? 0),
    lateStartTime: minutesOf(lateStart),
    earlyStopTime: minutesOf(earlyStop),
    noDataTime: minutesOf(noData),
    unavailableTime: minutesOf(unavailable),
    annotatedDowntime: minutesOf(swept.annotated),
    availability,
    netAvailability,
  };
}

/**
 * The records of an instance by kind, clipped to its elapsed part, ready for the sweep of
 * `classifySegments`: per kind (`CLASSIFIED` and the four covering `TimeClass` values) the
 * starts and the ends of its records, each sorted on its own, and the distinct boundaries of
 * all records within `[start, pastEnd]`, ascending.
 */
interface Coverage {
  /** Per kind, the clipped starts of its records, ascending, ms. */
  sortedStarts: Float64Array[];
  /** Per kind, the clipped ends of its records, ascending, ms. */
  sortedEnds: Float64Array[];
  /** The distinct boundaries, ascending, ms; only the first `pointCount` are set. */
  points: Float64Array;
  pointCount: number;
}

/**
 * Clips every stop and log to the elapsed part of W, `[start, pastEnd)`, and sorts them by
 * kind: a running instance is measured "so far" (a break planned for later in the shift is
 * not yet downtime); an ended instance's elapsed part is the whole of W. A stop is of the
 * class its flags give (programmed, else non-programmed when included in availability, else
 * other stop; docs/metrics.md) and, when classified, also of kind `CLASSIFIED`; an open stop
 * runs to `pastEnd`. A record with nothing left after clipping is dropped.
 *
 * Typed arrays sort natively, without a comparator, which matters for shifts of tens of
 * thousands of logs. Cost: O(n log n) in the number of stops and logs.
 *
 * @param start the instance's start, ms.
 * @param pastEnd the end of its elapsed part, `max(start, min(end, now))`, ms.
 * @param stops the machine's stops overlapping W.
 * @param logs the machine's production logs overlapping W.
 * @returns the records' starts and ends per kind and the sweep's boundaries.
 */
function clippedCoverage(
  start: number,
  pastEnd: number,
  stops: readonly StopSpan[],
  logs: readonly Pick<LogSpan, "start" | "end">[],
): Coverage {
  const starts: number[][] = [[], [], [], [], []];
  const ends: number[][] = [[], [], [], [], []];
  const bounds: number[] = [start, pastEnd];
  const add = (kind: number, from: number, to: number) => {
    starts[kind]?.push(from);
    ends[kind]?.push(to);
  };
  for (const s of stops) {
    const from = Math.max(s.start, start);
    const to = Math.min(s.end ?? pastEnd, pastEnd);
    if (to <= from) continue;
    const cls: TimeClass = s.isProgrammed
      ? TimeClass.Programmed
      : s.isIncludedInAvailability
        ? TimeClass.NonProgrammed
        : TimeClass.OtherStop;
    add(cls, from, to);
    if (s.isClassified) add(CLASSIFIED, from, to);
    bounds.push(from, to);
  }
  const productionStarts = starts[TimeClass.Production] ?? [];
  const productionEnds = ends[TimeClass.Production] ?? [];
  for (const l of logs) {
    const from = Math.max(l.start, start);
    const to = Math.min(l.end, pastEnd);
    if (to <= from) continue;
    productionStarts.push(from);
    productionEnds.push(to);
    bounds.push(from, to);
  }
  const sortedBounds = Float64Array.from(bounds).sort();
  const points = new Float64Array(sortedBounds.length);
  let pointCount = 0;
  for (const t of sortedBounds) {
    if (t >= start && t <= pastEnd && (pointCount === 0 || t !== points[pointCount - 1])) {
      points[pointCount] = t;
      pointCount += 1;
    }
  }
  return {
    sortedStarts: starts.map((list) => Float64Array.from(list).sort()),
    sortedEnds: ends.map((list) => Float64Array.from(list).sort()),
    points,
    pointCount,
  };
}

/** First index of `sorted` at or after `i` whose value is > t (pointers only move forward). */
function advance(sorted: Float64Array, i: number, t: number): number {
  let k = i;
  while (k < sorted.length && (sorted[k] as number) <= t) k += 1;
  return k;
}

/** What the sweep of `classifySegments` found, in ms. */
interface Segments {
  /** Time per `TimeClass` (index 1-5; `Uncovered` includes the future, never read). */
  totals: number[];
  /** Stop time (classes 1-3) that a classified stop covers. */
  annotated: number;
  /** Start of the first and end of the last covered segment; undefined when none is. */
  firstCovered: number | undefined;
  lastCovered: number | undefined;
  /** The uncovered past segments as (from, to) pairs; only the first `uncoveredCount`. */
  uncovered: Float64Array;
  uncoveredCount: number;
}

/**
 * Gives every elementary segment between two consecutive boundaries its class and sums
 * them (docs/metrics.md, "The time of one shift instance": the first matching class of
 * programmed stop, non-programmed stop, other stop, production, uncovered).
 *
 * A sweep: between two boundaries the set of covering records is constant, so the number
 * of active records of each kind (starts <= t minus ends <= t, read off the sorted arrays
 * with one moving pointer each) gives the segment's class without scanning every record for
 * every segment (which was quadratic). A stop segment covered by a classified stop counts
 * as annotated, whichever stop class wins. The loop touches only typed arrays and local
 * numbers (no object per segment). Uncovered segments at or after `pastEnd` (the future of a
 * running instance) are kept out of the uncovered list. Cost: O(n) after the sorts.
 *
 * @param coverage the clipped records and boundaries (`clippedCoverage`).
 * @param pastEnd the end of the instance's elapsed part, ms.
 * @returns the time per class, the annotated time, the covered extent and the uncovered
 *   segments, in ms.
 */
function classifySegments(coverage: Coverage, pastEnd: number): Segments {
  const { sortedStarts, sortedEnds, points, pointCount } = coverage;
  const totals = [0, 0, 0, 0, 0, 0];
  let annotated = 0;
  let firstCovered: number | undefined;
  let lastCovered: number | undefined;
  // Uncovered past segments, as (from, to) pairs, split once the covered extent is known.
  const uncovered = new Float64Array(2 * pointCount);
  let uncoveredCount = 0;
  // Per kind, how many of its sorted starts and ends lie at or before the segment's start:
  // a kind covers the segment while more of its records have started than ended.
  const startsPassed = new Int32Array(KINDS);
  const endsPassed = new Int32Array(KINDS);
  const covers = (kind: number): boolean =>
    (startsPassed[kind] as number) - (endsPassed[kind] as number) > 0;
  for (let i = 0; i + 1 < pointCount; i += 1) {
    const from = points[i] as number;
    const to = points[i + 1] as number;
    // Every kind's counts advance on every segment, so each stays monotonic.
    for (let kind = 0; kind < KINDS; kind += 1) {
      startsPassed[kind] = advance(
        sortedStarts[kind] as Float64Array,
        startsPassed[kind] as number,
        from,
      );
      endsPassed[kind] = advance(
        sortedEnds[kind] as Float64Array,
        endsPassed[kind] as number,
        from,
      );
    }
    const cls: TimeClass = covers(TimeClass.Programmed)
      ? TimeClass.Programmed
      : covers(TimeClass.NonProgrammed)
        ? TimeClass.NonProgrammed
        : covers(TimeClass.OtherStop)
          ? TimeClass.OtherStop
          : covers(TimeClass.Production)
            ? TimeClass.Production
            : TimeClass.Uncovered;
    if (cls === TimeClass.Uncovered) {
      // Uncovered time after `now` is the future of a running instance: no class yet.
      if (from >= pastEnd) continue;
      uncovered[2 * uncoveredCount] = from;
      uncovered[2 * uncoveredCount + 1] = to;
      uncoveredCount += 1;
    } else {
      firstCovered ??= from;
      lastCovered = to;
      if (cls <= TimeClass.OtherStop && covers(CLASSIFIED)) annotated += to - from;
    }
    totals[cls] = (totals[cls] ?? 0) + (to - from);
  }
  return { totals, annotated, firstCovered, lastCovered, uncovered, uncoveredCount };
}

/**
 * Splits the uncovered past time of an instance (docs/metrics.md, "The time of one shift
 * instance"): before the first covered instant it is late start; after the last covered
 * instant it is early stop, but only once the instance has ended (while it runs, that time
 * is not counted yet: it may still become production; docs/metrics.md, "A running instance:
 * its figures so far"); between them, no data. An instance with nothing covered counts all
 * of it as no data.
 *
 * @param segments the sweep's result (`classifySegments`).
 * @param ended whether the instance has ended (`now >= end`).
 * @returns late start, early stop and no-data time, ms.
 */
function splitUncovered(
  segments: Segments,
  ended: boolean,
): { lateStart: number; earlyStop: number; noData: number } {
  const { firstCovered, lastCovered, uncovered, uncoveredCount } = segments;
  let lateStart = 0;
  let earlyStop = 0;
  let noData = 0;
  for (let k = 0; k < uncoveredCount; k += 1) {
    const from = uncovered[2 * k] as number;
    const to = uncovered[2 * k + 1] as number;
    const length = to - from;
    if (firstCovered === undefined || lastCovered === undefined) noData += length;
    else if (to <= firstCovered) lateStart += length;
    else if (from >= lastCovered) earlyStop += ended ? length : 0;
    else noData += length;
  }
  return { lateStart, earlyStop, noData };
}
