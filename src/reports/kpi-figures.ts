/**
 * The additive figures of one shift instance, whole or split by what its production logs were
 * making (SKU, operator, work order), for the KPI report. Every figure is a sum (ms, counts),
 * so groups add up exactly; the minutes and counts come from ./oee.ts's own functions, so a
 * rule of the metrics report is a rule of the KPIs. Each instant belongs to the key of the log
 * covering it (the last started); what no log covers is the all-null key's, computed as the
 * instance minus the other parts. docs/metrics.md ("KPIs by any dimension").
 */
import {
  type LogSpan,
  msOf,
  productionTotals,
  SHIFT_TIMES,
  type ShiftIndicators,
  type StopSpan,
} from "./oee";
import { computeShiftIndicators } from "./shift-time";

/**
 * The additive figures of an instance or part of one, the one list of them: the shift times
 * (`SHIFT_TIMES`, in ms), the ideal time (ms), the counts (items) and the unplanned stops.
 * Its order is that of the kept figures (./figure-cache.ts): a field is added at the end.
 */
export const FIGURE_FIELDS = [
  ...SHIFT_TIMES,
  "idealTime",
  "total",
  "good",
  "defects",
  "unplannedStops",
] as const;

/** The additive figures of an instance or part of one: times in ms, counts in items. */
export type Figures = Record<(typeof FIGURE_FIELDS)[number], number>;

/** Every figure 0, built once from the list. */
const ZERO_FIGURES = Object.fromEntries(FIGURE_FIELDS.map((field) => [field, 0])) as Figures;

/**
 * All-zero figures, a new object: a copy of one template (a year of instances takes 21,900;
 * a copy costs about as much as an object literal, while setting the fields one by one in a
 * loop took about 8 times as long on Node 24).
 */
export function zeroFigures(): Figures {
  return { ...ZERO_FIGURES };
}

/** Adds `b` into `a` (`sign` -1 subtracts). Written out field by field: a year is 21,900 calls. */
export function addFigures(a: Figures, b: Figures, sign = 1): void {
  a.availableTime += sign * b.availableTime;
  a.programmedDowntime += sign * b.programmedDowntime;
  a.nonProgrammedDowntime += sign * b.nonProgrammedDowntime;
  a.otherStopsTime += sign * b.otherStopsTime;
  a.lateStartTime += sign * b.lateStartTime;
  a.earlyStopTime += sign * b.earlyStopTime;
  a.noDataTime += sign * b.noDataTime;
  a.unavailableTime += sign * b.unavailableTime;
  a.annotatedDowntime += sign * b.annotatedDowntime;
  a.idealTime += sign * b.idealTime;
  a.total += sign * b.total;
  a.good += sign * b.good;
  a.defects += sign * b.defects;
  a.unplannedStops += sign * b.unplannedStops;
}

/**
 * The figures of an instance that no log or stop touches, by arithmetic: its elapsed planned
 * time (its whole length once ended, `now - start` while it runs) is all no data, so
 * unavailable (docs/metrics.md, "An instance with no covered instant at all counts the whole
 * of its elapsed part as no data"); every other figure is 0. The same figures as
 * `computeInstanceFigures` without records (test/reports/kpi-figures.test.ts).
 *
 * @param window the instance, `{start, end}` in ms; `now` the current instant, ms.
 */
export function emptyInstanceFigures(window: { start: number; end: number }, now: number): Figures {
  const elapsed = Math.max(0, Math.min(window.end, now) - window.start);
  return {
    ...zeroFigures(),
    availableTime: elapsed,
    noDataTime: elapsed,
    unavailableTime: elapsed,
  };
}

/** Indicator minutes back to whole ms. */
const ms = msOf;

/** An instance's shift indicators as figures: its times back to whole ms, every other 0. */
function timeFigures(i: ShiftIndicators): Figures {
  const figures = zeroFigures();
  for (const time of SHIFT_TIMES) figures[time] = ms(i[time]);
  return figures;
}

const isUnplanned = (s: StopSpan) => !s.isProgrammed && s.isIncludedInAvailability;

/** The instants of W each key's logs cover: disjoint intervals, ascending, per key. */
function partition<L extends LogSpan>(
  window: { start: number; end: number },
  logs: readonly L[],
  keyOf: (log: L) => string,
): { key: string; start: number; end: number }[] {
  const clipped = logs
    .map((l) => ({
      log: l,
      start: Math.max(l.start, window.start),
      end: Math.min(l.end, window.end),
    }))
    .filter((l) => l.end > l.start)
    .sort((a, b) => a.start - b.start);
  const bounds = [...new Set(clipped.flatMap((l) => [l.start, l.end]))].sort((a, b) => a - b);
  const out: { key: string; start: number; end: number }[] = [];
  let active: typeof clipped = [];
  let next = 0;
  for (let i = 0; i + 1 < bounds.length; i += 1) {
    const from = bounds[i] as number;
    const to = bounds[i + 1] as number;
    while (next < clipped.length && (clipped[next]?.start ?? Number.POSITIVE_INFINITY) <= from) {
      active.push(clipped[next] as (typeof clipped)[number]);
      next += 1;
    }
    active = active.filter((l) => l.end > from);
    // The log that started last covers the instant (the first such in start order).
    let pick: (typeof clipped)[number] | undefined;
    for (const l of active) if (!pick || l.start > pick.start) pick = l;
    if (!pick) continue;
    const key = keyOf(pick.log);
    const last = out[out.length - 1];
    if (last && last.key === key && last.end === from) last.end = to;
    else out.push({ key, start: from, end: to });
  }
  return out;
}

