/**
 * From down runs to detected stops (docs/machine-state.md): the runs of each rule cut to the
 * machine's planned time (its shift instances, back-to-back instances joined), each part
 * kept when it lasts at least the threshold; the two rules' parts joined; the time of the
 * stops a person deleted taken out; the parts that overlap or touch a recorded stop taken in
 * by it (one breakdown, one stop); then the stops already detected matched to the new ones, so that a stop keeps its row, and
 * its classification, through a change. Pure.
 */
import type { DownRun } from "./runs";

/** An interval of planned time, `[start, end)` in ms. */
export interface Span {
  start: number;
  end: number;
}

/** A detected stop as wanted: `end` null while it goes on. */
export interface DetectedSpan {
  start: number;
  end: number | null;
  /** The last instant its samples show the machine down (for an open stop's threshold). */
  evidence: number;
}

/** A recorded stop (any stop the detector did not make); `end` null while open. */
interface RecordedSpan {
  start: number;
  end: number | null;
}

/** A recorded stop by its D1 id, with its own (recorded) times. */
interface RecordedStop extends RecordedSpan {
  id: number;
}

/** The detected downtime a recorded stop takes in: `end` null while it goes on. */
export interface Absorbed {
  start: number;
  end: number | null;
}

/** Joins intervals that overlap or touch; ascending. */
export function joinSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

const openEnd = (end: number | null) => end ?? Number.POSITIVE_INFINITY;

/**
 * The parts of runs inside planned time that last at least `thresholdMs`.
 *
 * A run going on (`end` null) reaches `now`; its part in the planned block holding `now`
 * stays open, and lasts, for the threshold, until its last down sample. A run's part in a
 * block that ended is closed at the block's end.
 *
 * @param blocks joined planned time, ascending (`joinSpans`).
 */
export function plannedParts(
  runs: readonly DownRun[],
  blocks: readonly Span[],
  thresholdMs: number,
  now: number,
): DetectedSpan[] {
  const out: DetectedSpan[] = [];
  for (const run of runs) {
    const runEnd = run.end ?? Math.max(now, run.lastDown);
    // The first block ending after the run's start, by binary search (blocks are ascending
    // and disjoint): the work is the blocks each run meets, not every block for every run.
    let lo = 0;
    let hi = blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((blocks[mid] as Span).end <= run.start) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < blocks.length; i++) {
      const b = blocks[i] as Span;
      if (b.start >= runEnd) break;
      const start = Math.max(run.start, b.start);
      const open = run.end === null && now < b.end;
      const end = open ? null : Math.min(runEnd, b.end);
      const evidence = open ? run.lastDown : (end as number);
      if (evidence - start >= thresholdMs) out.push({ start, end, evidence });
    }
  }
  return out;
}

/** Joins the parts of several rules (overlapping or touching parts become one). */
export function unionParts(parts: readonly DetectedSpan[]): DetectedSpan[] {
  const sorted = [...parts].sort((a, b) => a.start - b.start);
  const out: DetectedSpan[] = [];
  for (const p of sorted) {
    const last = out[out.length - 1];
    if (last && p.start <= openEnd(last.end)) {
      last.end = last.end === null || p.end === null ? null : Math.max(last.end, p.end);
      last.evidence = Math.max(last.evidence, p.evidence);
    } else out.push({ ...p });
  }
  return out;
}

/**
 * Takes the time of the detected stops a person deleted out of the parts (that time is no
 * stop any more). What is left of a part and is shorter than the threshold goes.
 */
export function withoutRecorded(
  parts: readonly DetectedSpan[],
  recorded: readonly RecordedSpan[],
  thresholdMs: number,
): DetectedSpan[] {
  const cuts = [...recorded].sort((a, b) => a.start - b.start);
  const out: DetectedSpan[] = [];
  for (const part of parts) {
    let pieces: DetectedSpan[] = [part];
    for (const cut of cuts) {
      const next: DetectedSpan[] = [];
      for (const p of pieces) {
        const cutEnd = openEnd(cut.end);
        if (cutEnd <= p.start || cut.start >= openEnd(p.end)) {
          next.push(p);
          continue;
        }
        if (cut.start > p.start) next.push({ start: p.start, end: cut.start, evidence: cut.start });
        if (cutEnd < openEnd(p.end)) next.push({ start: cutEnd, end: p.end, evidence: p.evidence });
      }
      pieces = next;
    }
    for (const p of pieces) if (p.evidence - p.start >= thresholdMs) out.push(p);
  }
  return out;
}

