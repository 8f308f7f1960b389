/**
 * The detection rule of docs/machine-state.md written the plain way, sample after sample
 * over the whole history, for the property tests to hold the hour summaries, the run
 * composition and the store against. Nothing here is shared with src/machine-state/.
 */

export type Cls = "up" | "down" | "band";

export interface RefRun {
  start: number;
  lastDown: number;
  end: number | null;
}

/**
 * The down runs of samples (ascending distinct instants), with the gap rule and the band
 * resolved from the state before (up after a silence or at the start).
 */
export function referenceRuns(
  samples: readonly { t: number; c: Cls }[],
  maxGapMs: number,
  now: number,
): RefRun[] {
  const runs: RefRun[] = [];
  let run: { start: number; lastDown: number; gapBefore: number | null } | null = null;
  let prevT: number | null = null;
  let state: "up" | "down" = "up";
  const coverOf = (g: number | null) => (g !== null && g <= maxGapMs ? g : 0);
  for (const { t, c } of samples) {
    const gap = prevT === null ? null : t - prevT;
    const continuous = gap !== null && gap <= maxGapMs;
    if (run && !continuous) {
      runs.push({
        start: run.start,
        lastDown: run.lastDown,
        end: run.lastDown + coverOf(run.gapBefore),
      });
      run = null;
    }
    const s: "up" | "down" = c === "band" ? (continuous ? state : "up") : c;
    if (s === "down") {
      if (run) {
        run.lastDown = t;
        run.gapBefore = gap;
      } else run = { start: t, lastDown: t, gapBefore: gap };
    } else if (run) {
      runs.push({ start: run.start, lastDown: run.lastDown, end: t });
      run = null;
    }
    prevT = t;
    state = s;
  }
  if (run) {
    if (prevT !== null && now - prevT <= maxGapMs)
      runs.push({ start: run.start, lastDown: run.lastDown, end: null });
    else
      runs.push({
        start: run.start,
        lastDown: run.lastDown,
        end: run.lastDown + coverOf(run.gapBefore),
      });
  }
  return runs;
}
