/**
 * The OEE figures of one machine x shift instance, as pure functions.
 *
 * Source: `docs/metrics.md` of this project ("How the metrics report computes
 * OEE"), which follows the standard OEE model (Availability x
 * Performance x Quality, oee.com / Vorne) and ISO 22400-2 (availability =
 * APT / PBT, effectiveness, quality ratio). Times are minutes (floating point),
 * ratios are fractions; a ratio whose denominator is 0 is reported as 0.
 */

const MS_PER_MINUTE = 60_000;

/** A stop as the report sees it; instants in ms since the epoch. */
export interface StopSpan {
  start: number;
  /** null = open: runs until min(now, end of the instance). */
  end: number | null;
  isProgrammed: boolean;
  isIncludedInAvailability: boolean;
  /** True when the stop has a classification (for annotatedDowntime). */
  isClassified: boolean;
}

/** A production log as the report sees it; instants in ms since the epoch. */
export interface LogSpan {
  start: number;
  end: number;
  type: "correct" | "defects" | "total";
  /** Items in SKU units (sensorCount x countingFactor). */
  count: number;
  /** SKU units per minute. */
  nominalSpeed: number;
}

/** The `shiftIndicators` of a report row (minutes and fractions), without `indicatorId`. */
export interface ShiftIndicators {
  availableTime: number;
  programmedDowntime: number;
  nonProgrammedDowntime: number;
  otherStopsTime: number;
  lateStartTime: number;
  earlyStopTime: number;
  noDataTime: number;
  unavailableTime: number;
  annotatedDowntime: number;
  availability: number;
  netAvailability: number;
}

/** The `productionMetrics` of a report row. */
export interface ProductionMetrics {
  availability: number;
  netAvailability: number;
  effectiveness: number;
  quality: number;
  oee: number;
  netOee: number;
  minutesLostByLowSpeed: number;
  minutesLostByLowQuality: number;
}

/** `a / b`, or 0 when `b` is 0 (docs/metrics.md: "A ratio whose denominator is 0 is reported as 0"). */
export function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

/** Time classes in priority order (lower wins). */
const TimeClass = {
  Programmed: 1,
  NonProgrammed: 2,
  OtherStop: 3,
  Production: 4,
  Uncovered: 5,
} as const;
type TimeClass = (typeof TimeClass)[keyof typeof TimeClass];

