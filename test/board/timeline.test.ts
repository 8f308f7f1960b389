/**
 * The plant board's timeline (src/board/browser/board-timeline.ts): each instant in the class
 * the metrics report gives it (docs/metrics.md), so that a card's picture and its
 * availability agree.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  minutesByState,
  type TimelineRecords,
  type TimelineState,
  timelineStretches,
} from "../../src/board/browser/board-timeline";

const MIN = 60_000;
const at = (hh: number, mm = 0) => Date.UTC(2026, 2, 2, hh, mm);

/** The class of one instant, written the way the metrics report's list reads. */
function classOf(records: TimelineRecords, t: number): TimelineState {
  const inside = (s: { start: number; end: number }) => s.start <= t && t < s.end;
  if (!records.shifts.some(inside)) return "not-scheduled";
  if (records.stops.some((s) => s.isProgrammed && inside(s))) return "planned";
  if (records.stops.some((s) => !s.isProgrammed && inside(s))) return "down";
  if (records.production.some(inside)) return "running";
  return "no-data";
}

describe("the board's timeline", () => {
  it("gives each stretch the report's class: programmed over other stops over production, no data between", () => {
    const records: TimelineRecords = {
      shifts: [{ start: at(6), end: at(14) }],
      production: [{ start: at(6, 10), end: at(13) }],
      stops: [
        { start: at(7), end: at(7, 30), isProgrammed: false },
        { start: at(7, 20), end: at(7, 40), isProgrammed: true },
        // Outside every shift: not scheduled time, as the report leaves it out.
        { start: at(2), end: at(3), isProgrammed: false },
      ],
    };
    const iso = (ms: number) => new Date(ms).toISOString().slice(11, 16);
    expect(
      timelineStretches(records, at(0), at(15)).map(
        (s) => `${iso(s.start)}-${iso(s.end)} ${s.state}`,
      ),
    ).toEqual([
      "00:00-06:00 not-scheduled",
      "06:00-06:10 no-data",
      "06:10-07:00 running",
      "07:00-07:20 down",
      "07:20-07:40 planned",
      "07:40-13:00 running",
      "13:00-14:00 no-data",
      "14:00-15:00 not-scheduled",
    ]);
  });

  it("shows an open stop as down up to the window's end", () => {
    const now = at(10, 7);
    const records: TimelineRecords = {
      shifts: [{ start: at(0), end: at(24) }],
      production: [{ start: at(9), end: now }],
      stops: [{ start: at(9, 57), end: now, isProgrammed: false }],
    };
    const stretches = timelineStretches(records, now - 24 * 60 * MIN, now);
    expect(stretches.at(-1)).toEqual({ state: "down", start: at(9, 57), end: now });
    expect(minutesByState(stretches)).toMatchObject({ down: 10, running: 57 });
  });

  it("covers its window with stretches in order, no two neighbours alike, each instant in its class", () => {
    const span = fc
      .tuple(fc.integer({ min: 0, max: 1440 }), fc.integer({ min: 1, max: 600 }))
      .map(([start, length]) => ({ start: start * MIN, end: (start + length) * MIN }));
    const records = fc.record({
      shifts: fc.array(span, { maxLength: 4 }),
      production: fc.array(span, { maxLength: 6 }),
      stops: fc.array(
        fc.tuple(span, fc.boolean()).map(([s, isProgrammed]) => ({ ...s, isProgrammed })),
        { maxLength: 6 },
      ),
    });
    fc.assert(
      fc.property(records, fc.integer({ min: 0, max: 1440 }), (r, minute) => {
        const from = 120 * MIN;
        const to = 1320 * MIN;
        const stretches = timelineStretches(r, from, to);
        expect(stretches[0]?.start).toBe(from);
        expect(stretches.at(-1)?.end).toBe(to);
        stretches.forEach((s, i) => {
          expect(s.end).toBeGreaterThan(s.start);
          expect([classOf(r, s.start), classOf(r, s.end - 1)]).toEqual([s.state, s.state]);
          const next = stretches[i + 1];
          if (next) {
            expect(next.start).toBe(s.end);
            expect(next.state).not.toBe(s.state);
          }
        });
        const t = minute * MIN;
        const found = stretches.find((s) => s.start <= t && t < s.end);
        if (t >= from && t < to) expect(found?.state).toBe(classOf(r, t));
        else expect(found).toBeUndefined();
      }),
    );
  });

  it("is empty for an empty window", () => {
    expect(timelineStretches({ shifts: [], stops: [], production: [] }, at(5), at(5))).toEqual([]);
  });
});
