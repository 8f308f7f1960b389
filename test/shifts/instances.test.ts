import { TZDate } from "@date-fns/tz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  countInstancesBetween,
  instancesBetween,
  instanceWork,
  parseClock,
  type ShiftDefinitionTimes,
} from "../../src/shifts/instances";
import { windowsBetween } from "../../src/shifts/plan";
import { clockTime, shiftTimes, timeZone } from "../fixtures/shift-arbitraries";

const ALL_DAYS = [1, 2, 3, 4, 5, 6, 7];
const hours = (w: { start: number; end: number }) => (w.end - w.start) / 3_600_000;

describe("shift instances", () => {
  it("places a day shift at its local wall-clock time in the company's zone", () => {
    const [first] = instancesBetween(
      { startTime: "06:00", endTime: "14:00", weekdays: ALL_DAYS },
      "Europe/Rome",
      Date.UTC(2022, 8, 5),
      Date.UTC(2022, 8, 6),
    );
    // 06:00 in Rome in September (UTC+2) is 04:00 UTC
    expect(first).toEqual({ start: Date.UTC(2022, 8, 5, 4), end: Date.UTC(2022, 8, 5, 12) });
  });

  it("ends a shift across midnight on the next day", () => {
    const list = instancesBetween(
      { startTime: "22:00", endTime: "06:00", weekdays: ALL_DAYS },
      "UTC",
      Date.UTC(2026, 0, 5),
      Date.UTC(2026, 0, 7),
    );
    expect(list).toEqual([
      { start: Date.UTC(2026, 0, 5, 22), end: Date.UTC(2026, 0, 6, 6) },
      { start: Date.UTC(2026, 0, 6, 22), end: Date.UTC(2026, 0, 7, 6) },
    ]);
  });

  it("makes the night shift 7 hours on the spring DST change and 9 on the autumn one (Europe/Rome)", () => {
    const night = { startTime: "22:00", endTime: "06:00", weekdays: ALL_DAYS };
    const spring = instancesBetween(
      night,
      "Europe/Rome",
      Date.UTC(2026, 2, 28, 12),
      Date.UTC(2026, 2, 29, 12),
    );
    expect(spring.map(hours)).toEqual([7]);
    const autumn = instancesBetween(
      night,
      "Europe/Rome",
      Date.UTC(2026, 9, 24, 12),
      Date.UTC(2026, 9, 25, 12),
    );
    expect(autumn.map(hours)).toEqual([9]);
  });

  it("keeps only the weekdays of the definition (ISO, of the start)", () => {
    // 2026-01-05 is a Monday
    const list = instancesBetween(
      { startTime: "08:00", endTime: "16:00", weekdays: [1, 3] },
      "UTC",
      Date.UTC(2026, 0, 5),
      Date.UTC(2026, 0, 12),
    );
    expect(list.map((w) => new Date(w.start).getUTCDay())).toEqual([1, 3]);
  });

  it("rejects a malformed clock time", () => {
    expect(() => parseClock("24:00")).toThrow(RangeError);
    expect(parseClock("05:07")).toEqual({ hours: 5, minutes: 7 });
  });

  it("counts a window of 130 years without listing it, as the listing would", () => {
    const def = { startTime: "22:00", endTime: "06:00", weekdays: [1, 2, 3, 4, 5] };
    const from = Date.UTC(1970, 0, 1);
    const to = Date.UTC(2100, 0, 1);
    expect(countInstancesBetween(def, "Europe/Rome", from, to)).toBe(
      instancesBetween(def, "Europe/Rome", from, to).length,
    );
  });
});

/**
 * The walk the listing did before it skipped to the definition's weekdays: three zone
 * computations per local day (start, end, next day). The listing must give the same
 * instances; its count too.
 */
function referenceInstances(
  def: ShiftDefinitionTimes,
  timezone: string,
  from: number,
  to: number,
): { start: number; end: number }[] {
  const start = parseClock(def.startTime);
  const end = parseClock(def.endTime);
  const crossesMidnight = def.endTime <= def.startTime;
  const out: { start: number; end: number }[] = [];
  const first = new TZDate(from - 86_400_000, timezone);
  let [y, m, d] = [first.getFullYear(), first.getMonth(), first.getDate()];
  for (;;) {
    const dayStart = new TZDate(y, m, d, start.hours, start.minutes, timezone);
    if (dayStart.getTime() >= to) break;
    const isoWeekday = ((dayStart.getDay() + 6) % 7) + 1;
    if (dayStart.getTime() >= from && def.weekdays.includes(isoWeekday)) {
      const endAt = new TZDate(
        y,
        m,
        d + (crossesMidnight ? 1 : 0),
        end.hours,
        end.minutes,
        timezone,
      );
      out.push({ start: dayStart.getTime(), end: endAt.getTime() });
    }
    const next = new TZDate(y, m, d + 1, 12, 0, timezone);
    [y, m, d] = [next.getFullYear(), next.getMonth(), next.getDate()];
  }
  return out;
}

