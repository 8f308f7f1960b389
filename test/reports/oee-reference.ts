/**
 * The straightforward (quadratic) classification of a shift instance's time,
 * kept as the reference that the sweep of `src/reports/oee.ts` is checked
 * against: every elementary segment between two boundaries takes the class of
 * the highest-priority span covering it, found by scanning every span.
 * It is the algorithm `computeShiftIndicators` used before the sweep.
 */
import type { StopSpan } from "../../src/reports/oee";

export interface ReferenceTimes {
  /** ms per class: 1 programmed, 2 non-programmed, 3 other stop, 4 production. */
  totals: Map<number, number>;
  lateStart: number;
  earlyStop: number;
  noData: number;
  annotated: number;
}

/**
 * Classifies the elapsed part of [start, end), [start, min(now, end)), by scanning every
 * span for each segment (see metrics.md).
 */
export function referenceTimes(
  window: { start: number; end: number },
  stops: readonly StopSpan[],
  logs: readonly { start: number; end: number }[],
  now: number,
): ReferenceTimes {
  const { start, end } = window;
  const pastEnd = Math.max(start, Math.min(end, now));
  const ended = now >= end;
  const UNCOVERED = 5;
  type Span = { from: number; to: number; cls: number; classified: boolean };
  const spans: Span[] = [];
  for (const s of stops) {
    const from = Math.max(s.start, start);
    const to = Math.min(s.end ?? pastEnd, pastEnd);
    if (to <= from) continue;
    const cls = s.isProgrammed ? 1 : s.isIncludedInAvailability ? 2 : 3;
    spans.push({ from, to, cls, classified: s.isClassified });
  }
  for (const l of logs) {
    const from = Math.max(l.start, start);
    const to = Math.min(l.end, pastEnd);
    if (to > from) spans.push({ from, to, cls: 4, classified: false });
  }
  const bounds = new Set<number>([start, pastEnd]);
  for (const s of spans) {
    bounds.add(s.from);
    bounds.add(s.to);
  }
  const points = [...bounds].filter((t) => t >= start && t <= pastEnd).sort((a, b) => a - b);
  const totals = new Map<number, number>();
  let annotated = 0;
  const segments: { from: number; to: number; cls: number }[] = [];
  for (let i = 0; i + 1 < points.length; i += 1) {
    const from = points[i] as number;
    const to = points[i + 1] as number;
    let cls = UNCOVERED;
    let classified = false;
    for (const s of spans) {
      if (s.from <= from && s.to >= to) {
        if (s.cls < cls) cls = s.cls;
        if (s.cls <= 3 && s.classified) classified = true;
      }
    }
    if (cls === UNCOVERED && from >= pastEnd) continue;
    segments.push({ from, to, cls });
    totals.set(cls, (totals.get(cls) ?? 0) + (to - from));
    if (cls <= 3 && classified) annotated += to - from;
  }
  const covered = segments.filter((s) => s.cls !== UNCOVERED);
  let lateStart = 0;
  let earlyStop = 0;
  let noData = 0;
  const firstCovered = covered[0]?.from;
  const lastCovered = covered[covered.length - 1]?.to;
  for (const s of segments) {
    if (s.cls !== UNCOVERED) continue;
    const length = s.to - s.from;
    if (firstCovered === undefined || lastCovered === undefined) noData += length;
    else if (s.to <= firstCovered) lateStart += length;
    else if (s.from >= lastCovered) earlyStop += ended ? length : 0;
    else noData += length;
  }
  return { totals, lateStart, earlyStop, noData, annotated };
}
