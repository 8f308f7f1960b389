/**
 * Fleet B's demo week (scripts/lib/replay-fleet.ts): the recorded week from Monday
 * 2015-01-19 plays onto the last 7 days at the same UTC weekday and hour: samples under the
 * fixed public ids, and the failure stops with their classification, moved by whole days.
 */
import { describe, expect, it } from "vitest";
import { demoSignalId } from "../../scripts/lib/demo-ids";
import { fleetOffset, fleetWeek } from "../../scripts/lib/replay-fleet";

const files = {
  machines: "machineID,model,age\n1,model3,18",
  telemetry: [
    "datetime,machineID,volt,rotate,pressure,vibration",
    "2015-01-19 10:00:00,1,170,450,100,40",
    "2015-01-20 10:00:00,1,171,451,101,41",
    "2015-01-21 10:00:00,1,172,452,102,42",
  ].join("\n"),
  failures: "datetime,machineID,failure\n2015-01-19 06:00:00,1,comp2",
  maintenance: "datetime,machineID,comp\n2015-01-20 06:00:00,1,comp1",
};

// Wednesday 2026-11-25, 12:00 UTC: the window is Wednesday 2026-11-18 12:00 to now.
const now = Date.UTC(2026, 10, 25, 12);

describe("Fleet B's demo week", () => {
  it("plays the recorded day of the same weekday", () => {
    expect(fleetOffset(Date.UTC(2026, 10, 23, 15)).sourceStart).toBe(Date.UTC(2015, 0, 19));
    expect(fleetOffset(Date.UTC(2026, 10, 29, 1)).sourceStart).toBe(Date.UTC(2015, 0, 25));
  });

  it("sends the samples under the fixed ids and the stops that ended, classified", () => {
    const week = fleetWeek(files, now);
    const voltage = week.samples.get(demoSignalId("b", 1, 1));
    // Monday 23, Tuesday 24, Wednesday 25 at 10:00; last Wednesday's 10:00 is before the window.
    expect(voltage).toEqual({
      at: [Date.UTC(2026, 10, 23, 10), Date.UTC(2026, 10, 24, 10), Date.UTC(2026, 10, 25, 10)],
      values: [170, 171, 172],
    });
    expect(week.samples.get(demoSignalId("b", 1, 4))?.values).toEqual([40, 41, 42]);
    expect(week.stops).toEqual([
      {
        machine: 1,
        start: Date.UTC(2026, 10, 23, 6),
        end: Date.UTC(2026, 10, 23, 14),
        isProgrammed: false,
        component: "comp2",
        generalCause: "Component failure",
      },
      {
        machine: 1,
        start: Date.UTC(2026, 10, 24, 6),
        end: Date.UTC(2026, 10, 24, 8),
        isProgrammed: true,
        component: "comp1",
        generalCause: "Scheduled maintenance",
      },
    ]);
  });

  it("leaves out a stop still going at now", () => {
    // Monday 23 at 09:00: that day's failure (06:00 to 14:00) is still going; last
    // Tuesday's maintenance is over.
    const early = fleetWeek(files, Date.UTC(2026, 10, 23, 9));
    expect(early.stops.map((s) => new Date(s.start).toISOString())).toEqual([
      "2026-11-17T06:00:00.000Z",
    ]);
  });
});
