/**
 * The OEE figures of one machine x shift instance (and of any sum of them) as pure functions:
 * the one home of the time classes, run time, availability and the OEE figure list, used by
 * the metrics report, the KPI report, the live stream and the board. The standard model
 * (availability x performance x quality) in ISO 22400-2's vocabulary; minutes on the wire (ms
 * inside), ratios as fractions, null without a denominator. Formulas and the glossary of our
 * fields against the standard terms (`netAvailability`, `netOee` are the usual definitions):
 * docs/metrics.md ("Glossary", "The time of one shift instance").
 */

/** Milliseconds in a minute: every duration is ms inside and minutes on the wire. */
const MS_PER_MINUTE = 60_000;

/** A duration in ms as report minutes (floating point, never rounded). */
export function minutesOf(ms: number): number {
  return ms / MS_PER_MINUTE;
}

/** Report minutes back to whole ms (instants are whole ms, so this is exact). */
export function msOf(minutes: number): number {
  return Math.round(minutes * MS_PER_MINUTE);
}

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

/**
 * The times of a report row's `shiftIndicators`, in the order it shows them (docs/metrics.md,
 * "The time of one shift instance"): the one list of them, with which the KPI report's
 * additive figures begin (./kpi-figures.ts).
 */
export const SHIFT_TIMES = [
  "availableTime",
  "programmedDowntime",
  "nonProgrammedDowntime",
  "otherStopsTime",
  "lateStartTime",
  "earlyStopTime",
  "noDataTime",
  "unavailableTime",
  "annotatedDowntime",
] as const;

/**
 * The `shiftIndicators` of a report row, without `indicatorId`: each of `SHIFT_TIMES` in
 * minutes, and availability and net availability as fractions (null without a denominator).
 */
export type ShiftIndicators = Record<(typeof SHIFT_TIMES)[number], number> & {
  availability: number | null;
  netAvailability: number | null;
};

/**
 * The OEE figures, the one list: a report row's `productionMetrics`, a KPI group, the live
 * `oee` event and the board show these, with these definitions (the schemas' descriptions).
 * Each is a fraction, null when its denominator is 0 (`oeeFigures`).
 */
export const OEE_FIGURES = {
  availability: "runTime / availableTime",
  netAvailability: "runTime / plannedTime (availableTime - programmedDowntime)",
  effectiveness: "ideal minutes / runTime; not clamped (above 1: the nominal speed is too low)",
  quality: "good / total count",
  oee: "availability x effectiveness x quality (good ideal minutes / availableTime)",
  netOee: "netAvailability x effectiveness x quality (good ideal minutes / plannedTime)",
} as const;

export type OeeFigure = keyof typeof OEE_FIGURES;

/**
 * The OEE figures of an instance or a group, and whether its effectiveness says the
 * machine ran above its nominal speed (`aboveNominalSpeed`).
 */
export type OeeFigures = Record<OeeFigure, number | null> & { aboveNominalSpeed: boolean };

/**
 * The `aboveNominalSpeed` flag's definition, for the schemas that show it beside the
 * figures (report rows, KPI groups, the live `oee` event).
 */
export const ABOVE_NOMINAL_SPEED =
  "true when effectiveness is above 1: the machine made more than its nominal speed allows " +
  "in its run time, which says the nominal speed is set too low (the figures are unchanged)";

/**
 * Whether an effectiveness says the machine ran above its nominal speed: above 1
 * (docs/metrics.md, "Speed above nominal"). Effectiveness is a ratio of whole
 * milliseconds and items, so a run exactly at nominal speed is exactly 1 and is not
 * flagged. Null (no run time) is not above.
 *
 * @param effectiveness ideal time / run time, or null.
 */
function isAboveNominalSpeed(effectiveness: number | null): boolean {
  return effectiveness !== null && effectiveness > 1;
}

/** The `productionMetrics` of a report row. */
export interface ProductionMetrics extends OeeFigures {
  minutesLostByLowSpeed: number;
  minutesLostByLowQuality: number;
}

/**
 * `a / b`, or null when `b` is 0 (docs/metrics.md, "A figure without a denominator"): a
 * shift without production has no quality, not a quality of 0, which would read as "all
 * scrap".
 */
export function fraction(a: number, b: number): number | null {
  return b === 0 ? null : a / b;
}

/**
 * What the OEE figures are ratios of, for one instance or summed over a group: times in
 * any one unit (the KPI report sums ms), counts in items.
 */
interface OeeBasis {
  availableTime: number;
  programmedDowntime: number;
  unavailableTime: number;
  /** I: count / nominalSpeed summed over the logs that make up T. */
  idealTime: number;
  /** T. */
  total: number;
  /** G. */
  good: number;
}

/**
 * runTime = availableTime - programmedDowntime - unavailableTime (docs/metrics.md): other
 * stops do not reduce availability.
 */
export function runTimeOf(
  b: Pick<OeeBasis, "availableTime" | "programmedDowntime" | "unavailableTime">,
): number {
  return b.availableTime - b.programmedDowntime - b.unavailableTime;
}

