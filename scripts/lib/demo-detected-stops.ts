/**
 * The stops Demo Plant A's count signal makes, recomputed from the SME rows for
 * `scripts/check-demo-oee.ts`: the rule of docs/machine-state.md written once more, row by
 * row, without the Worker's code (src/machine-state/ folds hours and composes them; this
 * walks the rows). With the demo's settings: the defaults (threshold and gap 300 s), and
 * planned time everywhere (three 8-hour shifts every day, one after the other).
 */

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
 * @returns the downtime, as intervals (one going on ends at `now`).
 */
export function detectedStops(rows: readonly CountRow[], now: number): Interval[] {
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
    .filter((run) => run.evidence - run.start >= THRESHOLD_MS)
    .map((run) => ({ start: run.start, end: run.end }));
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