/** The parts of `stops` inside the disjoint ascending `intervals`. */
function clipStops(
  stops: readonly StopSpan[],
  intervals: readonly { start: number; end: number }[],
  pastEnd: number,
): StopSpan[] {
  const out: StopSpan[] = [];
  for (const s of stops) {
    const end = s.end ?? pastEnd;
    let lo = 0;
    let hi = intervals.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((intervals[mid]?.end ?? Number.POSITIVE_INFINITY) <= s.start) lo = mid + 1;
      else hi = mid;
    }
    for (let k = lo; k < intervals.length; k += 1) {
      const iv = intervals[k];
      if (!iv || iv.start >= end) break;
      const from = Math.max(s.start, iv.start);
      const to = Math.min(end, iv.end);
      if (to > from) out.push({ ...s, start: from, end: to });
    }
  }
  return out;
}

/**
 * The figures of one instance, whole (`keyOf` absent: one entry under `""`) or
 * split by the key of the log covering each instant (see the module docstring).
 *
 * @param window the instance, `{start, end}` in ms.
 * @param stops the machine's stops overlapping W (not deleted).
 * @param logs the machine's logs overlapping W (not deleted).
 * @param ownLogs the logs whose start is in W (their counts are the instance's).
 * @param now the current instant, ms.
 * @param keyOf the key of a log; `nullKey` is the key of time no log covers.
 * @returns the figures by key; they add up to the whole instance's.
 */
export function computeInstanceFigures<L extends LogSpan>(
  window: { start: number; end: number },
  stops: readonly StopSpan[],
  logs: readonly L[],
  ownLogs: readonly L[],
  now: number,
  split?: { keyOf: (log: L) => string; nullKey: string },
): Map<string, Figures> {
  const whole = timeFigures(computeShiftIndicators(window, stops, logs, now));
  const inWindow = (s: StopSpan) => s.start >= window.start && s.start < window.end;
  const hasTotal = ownLogs.some((l) => l.type === "total");
  const withCounts = (figures: Figures, counted: readonly L[]) => {
    const totals = productionTotals(counted, hasTotal);
    figures.total += totals.total;
    figures.good += totals.good;
    figures.defects += totals.defects;
    figures.idealTime += ms(totals.idealMinutes);
  };
  if (!split) {
    withCounts(whole, ownLogs);
    whole.unplannedStops = stops.filter((s) => isUnplanned(s) && inWindow(s)).length;
    return new Map([["", whole]]);
  }
  const pastEnd = Math.max(window.start, Math.min(window.end, now));
  const segments = partition(window, logs, split.keyOf);
  const byKey = new Map<string, { start: number; end: number }[]>();
  for (const s of segments) {
    const list = byKey.get(s.key) ?? [];
    list.push(s);
    byKey.set(s.key, list);
  }
  const parts = new Map<string, Figures>();
  const rest = { ...whole };
  for (const [key, intervals] of byKey) {
    const indicators = computeShiftIndicators(
      window,
      clipStops(stops, intervals, pastEnd),
      intervals,
      now,
    );
    const part = zeroFigures();
    part.availableTime = intervals.reduce((sum, iv) => sum + iv.end - iv.start, 0);
    part.programmedDowntime = ms(indicators.programmedDowntime);
    part.nonProgrammedDowntime = ms(indicators.nonProgrammedDowntime);
    part.otherStopsTime = ms(indicators.otherStopsTime);
    part.unavailableTime = part.nonProgrammedDowntime;
    part.annotatedDowntime = ms(indicators.annotatedDowntime);
    addFigures(rest, part, -1);
    parts.set(key, part);
  }
  // Time no log covers is the null key's, whatever it holds.
  const nullPart = parts.get(split.nullKey) ?? zeroFigures();
  addFigures(nullPart, rest);
  parts.set(split.nullKey, nullPart);
  const countedBy = new Map<string, L[]>();
  for (const l of ownLogs) {
    const key = split.keyOf(l);
    const list = countedBy.get(key);
    if (list) list.push(l);
    else countedBy.set(key, [l]);
  }
  for (const [key, counted] of countedBy) {
    const part = parts.get(key) ?? zeroFigures();
    withCounts(part, counted);
    parts.set(key, part);
  }
  for (const s of stops) {
    if (!isUnplanned(s) || !inWindow(s)) continue;
    const seg = segments.find((g) => g.start <= s.start && s.start < g.end);
    const part = parts.get(seg?.key ?? split.nullKey);
    if (part) part.unplannedStops += 1;
  }
  return parts;
}