/** plannedTime = availableTime - programmedDowntime (ISO planned busy time). */
export function plannedTimeOf(b: Pick<OeeBasis, "availableTime" | "programmedDowntime">): number {
  return b.availableTime - b.programmedDowntime;
}

/**
 * The OEE figures of a basis (docs/metrics.md): availability = runTime / availableTime,
 * netAvailability = runTime / plannedTime, effectiveness = I / runTime (not clamped),
 * quality = G / T, oee = availability x effectiveness x quality and netOee =
 * netAvailability x effectiveness x quality. The products are computed as fully
 * productive time over their base, I x G / T / availableTime (plannedTime), the same
 * number whenever the three factors exist; so a shift with planned time but nothing made
 * has an OEE of 0 (it made none of what it could have), while its effectiveness (no run
 * time) and quality (no item) are null. Every figure whose denominator is 0 is null.
 * `aboveNominalSpeed` flags an effectiveness above 1 (`isAboveNominalSpeed`).
 */
export function oeeFigures(b: OeeBasis): OeeFigures {
  const runTime = runTimeOf(b);
  const plannedTime = plannedTimeOf(b);
  // Fully productive time: the ideal time of the good items (0 without items).
  const goodIdeal = b.total === 0 ? 0 : (b.idealTime * b.good) / b.total;
  const effectiveness = fraction(b.idealTime, runTime);
  return {
    availability: fraction(runTime, b.availableTime),
    netAvailability: fraction(runTime, plannedTime),
    effectiveness,
    quality: fraction(b.good, b.total),
    oee: fraction(goodIdeal, b.availableTime),
    netOee: fraction(goodIdeal, plannedTime),
    aboveNominalSpeed: isAboveNominalSpeed(effectiveness),
  };
}

/** The counts and ideal minutes of the logs of one instance (docs/metrics.md, "Production"). */
interface ProductionTotals {
  /** T: items that make up the total count. */
  total: number;
  /** B: defective items. */
  defects: number;
  /** G = max(0, T - B). */
  good: number;
  /** I: sum of count / nominalSpeed over the logs that make up T, minutes. */
  idealMinutes: number;
}

/**
 * T, B, G and I of a set of logs (docs/metrics.md, "Production of one shift
 * instance"): T sums the `total` logs when the instance has any, else the
 * `correct` and `defects` logs.
 *
 * @param logs the logs counted (all of one instance, or the part of them
 *   attributed to one SKU, operator or work order).
 * @param instanceHasTotal whether the instance has any `total` log; defaults to
 *   reading it off `logs` (pass it when `logs` are part of an instance's, so
 *   that the parts follow the instance's rule and add up to it).
 */
export function productionTotals(
  logs: readonly Pick<LogSpan, "type" | "count" | "nominalSpeed">[],
  instanceHasTotal: boolean = logs.some((l) => l.type === "total"),
): ProductionTotals {
  let total = 0;
  let defects = 0;
  let idealMinutes = 0;
  for (const l of logs) {
    if (l.type === "defects") defects += l.count;
    if (instanceHasTotal ? l.type === "total" : l.type !== "total") {
      total += l.count;
      // nominalSpeed > 0 is validated on every write (docs/input-bounds.md).
      idealMinutes += l.nominalSpeed > 0 ? l.count / l.nominalSpeed : 0;
    }
  }
  // G is clamped per instance (or part), never after summing.
  return { total, defects, good: Math.max(0, total - defects), idealMinutes };
}

/**
 * The production metrics of one instance from its logs and indicators.
 *
 * docs/metrics.md, "Production of one shift instance": T, B, G and I as
 * `productionTotals` reads them, the OEE figures as `oeeFigures` computes them;
 * minutesLostByLowSpeed = max(0, runTime - I); minutesLostByLowQuality = I x B / T (0
 * without items: no minute was lost to them).
 *
 * @param indicators the instance's shift indicators.
 * @param logs the logs that belong to the instance (their `start` is inside it).
 */
export function computeProductionMetrics(
  indicators: ShiftIndicators,
  logs: readonly Pick<LogSpan, "type" | "count" | "nominalSpeed">[],
): ProductionMetrics {
  const { total, defects, good, idealMinutes } = productionTotals(logs);
  // In whole ms, as computeShiftIndicators took them, so that a run time of 0 is exactly 0.
  const basis: OeeBasis = {
    availableTime: msOf(indicators.availableTime),
    programmedDowntime: msOf(indicators.programmedDowntime),
    unavailableTime: msOf(indicators.unavailableTime),
    idealTime: idealMinutes * MS_PER_MINUTE,
    total,
    good,
  };
  return {
    ...oeeFigures(basis),
    minutesLostByLowSpeed: Math.max(0, minutesOf(runTimeOf(basis)) - idealMinutes),
    minutesLostByLowQuality: total === 0 ? 0 : (idealMinutes * defects) / total,
  };
}