/**
 * Classifies every minute of the instance window and sums the classes.
 *
 * docs/metrics.md, "The time of one shift instance": each instant of W = [start, end)
 * gets the first matching class of: programmed stop, non-programmed stop
 * included in availability, other stop, production log, uncovered. Stops are
 * clipped to W; an open stop runs until min(now, end). Uncovered time before
 * the first covered instant is late start; after the last covered instant it is
 * early stop, but only once the instance has ended; the rest is no data. An
 * instance with nothing covered counts its whole past part as no data. The
 * future part of a running instance is in no class.
 *
 * Cost: O(n log n) in the number of stops and logs (one sort of their
 * boundaries, then one sweep).
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
  const ended = now >= end;

  // A sweep over the sorted boundaries (O(n log n) in spans): between two
  // consecutive boundaries the set of covering spans is constant, so the number
  // of active spans of each kind (starts <= t minus ends <= t, read off sorted
  // arrays with one moving pointer each) gives each elementary segment's class
  // without scanning every span for every segment (which was quadratic).
  // Kinds 1-4 are the time classes; kind 0 is "classified stop" (any stop
  // class: a covering classified stop annotates the segment whichever stop
  // class wins). Typed arrays sort natively, without a comparator.
  const starts: number[][] = [[], [], [], [], []];
  const ends: number[][] = [[], [], [], [], []];
  const bounds: number[] = [start, pastEnd];
  const add = (kind: number, from: number, to: number) => {
    starts[kind]?.push(from);
    ends[kind]?.push(to);
  };
  for (const s of stops) {
    const from = Math.max(s.start, start);
    const to = Math.min(s.end ?? pastEnd, end);
    if (to <= from) continue;
    const cls: TimeClass = s.isProgrammed
      ? TimeClass.Programmed
      : s.isIncludedInAvailability
        ? TimeClass.NonProgrammed
        : TimeClass.OtherStop;
    add(cls, from, to);
    if (s.isClassified) add(0, from, to);
    bounds.push(from, to);
  }
  for (const l of logs) {
    const from = Math.max(l.start, start);
    const to = Math.min(l.end, end);
    if (to <= from) continue;
    add(TimeClass.Production, from, to);
    bounds.push(from, to);
  }
  const sortedStarts = starts.map((list) => Float64Array.from(list).sort());
  const sortedEnds = ends.map((list) => Float64Array.from(list).sort());
  const startIndex = [0, 0, 0, 0, 0];
  const endIndex = [0, 0, 0, 0, 0];
  /** Spans of `kind` covering [t, next boundary): advances that kind's pointers to t. */
  const activeAt = (kind: number, t: number): number => {
    const ss = sortedStarts[kind] ?? new Float64Array();
    const es = sortedEnds[kind] ?? new Float64Array();
    let si = startIndex[kind] ?? 0;
    let ei = endIndex[kind] ?? 0;
    while (si < ss.length && (ss[si] ?? Number.POSITIVE_INFINITY) <= t) si += 1;
    while (ei < es.length && (es[ei] ?? Number.POSITIVE_INFINITY) <= t) ei += 1;
    startIndex[kind] = si;
    endIndex[kind] = ei;
    return si - ei;
  };
  const sortedBounds = Float64Array.from(bounds).sort();
  const points: number[] = [];
  for (const t of sortedBounds) {
    if (t >= start && t <= end && t !== points[points.length - 1]) points.push(t);
  }

  const totals = new Map<TimeClass, number>();
  let annotated = 0;
  const segments: { from: number; to: number; cls: TimeClass }[] = [];
  for (let i = 0; i + 1 < points.length; i += 1) {
    const from = points[i] as number;
    const to = points[i + 1] as number;
    // Every kind's pointers advance on every segment, so each stays monotonic.
    const programmed = activeAt(TimeClass.Programmed, from);
    const nonProgrammed = activeAt(TimeClass.NonProgrammed, from);
    const other = activeAt(TimeClass.OtherStop, from);
    const production = activeAt(TimeClass.Production, from);
    const classifiedActive = activeAt(0, from);
    const cls: TimeClass =
      programmed > 0
        ? TimeClass.Programmed
        : nonProgrammed > 0
          ? TimeClass.NonProgrammed
          : other > 0
            ? TimeClass.OtherStop
            : production > 0
              ? TimeClass.Production
              : TimeClass.Uncovered;
    const classified = classifiedActive > 0;
    // Uncovered time after `now` is the future of a running instance: no class yet.
    if (cls === TimeClass.Uncovered && from >= pastEnd) continue;
    segments.push({ from, to, cls });
    totals.set(cls, (totals.get(cls) ?? 0) + (to - from));
    if (cls <= TimeClass.OtherStop && classified) annotated += to - from;
  }

  let firstCovered: number | undefined;
  let lastCovered: number | undefined;
  for (const s of segments) {
    if (s.cls === TimeClass.Uncovered) continue;
    firstCovered ??= s.from;
    lastCovered = s.to;
  }
  let lateStart = 0;
  let earlyStop = 0;
  let noData = 0;
  for (const s of segments) {
    if (s.cls !== TimeClass.Uncovered) continue;
    const length = s.to - s.from;
    if (firstCovered === undefined || lastCovered === undefined) noData += length;
    else if (s.to <= firstCovered) lateStart += length;
    else if (s.from >= lastCovered) earlyStop += ended ? length : 0;
    else noData += length;
  }

  const minutes = (ms: number) => ms / MS_PER_MINUTE;
  const availableTime = minutes(end - start);
  const programmedDowntime = minutes(totals.get(TimeClass.Programmed) ?? 0);
  const nonProgrammedDowntime = minutes(totals.get(TimeClass.NonProgrammed) ?? 0);
  const otherStopsTime = minutes(totals.get(TimeClass.OtherStop) ?? 0);
  const lateStartTime = minutes(lateStart);
  const earlyStopTime = minutes(earlyStop);
  const noDataTime = minutes(noData);
  const unavailableTime = nonProgrammedDowntime + lateStartTime + earlyStopTime + noDataTime;
  const runTime = availableTime - programmedDowntime - unavailableTime;
  return {
    availableTime,
    programmedDowntime,
    nonProgrammedDowntime,
    otherStopsTime,
    lateStartTime,
    earlyStopTime,
    noDataTime,
    unavailableTime,
    annotatedDowntime: minutes(annotated),
    availability: ratio(runTime, availableTime),
    netAvailability: ratio(runTime, availableTime - programmedDowntime),
  };
}

/**
 * runTime = availableTime - programmedDowntime - unavailableTime (docs/metrics.md):
 * other stops do not reduce availability.
 */
export function runTimeOf(i: ShiftIndicators): number {
  return i.availableTime - i.programmedDowntime - i.unavailableTime;
}

/**
 * The production metrics of one instance from its logs and indicators.
 *
 * docs/metrics.md, "Production of one shift instance": T = sum of `total` counts when
 * the instance has any `total` log, else correct + defects; B = defects;
 * G = max(0, T - B); I = sum of count / nominalSpeed over the logs that make up
 * T. effectiveness = I / runTime (not clamped); quality = G / T;
 * oee = availability x effectiveness x quality; netOee with netAvailability;
 * minutesLostByLowSpeed = max(0, runTime - I); minutesLostByLowQuality = I x B / T.
 *
 * @param indicators the instance's shift indicators.
 * @param logs the logs that belong to the instance (their `start` is inside it).
 */
export function computeProductionMetrics(
  indicators: ShiftIndicators,
  logs: readonly Pick<LogSpan, "type" | "count" | "nominalSpeed">[],
): ProductionMetrics {
  const hasTotal = logs.some((l) => l.type === "total");
  const makeUpTotal = logs.filter((l) => (hasTotal ? l.type === "total" : l.type !== "total"));
  const total = makeUpTotal.reduce((sum, l) => sum + l.count, 0);
  const defects = logs.filter((l) => l.type === "defects").reduce((sum, l) => sum + l.count, 0);
  const good = Math.max(0, total - defects);
  const idealMinutes = makeUpTotal.reduce((sum, l) => sum + ratio(l.count, l.nominalSpeed), 0);
  const runTime = runTimeOf(indicators);
  const effectiveness = ratio(idealMinutes, runTime);
  const quality = ratio(good, total);
  return {
    availability: indicators.availability,
    netAvailability: indicators.netAvailability,
    effectiveness,
    quality,
    oee: indicators.availability * effectiveness * quality,
    netOee: indicators.netAvailability * effectiveness * quality,
    minutesLostByLowSpeed: Math.max(0, runTime - idealMinutes),
    minutesLostByLowQuality: ratio(idealMinutes * defects, total),
  };
}