/**
 * One breakdown, one stop (docs/machine-state.md, "Recorded stops take in detected
 * downtime"): each part that overlaps or touches recorded stops goes to them instead of
 * being a detected stop. With one such recorded stop, it takes the whole part; with several
 * (by start, then id), each takes the part's time from its own start to the next one's start,
 * the first also what comes before it and the last what comes after it, so that the stops
 * never overlap (a gap between two recorded stops goes to the earlier one).
 *
 * @param parts detected parts, ascending and disjoint (`unionParts`).
 * @param recorded the recorded stops around the parts.
 * @returns the parts that stay detected stops, and per recorded stop id the hull of the
 *   detected downtime it takes in (end null while the downtime goes on).
 */
export function absorbIntoRecorded(
  parts: readonly DetectedSpan[],
  recorded: readonly RecordedStop[],
): { detected: DetectedSpan[]; absorbed: Map<number, Absorbed> } {
  const byStart = [...recorded].sort((a, b) => a.start - b.start || a.id - b.id);
  const detected: DetectedSpan[] = [];
  const absorbed = new Map<number, Absorbed>();
  for (const p of parts) {
    const pEnd = openEnd(p.end);
    const touching = byStart.filter((r) => r.start <= pEnd && openEnd(r.end) >= p.start);
    if (touching.length === 0) {
      detected.push(p);
      continue;
    }
    touching.forEach((r, i) => {
      const from = i === 0 ? p.start : Math.max(p.start, r.start);
      const next = touching[i + 1];
      const to = next ? Math.min(pEnd, next.start) : pEnd;
      if (to <= from) return;
      const end = to === Number.POSITIVE_INFINITY ? null : to;
      const had = absorbed.get(r.id);
      absorbed.set(
        r.id,
        had
          ? {
              start: Math.min(had.start, from),
              end: had.end === null || end === null ? null : Math.max(had.end, end),
            }
          : { start: from, end },
      );
    });
  }
  return { detected, absorbed };
}

/**
 * The times a recorded stop shows while it takes in detected downtime: the union of its own
 * and the downtime's (they overlap or touch), open when either is.
 */
export function shownSpan(own: RecordedSpan, taken: Absorbed | null): RecordedSpan {
  if (!taken) return { start: own.start, end: own.end };
  return {
    start: Math.min(own.start, taken.start),
    end: own.end === null || taken.end === null ? null : Math.max(own.end, taken.end),
  };
}

/** A stop the store detected earlier, by its key. */
interface KnownStop {
  key: string;
  start: number;
  end: number | null;
}

/** What to do to the known stops so that they become `wanted`. */
export interface StopChanges {
  /** Known stops that stay, with their new times (unchanged ones included). */
  kept: { key: string; start: number; end: number | null }[];
  /** Known stops that no longer exist. */
  removed: string[];
  /** New stops. */
  added: { start: number; end: number | null }[];
}

/**
 * Matches the known stops of a stretch to the wanted ones: each wanted stop takes the known
 * stop it overlaps most (so a stop that shrinks, grows or splits keeps its row, and its
 * classification, on its largest remaining part); known stops left over are removed and
 * wanted stops left over are new.
 */
export function matchStops(
  known: readonly KnownStop[],
  wanted: readonly DetectedSpan[],
): StopChanges {
  const pairs: { k: number; w: number; overlap: number }[] = [];
  known.forEach((k, ki) => {
    wanted.forEach((w, wi) => {
      const overlap =
        Math.min(openEnd(k.end), openEnd(w.end)) - Math.max(k.start, w.start) ||
        // Two open stops from the same instant overlap without end: as much as can be.
        0;
      if (overlap > 0) pairs.push({ k: ki, w: wi, overlap });
    });
  });
  pairs.sort((a, b) => b.overlap - a.overlap || a.k - b.k || a.w - b.w);
  const knownTaken = new Set<number>();
  const wantedTaken = new Map<number, number>();
  for (const p of pairs) {
    if (knownTaken.has(p.k) || wantedTaken.has(p.w)) continue;
    knownTaken.add(p.k);
    wantedTaken.set(p.w, p.k);
  }
  const kept: StopChanges["kept"] = [];
  const added: StopChanges["added"] = [];
  wanted.forEach((w, wi) => {
    const ki = wantedTaken.get(wi);
    const k = ki === undefined ? undefined : known[ki];
    if (k) kept.push({ key: k.key, start: w.start, end: w.end });
    else added.push({ start: w.start, end: w.end });
  });
  const removed = known.filter((_, ki) => !knownTaken.has(ki)).map((k) => k.key);
  return { kept, removed, added };
}
