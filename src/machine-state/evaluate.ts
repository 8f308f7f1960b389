/**
 * Evaluation of a stretch of history (docs/machine-state.md, "Only the touched hours"): the
 * runs of each rule around the stretch, composed from the hour summaries (walking back to
 * where the run that reaches the stretch began, and on until no run goes on and no later
 * hour reads differently), then the stops they make, matched to the stops already detected
 * there. Synchronous over the store's tables: it runs in one step of the object.
 */
import { hourStart } from "../time/units";
import type { HourRow, RuleId } from "./hour-tables";
import {
  type Absorbed,
  absorbIntoRecorded,
  type DetectedSpan,
  joinSpans,
  matchStops,
  plannedParts,
  type Span,
  type StopChanges,
  unionParts,
  withoutRecorded,
} from "./parts";
import { type PlanCache, plannedBlocks } from "./planned-time";
import { type Before, type DownRun, RunComposer } from "./runs";
import type { DetectorTables } from "./tables";

/** First page of summaries read in each direction; pages double after it. */
const FIRST_PAGE = 3;
/** Stands for "the end of the data". */
export const END_OF_DATA = Number.MAX_SAFE_INTEGER;

/** The runs of one rule that reach a stretch, and where the walk's knowledge begins and ends. */
interface RuleWalk {
  /** Runs with a part starting at or after this instant were all composed. */
  start: number;
  /** ... and before this one (`END_OF_DATA` when the walk reached the last hour). */
  end: number;
  runs: DownRun[];
}

const variantOf = (row: HourRow) =>
  row.variant === 1 && row.summary.down ? row.summary.down : row.summary.up;

/** Reads a rule's summaries in one direction, a page at a time. */
class HourCursor {
  private page: HourRow[] = [];
  private at = 0;
  private size = FIRST_PAGE;
  private done = false;

  constructor(
    private readonly tables: DetectorTables,
    private readonly rule: RuleId,
    private hour: number,
    private readonly down: boolean,
  ) {}

  next(): HourRow | undefined {
    if (this.at >= this.page.length) {
      if (this.done) return undefined;
      this.page = this.tables.hours(this.rule, this.hour, this.down, this.size);
      this.at = 0;
      this.done = this.page.length < this.size;
      this.size *= 2;
      const last = this.page[this.page.length - 1];
      if (!last) return undefined;
      this.hour = this.down ? last.summary.hour - 1 : last.summary.hour;
    }
    return this.page[this.at++];
  }
}

/**
 * Composes the runs of one rule around `[from, to)`.
 *
 * Backward: from the last hour whose first sample is at or before `from`, while the hour
 * before it ends in a run and follows within the gap, that hour too. Forward: every hour to
 * `to`, then on while a run goes on or an hour's incoming state changed (the analog rule's
 * band); the data's end closes or keeps open the last run (`RunComposer.finish`).
 */
function walkRule(
  tables: DetectorTables,
  rule: RuleId,
  maxGapMs: number,
  from: number,
  to: number,
  now: number,
): RuleWalk {
  const back = new HourCursor(tables, rule, hourStart(from), true);
  let first = back.next();
  if (first && first.summary.firstT > from) first = back.next();
  let before: Before | null = null;
  while (first) {
    const prev = back.next();
    if (!prev) break;
    const v = variantOf(prev);
    if (!v.open || first.summary.firstT - v.lastT > maxGapMs) {
      before = { lastT: v.lastT, cur: v.cur };
      break;
    }
    first = prev;
  }
  const composer = new RunComposer(maxGapMs, before);
  const start = first ? first.summary.firstT : from;
  const lastHour = hourStart(to - 1);
  const push = (row: HourRow) => {
    const used = composer.push(row.summary);
    if (used !== row.variant) tables.setVariant(rule, row.summary.hour, used);
  };
  if (first) push(first);
  const ahead = new HourCursor(
    tables,
    rule,
    first ? first.summary.hour : hourStart(from) - 1,
    false,
  );
  for (let row = ahead.next(); row; row = ahead.next()) {
    if (
      row.summary.hour > lastHour &&
      !composer.running &&
      composer.variantFor(row.summary) === row.variant
    ) {
      return { start, end: row.summary.firstT, runs: composer.runs };
    }
    push(row);
  }
  composer.finish(now);
  return { start, end: END_OF_DATA, runs: composer.runs };
}

/** Everything an evaluation needs besides the summaries. */
interface EvaluationInputs {
  plan: PlanCache | null;
  thresholdMs: number;
  maxGapMs: number;
  rules: RuleId[];
  now: number;
}

/** The result of evaluating a stretch: the changes to the detected stops, and their scope. */
interface Evaluation {
  /** Detected stops starting in `[start, end)` were compared. */
  start: number;
  end: number;
  changes: StopChanges;
  /**
   * The detected downtime recorded stops take in (null: none any more): every recorded stop
   * that takes some in from the stretch, and those whose taken-in downtime started in it.
   */
  merges: { id: number; taken: Absorbed | null }[];
  /** True when runs were found: the plan and recorded stops were needed. */
  neededPlan: boolean;
}

