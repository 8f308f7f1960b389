/**
 * The stops Demo Plant A's count signal makes, recomputed from the SME rows for
 * `scripts/check-demo-oee.ts`: the rule of docs/machine-state.md written once more, row by
 * row, without the Worker's code (src/machine-state/ folds hours and composes them; this
 * walks the rows). With the demo's settings: the defaults (threshold and gap 300 s), and
 * planned time from Monday to Friday (three 8-hour shifts a day, one after the other; the
 * demo's plant calendar closes Saturdays and Sundays, so the shifts that start on them are
 * not planned: `weekdayPlannedTime`).
 */
import { TZDate } from "@date-fns/tz";

/** What the check knows of a row: its instant and items, and whether it is an alarm. */
export interface CountRow {
  ts: number;
  items: number;
}

/** An interval `[start, end)` in ms. */
export interface Interval {
  start: number;
  end: number;
}

const THRESHOLD_MS = 300_000;
const GAP_MS = 300_000;

/**
 * Demo Plant A's shift instances over `[from, to)` that its calendar schedules: the
 * 06:00-14:00, 14:00-22:00 and 22:00-06:00 shifts (Europe/Rome) that start on a Monday to
 * Friday. A shift that starts on a Saturday or a Sunday is closed by the demo's calendar
 * (docs/metrics.md, "The plant calendar"), while Friday's night shift runs into Saturday
 * 06:00.
 */
export function weekdayShifts(from: number, to: number): Interval[] {
  const zone = "Europe/Rome";
  const first = new TZDate(from, zone);
  const out: Interval[] = [];
  for (let d = -2; ; d++) {
    const at = (day: number, hours: number) =>
      new TZDate(first.getFullYear(), first.getMonth(), first.getDate() + day, hours, 0, zone);
    const midnight = at(d, 0);
    if (midnight.getTime() >= to) break;
    const weekday = midnight.getDay(); // 0 = Sunday, 6 = Saturday
    if (weekday === 0 || weekday === 6) continue;
    for (const [start, end] of [
      [at(d, 6), at(d, 14)],
      [at(d, 14), at(d, 22)],
      [at(d, 22), at(d + 1, 6)],
    ] as const) {
      out.push({ start: start.getTime(), end: end.getTime() });
    }
  }
  return out;
}

/** The planned time of `weekdayShifts`, joined. */
export function weekdayPlannedTime(from: number, to: number): Interval[] {
  return joined(weekdayShifts(from, to));
}

/**
 * One asset's planned time over `[from, to)`, joined: its weekday shifts, less those the
 * demo's calendar closes for it because the recording shows it did not run them (no row
 * with items and no alarm row inside a shift that lies wholly within the rows).
 */
export function assetPlannedTime(
  rows: readonly (CountRow & { alarm: boolean })[],
  from: number,
  to: number,
): Interval[] {
  const firstRow = rows[0]?.ts ?? to;
  const lastRow = rows[rows.length - 1]?.ts ?? from;
  return joined(
    weekdayShifts(from, to).filter(
      (w) =>
        w.start < firstRow ||
        w.end > lastRow ||
        rows.some((r) => r.ts >= w.start && r.ts < w.end && (r.items > 0 || r.alarm)),
    ),
  );
}

/**
 * The detected stops of one asset.
 *
 * A run of rows without items (each within 300 s of the one before) starts at its first
 * row and ends at the next row with items when that comes within 300 s; after a longer
 * silence, at its last row plus the time since the row before that (when within 300 s);
 * at the end of the data, at `now` when its last row is within 300 s of it. Runs of at least
 * 300 s are detected downtime. A recorded stop (an alarm run) takes in the downtime it
 * overlaps or touches (one breakdown, one stop; both non-programmed here), so the demo's
 * stopped time is the union of the alarm runs and these runs: the callers join them.
 *
 * @param rows the asset's rows, ascending instants (one per instant).
 * @param now the current instant (where a run reaching the last row ends, for minutes).
 * @param planned the planned time, joined: each run is cut to it first, and each part
 *   counts for the threshold on its own (default: planned everywhere).
 * @returns the downtime, as intervals (one going on ends at `now`).
 */
export function detectedStops(
  rows: readonly CountRow[],
  now: number,
  planned: readonly Interval[] = [{ start: -Infinity, end: Infinity }],
): Interval[] {
  const runs: { start: number; end: number; evidence: number }[] = [];
  let i = 0;
  while (i < rows.length) {
    const first = rows[i] as CountRow;
    if (first.items > 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (
      j + 1 < rows.length &&
      (rows[j + 1] as CountRow).items <= 0 &&
      (rows[j + 1] as CountRow).ts - (rows[j] as CountRow).ts <= GAP_MS
    ) {
      j += 1;
    }
    const last = rows[j] as CountRow;
    const next = rows[j + 1];
    const before = rows[j - 1];
    const period = before && last.ts - before.ts <= GAP_MS ? last.ts - before.ts : 0;
    if (next && next.ts - last.ts <= GAP_MS) {
      runs.push({ start: first.ts, end: next.ts, evidence: next.ts });
    } else if (!next && now - last.ts <= GAP_MS) {
      runs.push({ start: first.ts, end: now, evidence: last.ts });
    } else {
      runs.push({ start: first.ts, end: last.ts + period, evidence: last.ts + period });
    }
    i = j + 1;
  }
  return runs
    .flatMap((run) =>
      planned
        .filter((b) => b.start < run.end && b.end > run.start)
        .map((b) => ({
          start: Math.max(run.start, b.start),
          end: Math.min(run.end, b.end),
          evidence: Math.min(run.evidence, b.end),
        })),
    )
    .filter((part) => part.evidence - part.start >= THRESHOLD_MS)
    .map((part) => ({ start: part.start, end: part.end }));
}

/** Joins intervals that overlap or touch; ascending. */
export function joined(intervals: readonly Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const x of [...intervals].sort((a, b) => a.start - b.start)) {
    const last = out[out.length - 1];
    if (last && x.start <= last.end) last.end = Math.max(last.end, x.end);
    else if (x.end > x.start) out.push({ ...x });
  }
  return out;
}

/** The parts of `a` (joined) outside `b` (joined). */
export function without(a: readonly Interval[], b: readonly Interval[]): Interval[] {
  let pieces = [...a];
  for (const cut of b) {
    pieces = pieces.flatMap((p) => {
      if (cut.end <= p.start || cut.start >= p.end) return [p];
      return [
        ...(cut.start > p.start ? [{ start: p.start, end: cut.start }] : []),
        ...(cut.end < p.end ? [{ start: cut.end, end: p.end }] : []),
      ];
    });
  }
  return pieces;
}

/** Total length of joined intervals, ms. */
export function lengthOf(intervals: readonly Interval[]): number {
  return intervals.reduce((sum, x) => sum + (x.end - x.start), 0);
}
