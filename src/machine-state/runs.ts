/**
 * The down runs of a stretch of history, composed from hour summaries (`hour-fold.ts`) in
 * time order: a run that reaches the last sample of an hour goes on into the next hour when
 * that hour's first sample comes within the gap and is down; a silence longer than the gap
 * ends it (docs/machine-state.md has the rule with examples).
 */
import type { HourSummary } from "./hour-fold";
import { cover, DOWN, MIN_RUN_MS, type State } from "./rules";

/** A down run: from its first down sample to the sample or silence that ended it. Instants in ms. */
export interface DownRun {
  start: number;
  /** Its last down sample. */
  lastDown: number;
  /** When it ended; null while it is going on (its last sample is within the gap of now). */
  end: number | null;
}

/** What the last sample before a stretch tells the first hour of it. */
export interface Before {
  lastT: number;
  cur: State;
}

/**
 * Composes runs hour by hour. Feed it the summaries in ascending hour order (`push`), then
 * `finish` at the end of the data; `runs` then holds every run that ended in the hours fed
 * (or is going on), shorter runs than `MIN_RUN_MS` left out unless going on.
 */
export class RunComposer {
  readonly runs: DownRun[] = [];
  private run: { start: number; lastDown: number; gap: number | null } | null = null;

  /**
   * @param maxGapMs the longest silence inside one stretch of data, ms.
   * @param before the last sample before the first hour fed (null: none, or irrelevant
   *   because no run was going on there and the first hour follows a silence).
   */
  constructor(
    private readonly maxGapMs: number,
    private before: Before | null = null,
  ) {}

  /** True while a run reaches the last sample fed. */
  get running(): boolean {
    return this.run !== null;
  }

  /**
   * The variant `push` would use for an hour: 1 (`down`) when the hour opens in the band
   * and follows a down sample within the gap, else 0.
   */
  variantFor(h: HourSummary): 0 | 1 {
    const prev = this.before;
    const continuous = prev !== null && h.firstT - prev.lastT <= this.maxGapMs;
    return continuous && prev.cur === DOWN && h.down !== null ? 1 : 0;
  }

  private emit(start: number, lastDown: number, end: number | null): void {
    if (end === null || end - start >= MIN_RUN_MS) this.runs.push({ start, lastDown, end });
  }

  /**
   * Adds the next hour (after every hour fed so far).
   *
   * @returns which variant held: 1 when the hour began with the machine down before it
   *   (`summary.down`), else 0.
   */
  push(h: HourSummary): 0 | 1 {
    const prev = this.before;
    const gap = prev === null ? null : h.firstT - prev.lastT;
    const continuous = gap !== null && gap <= this.maxGapMs;
    const useDown = this.variantFor(h) === 1;
    const v = useDown && h.down ? h.down : h.up;
    let from = 0;
    let openTaken = false;
    const head = v.frags[0]?.p ? v.frags[0] : v.open?.p ? v.open : null;
    const run = this.run;
    if (run) {
      this.run = null;
      if (!continuous) {
        this.emit(run.start, run.lastDown, run.lastDown + cover(run.gap, this.maxGapMs));
      } else if (head === v.open && head) {
        this.run = { start: run.start, lastDown: head.d, gap: head.g ?? gap };
        openTaken = true;
      } else if (head) {
        const f = v.frags[0];
        if (f) this.emit(run.start, f.d, f.e ?? f.d + cover(f.g ?? gap, this.maxGapMs));
        from = 1;
      } else this.emit(run.start, run.lastDown, h.firstT);
    }
    for (let i = from; i < v.frags.length; i++) {
      const f = v.frags[i];
      if (f) this.emit(f.s, f.d, f.e ?? f.d + cover(f.g ?? gap, this.maxGapMs));
    }
    if (v.open && !openTaken)
      this.run = { start: v.open.s, lastDown: v.open.d, gap: v.open.g ?? gap };
    this.before = { lastT: v.lastT, cur: v.cur };
    return useDown ? 1 : 0;
  }

  /**
   * Ends the data: a run reaching the last sample is going on when that sample is within
   * the gap of `now`, else the silence after it ended it.
   */
  finish(now: number): void {
    const run = this.run;
    if (!run) return;
    this.run = null;
    const lastT = this.before?.lastT ?? run.lastDown;
    if (now - lastT <= this.maxGapMs) this.emit(run.start, run.lastDown, null);
    else this.emit(run.start, run.lastDown, run.lastDown + cover(run.gap, this.maxGapMs));
  }
}