describe("shift instances of any window (property)", () => {
  const definition = shiftTimes();
  // Zones with DST (both hemispheres, a 30-minute shift, changes at midnight) and without.
  const zone = timeZone();
  const window = fc
    .tuple(
      fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2040, 0, 1) }),
      fc.integer({ min: 0, max: 120 * 86_400_000 }),
    )
    .map(([from, length]) => ({ from, to: from + length }));

  it("lists what the day-by-day walk lists across a skipped day and 3-hour changes", () => {
    // Samoa skipped 2011-12-30 (UTC-10 to UTC+14); Casey moved between UTC+8 and +11.
    for (const [timezone, from, to] of [
      ["Pacific/Apia", "2011-12-20", "2012-01-10"],
      ["Antarctica/Casey", "2009-10-01", "2012-03-01"],
      ["Antarctica/Casey", "2016-10-01", "2018-04-01"],
    ] as const) {
      for (const def of [
        { startTime: "00:30", endTime: "08:30", weekdays: [1, 2, 3, 4, 5, 6, 7] },
        { startTime: "22:00", endTime: "22:00", weekdays: [1, 2, 3, 4, 5, 6, 7] },
      ]) {
        const [a, b] = [Date.parse(`${from}T00:00:00Z`), Date.parse(`${to}T00:00:00Z`)];
        expect(instancesBetween(def, timezone, a, b)).toEqual(
          referenceInstances(def, timezone, a, b),
        );
        expect(countInstancesBetween(def, timezone, a, b)).toBe(
          referenceInstances(def, timezone, a, b).length,
        );
      }
    }
    // Years across Samoa's skipped date: counted by halving around it, as listed.
    const yearly = { startTime: "22:00", endTime: "06:00", weekdays: [1, 2, 3, 4, 5] };
    for (const [from, to] of [
      [Date.UTC(2005, 0, 1), Date.UTC(2020, 0, 1)],
      [Date.UTC(2011, 11, 29, 11), Date.UTC(2013, 0, 1)],
      [Date.UTC(2011, 0, 1), Date.UTC(2011, 11, 30, 11)],
    ] as const) {
      expect(countInstancesBetween(yearly, "Pacific/Apia", from, to)).toBe(
        instancesBetween(yearly, "Pacific/Apia", from, to).length,
      );
    }
  });

  it("lists what the day-by-day walk lists, and counts what it lists", () => {
    fc.assert(
      fc.property(definition, zone, window, (def, timezone, { from, to }) => {
        const listed = instancesBetween(def, timezone, from, to);
        expect(listed).toEqual(referenceInstances(def, timezone, from, to));
        expect(countInstancesBetween(def, timezone, from, to)).toBe(listed.length);
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * Time arithmetic bounded everywhere (docs/bounded-work.md, "Time arithmetic"): for instants
 * from 1970 to 9999, counting a window is arithmetic whatever its length, and listing one
 * visits the instances it lists and a few dates at its ends, never the window's other days.
 */
describe("planning with instants from 1970 to 9999 (property)", () => {
  const Y9999 = Date.UTC(9999, 11, 31, 23, 59, 59);
  const anyInstant = fc.integer({ min: 0, max: Y9999 });
  const definition = shiftTimes({ clock: clockTime([0, 30]) });
  const zone = timeZone(["UTC", "Europe/Rome", "Pacific/Apia", "America/Santiago"]);

  it("counts any window by arithmetic: a few dozen dates visited at most, none listed in between", () => {
    fc.assert(
      fc.property(definition, zone, anyInstant, anyInstant, (def, timezone, a, b) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const before = instanceWork.dates;
        const n = countInstancesBetween(def, timezone, from, to);
        // Listing: only a week around a skipped date (Samoa's 2011-12-30) and the window's
        // ends, never the rest (21 seen at most in 30,000 runs: every weekday, Apia, 1970-2591).
        expect(instanceWork.dates - before).toBeLessThanOrEqual(24);
        const weeks = (to - from) / (7 * 86_400_000);
        expect(n).toBeLessThanOrEqual(Math.ceil(weeks + 2) * def.weekdays.length);
      }),
      { numRuns: 300 },
    );
  });

  it("lists a window from any instant visiting the instances it lists and at most four dates more", () => {
    const span = fc.integer({ min: 0, max: 400 * 86_400_000 });
    fc.assert(
      fc.property(definition, zone, anyInstant, span, (def, timezone, from, length) => {
        const to = Math.min(from + length, Y9999);
        const row = {
          ...def,
          id: 1,
          name: "",
          isConsidered: true,
          allMachines: true,
          machineIds: [],
        };
        for (const list of [
          () => instancesBetween(def, timezone, from, to),
          () => windowsBetween(row, timezone, from, to),
        ]) {
          const before = instanceWork.dates;
          const listed = list();
          // A date cached by windowsBetween is not visited again: at most, never more.
          expect(instanceWork.dates - before).toBeLessThanOrEqual(listed.length + 4 * 5);
        }
      }),
      { numRuns: 300 },
    );
  });
});