/** Most times an evaluation widens its scope before it settles for what it has. */
const MAX_WIDENINGS = 32;

/**
 * Evaluates `[from, to)`: the runs of every rule around it, cut to planned time, joined,
 * without the stops a person deleted, those touching a recorded stop taken in by it, the
 * rest matched to the detected stops starting in the evaluated scope.
 * The scope widens while a joined stop crosses one of its edges (the two rules' runs can
 * reach beyond each other's walks).
 */
export function evaluate(
  tables: DetectorTables,
  inputs: EvaluationInputs,
  from: number,
  to: number,
): Evaluation {
  let lo = from;
  let hi = to;
  for (let widenings = 0; ; widenings++) {
    const walks = inputs.rules.map((rule) =>
      walkRule(tables, rule, inputs.maxGapMs, lo, hi, inputs.now),
    );
    const start = Math.max(...walks.map((w) => w.start));
    const end = Math.min(...walks.map((w) => w.end));
    const known = tables
      .detectedStarting(start, end)
      .map((r) => ({ key: r.key, start: r.start, end: r.end }));
    if (walks.every((w) => w.runs.length === 0) && known.length === 0) {
      const merges = tables.mergesStarting(start, end).map((id) => ({ id, taken: null }));
      if (merges.length === 0) {
        return {
          start,
          end,
          changes: { kept: [], removed: [], added: [] },
          merges,
          neededPlan: false,
        };
      }
    }
    const plan = inputs.plan;
    if (plan === null) {
      return {
        start,
        end,
        changes: { kept: [], removed: [], added: [] },
        merges: [],
        neededPlan: true,
      };
    }
    const parts = unionParts(
      walks.flatMap((w) =>
        plannedParts(w.runs, blocksFor(plan, w.runs, inputs.now), inputs.thresholdMs, inputs.now),
      ),
    );
    if (widenings < MAX_WIDENINGS) {
      let nextLo = lo;
      let nextHi = hi;
      for (const p of parts) {
        const pEnd = p.end ?? END_OF_DATA;
        if (p.start < start && pEnd > start) nextLo = Math.min(nextLo, p.start);
        if (end < END_OF_DATA && p.start < end && pEnd >= end) {
          nextHi = Math.max(nextHi, pEnd === END_OF_DATA ? END_OF_DATA : pEnd + 1);
        }
      }
      if (nextLo !== lo || nextHi !== hi) {
        lo = nextLo;
        hi = nextHi;
        continue;
      }
    }
    const inScope = parts.filter((p) => p.start >= start && p.start < end);
    const around = recordedFor(tables, inScope);
    // A detected stop a person deleted is no stop at all; then each part that overlaps or
    // touches a recorded stop is taken in by it (one breakdown, one stop).
    const kept = withoutRecorded(
      inScope,
      around.filter((r) => r.dismissed),
      inputs.thresholdMs,
    );
    const { detected, absorbed } = absorbIntoRecorded(
      kept,
      around.filter((r) => !r.dismissed),
    );
    const merges: Evaluation["merges"] = [...absorbed].map(([id, taken]) => ({ id, taken }));
    for (const id of tables.mergesStarting(start, end)) {
      if (!absorbed.has(id)) merges.push({ id, taken: null });
    }
    return { start, end, changes: matchStops(known, detected), merges, neededPlan: true };
  }
}

/**
 * Planned time over each run (runs that overlap or lie within a day of each other share one
 * listing), never over the time between runs far apart: the work follows the runs, which
 * follow the samples (a run's samples lie at most the gap apart), not the distance between
 * two instants a gateway sent (docs/machine-state.md, "Bounded by the samples").
 */
function blocksFor(plan: PlanCache, runs: readonly DownRun[], now: number): Span[] {
  if (runs.length === 0) return [];
  const extents = runs
    .map((r) => ({ start: r.start, end: (r.end ?? Math.max(now, r.lastDown)) + 1 }))
    .sort((a, b) => a.start - b.start);
  const blocks: Span[] = [];
  let group = extents[0] as Span;
  for (const e of extents) {
    if (e.start <= group.end + SHARED_LISTING_MS) group.end = Math.max(group.end, e.end);
    else {
      blocks.push(...plannedBlocks(plan, group.start, group.end));
      group = e;
    }
  }
  blocks.push(...plannedBlocks(plan, group.start, group.end));
  return joinSpans(blocks);
}

/** Runs closer than this share one listing of planned time, ms. */
const SHARED_LISTING_MS = 86_400_000;

/** The recorded stops (and the dismissed detected ones) overlapping or touching the parts. */
function recordedFor(tables: DetectorTables, parts: readonly DetectedSpan[]) {
  if (parts.length === 0) return [];
  const from = Math.min(...parts.map((p) => p.start));
  const to = Math.max(...parts.map((p) => p.end ?? END_OF_DATA));
  return tables.recordedTouching(from, to);
}
