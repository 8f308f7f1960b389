/**
 * The timeline of one machine's running shift instance, as pure functions: SKU segments and
 * operator assignments in, live production logs out. A segment (one SKU write) runs until its
 * `end`, the next segment's `start` or the instance's end; an assignment from its `start` to
 * the instance's end; each segment that has begun is one log (`live: true` while the instance
 * runs), its operator from the assignments unless a PATCH named one. docs/realtime.md.
 */

import type { InstanceWindow } from "../shifts/instances";

/** The SKU of a segment as it was resolved at the write. */
export interface SegmentSku {
  id: string;
  sku: string;
  name: string | null;
  unit: string | null;
}

/** One SKU segment of the timeline; instants in ms since the epoch. */
export interface Segment {
  /** Id of the production log that shows this segment. */
  logId: string;
  start: number;
  /** The `end` given by the write; null = until the next segment or the end of the instance. */
  end: number | null;
  sku: SegmentSku;
  /** SKU units per minute, from the machine/SKU pair's nominal speed at the write. */
  nominalSpeed: number;
  /** SKU units per sensor pulse, from the same nominal speed. */
  countingFactor: number;
  simpleWorkOrder: { id: string; name: string } | null;
  quantity: number | null;
  /** Custom field values as the JSON text given (kept as text: the object never reads them). */
  customJson: string | null;
  /**
   * The operator a PATCH of the segment's log set (null: nobody), which wins over the
   * assignments from then on; absent when none did (src/resources/production-logs/running-shift.ts).
   */
  operator?: number | null;
}

/** One operator assignment; `start` in ms since the epoch. */
export interface Assignment {
  operatorId: number;
  firstName: string | null;
  lastName: string | null;
  start: number;
}

/** What one segment's production log should hold now. */
interface SegmentProjection {
  segment: Segment;
  /** End of the segment on the timeline (ms), clipped to the instance. */
  end: number;
  /** End of its log now: `min(end, now)`; null when the segment has not begun (no log). */
  logEnd: number | null;
  /** The operator of the log (see `segmentOperator`), or null. */
  operatorId: number | null;
}

/**
 * Where each segment ends: the first of its own `end`, the next segment's
 * start and the instance's end.
 *
 * @param segments the instance's segments in ascending `start` (distinct starts).
 * @param instance the running instance.
 * @returns one end per segment (ms), in the same order.
 */
function segmentEnds(segments: readonly Segment[], instance: InstanceWindow): number[] {
  return segments.map((s, i) => {
    const next = segments[i + 1];
    return Math.min(s.end ?? instance.end, next ? next.start : instance.end, instance.end);
  });
}

/**
 * The operator of a segment's log (a log has one operator; the timeline may
 * have several at once): the operator assigned most recently at or before the
 * segment's start; when nobody was assigned yet at its start, the first
 * operator assigned during the segment; null when nobody worked on it.
 * Ties (same start) go to the lowest operator id, so the answer never depends
 * on the order in which writes arrived.
 *
 * @param assignments the instance's assignments.
 * @param start segment start, ms.
 * @param end segment end, ms.
 */
function segmentOperator(
  assignments: readonly Assignment[],
  start: number,
  end: number,
): number | null {
  let before: Assignment | null = null;
  let during: Assignment | null = null;
  for (const a of assignments) {
    if (a.start <= start) {
      if (
        !before ||
        a.start > before.start ||
        (a.start === before.start && a.operatorId < before.operatorId)
      ) {
        before = a;
      }
    } else if (a.start < end) {
      if (
        !during ||
        a.start < during.start ||
        (a.start === during.start && a.operatorId < during.operatorId)
      ) {
        during = a;
      }
    }
  }
  return (before ?? during)?.operatorId ?? null;
}

/**
 * The production log each segment should have at `now`.
 *
 * @param segments the instance's segments in ascending `start`.
 * @param assignments the instance's operator assignments.
 * @param instance the instance.
 * @param now the current instant, ms (logs never reach past it: the report
 *   would count future minutes as production).
 */
export function projectTimeline(
  segments: readonly Segment[],
  assignments: readonly Assignment[],
  instance: InstanceWindow,
  now: number,
): SegmentProjection[] {
  const ends = segmentEnds(segments, instance);
  return segments.map((segment, i) => {
    const end = ends[i] ?? instance.end;
    const clipped = Math.min(end, now);
    return {
      segment,
      end,
      logEnd: clipped > segment.start ? clipped : null,
      operatorId:
        segment.operator !== undefined
          ? segment.operator
          : end > segment.start
            ? segmentOperator(assignments, segment.start, end)
            : null,
    };
  });
}

/**
 * The segment the machine is on at `now`: the latest one that has begun and
 * has not ended; null when none (nothing posted yet, or the last one's `end`
 * has passed).
 *
 * @param segments ascending `start`.
 * @param instance the instance.
 * @param now ms.
 */
export function currentSegment(
  segments: readonly Segment[],
  instance: InstanceWindow,
  now: number,
): Segment | null {
  const ends = segmentEnds(segments, instance);
  for (let i = segments.length - 1; i >= 0; i -= 1) {
    const s = segments[i];
    const end = ends[i];
    if (s && end !== undefined && s.start <= now) return now < end ? s : null;
  }
  return null;
}
