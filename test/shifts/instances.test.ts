import { describe, expect, it } from "vitest";
import { instancesBetween, parseClock } from "../../src/shifts/instances";

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
});
