/**
 * The demo week (scripts/lib/replay-week-plan.ts): the window from the shift running 7 days
 * ago to the running one, and what fills it: samples up to now, production logs cut at the
 * shift boundaries on the real dates the recording plays on, stops of the alarm runs.
 */
import { TZDate } from "@date-fns/tz";
import { describe, expect, it } from "vitest";
import { weekdayPlannedTime } from "../../scripts/lib/demo-detected-stops";
import { parseSmeRows, plantAWeekends } from "../../scripts/lib/demo-operations";
import { weekFill, weekWindow } from "../../scripts/lib/replay-week-plan";

const ZONE = "Europe/Rome";
const local = (y: number, m: number, d: number, h: number, min = 0) =>
  new TZDate(y, m - 1, d, h, min, ZONE).getTime();

function csv(
  rows: { at: number; items: number; status: number; alarm?: number; product: number }[],
) {
  const lines = rows.map(
    (r) =>
      `${new Date(r.at).toISOString().replace("T", " ").replace(".000Z", "+00:00")},0,${r.items},${r.status},0,${r.items + 1},0,${r.alarm ?? 0},${r.product}`,
  );
  return ["ts,asset,items,status,status_time,power_avg,cycle_time,alarm,product", ...lines].join(
    "\n",
  );
}

const every5 = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => from + i * 300_000);

// Recorded Tuesday 2022-09-06: P01 from 13:30 to 14:30 (across the 14:00 shift change), then
// an alarm from 14:30 to 14:45; recorded Thursday 2022-09-08: P02 from 10:00 to 10:30.
const recorded = parseSmeRows(
  csv([
    ...every5(local(2022, 9, 6, 13, 30), 12).map((at) => ({ at, items: 3, status: 2, product: 1 })),
    ...every5(local(2022, 9, 6, 14, 30), 3).map((at) => ({
      at,
      items: 0,
      status: 3,
      alarm: 1,
      product: 1,
    })),
    ...every5(local(2022, 9, 8, 10, 0), 6).map((at) => ({ at, items: 5, status: 2, product: 2 })),
  ]),
);

// Thursday 2026-11-26, 10:15 in Rome: the morning shift (06:00) runs.
const now = local(2026, 11, 26, 10, 15);

describe("the demo week", () => {
  it("reaches from the shift running 7 days ago to the start of the running one", () => {
    expect(weekWindow(now)).toEqual({
      from: local(2026, 11, 19, 6),
      until: local(2026, 11, 26, 6),
    });
    // At 23:00 the night shift (22:00) runs; 7 days ago at 23:00, the same one.
    const night = local(2026, 11, 26, 23);
    expect(weekWindow(night)).toEqual({
      from: local(2026, 11, 19, 22),
      until: local(2026, 11, 26, 22),
    });
  });

  it("cuts the closed shifts' production at the shift change, on the real date of the weekday", () => {
    const fill = weekFill(recorded, now);
    // Thursday 2022-09-08 plays on Thursday 2026-11-19 (the week's first day) and Tuesday
    // 2022-09-06 on Tuesday 2026-11-24.
    const log = (start: number, end: number, product: number, count: number) => ({
      asset: 0,
      product,
      start,
      end,
      count,
    });
    expect(fill.productionLogs).toEqual([
      log(local(2026, 11, 19, 10), local(2026, 11, 19, 10, 30), 2, 30),
      log(local(2026, 11, 24, 13, 30), local(2026, 11, 24, 14), 1, 18),
      log(local(2026, 11, 24, 14), local(2026, 11, 24, 14, 30), 1, 18),
    ]);
    expect(fill.logShiftStarts).toEqual([
      local(2026, 11, 19, 6),
      local(2026, 11, 24, 6),
      local(2026, 11, 24, 14),
    ]);
    expect(fill.stops).toEqual([
      { asset: 0, start: local(2026, 11, 24, 14, 30), end: local(2026, 11, 24, 14, 45) },
    ]);
  });

  it("leaves the running shift to live play, and sends no sample from the future", () => {
    // Today's run (10:00-10:30) is over at 10:45, but in the running shift: no log for it.
    const later = weekFill(recorded, local(2026, 11, 26, 10, 45));
    expect(later.productionLogs.map((log) => log.start)).not.toContain(local(2026, 11, 26, 10));
    expect(later.productionLogs).toHaveLength(3);
    const fill = weekFill(recorded, now);
    const today = (fill.samples.get(0) ?? []).filter((s) => s.at >= fill.until);
    expect(today.map((s) => s.at)).toEqual(every5(local(2026, 11, 26, 10), 4));
    // Last Thursday's recording played too (the week's first day).
    expect((fill.samples.get(0) ?? []).some((s) => s.at === local(2026, 11, 19, 10))).toBe(true);
  });

  it("sends the samples of a day before the window too, for the stop detection at its start", () => {
    // On Wednesday 2026-11-25 at 15:00 the window starts on Wednesday 11-18 at 14:00; the day
    // before it holds last Tuesday's recording (11-17) from 14:00 on: samples, not records.
    const fill = weekFill(recorded, local(2026, 11, 25, 15));
    expect(fill.from).toBe(local(2026, 11, 18, 14));
    const before = (fill.samples.get(0) ?? []).filter((s) => s.at < fill.from);
    // P01 from 14:00 to 14:25, the alarm rows 14:30 to 14:40.
    expect(before.map((s) => s.at)).toEqual(every5(local(2026, 11, 17, 14), 9));
    expect(fill.stops.map((s) => s.start)).toEqual([local(2026, 11, 24, 14, 30)]);
  });

  it("leaves a stop of the running shift to live play", () => {
    // At 14:40 on Tuesday the afternoon shift (14:00) runs: its alarm (14:30) is played live;
    // the same recorded alarm a week earlier is a closed shift's stop.
    const fill = weekFill(recorded, local(2026, 11, 24, 14, 40));
    expect(fill.stops).toEqual([
      { asset: 0, start: local(2026, 11, 17, 14, 30), end: local(2026, 11, 17, 14, 45) },
    ]);
  });
});

describe("the demo's plant calendar", () => {
  it("closes every Saturday and Sunday that the span touches, once each, in Rome's dates", () => {
    // The recording: Wednesday 2022-08-31 (local) to Wednesday 2022-09-21.
    expect(
      plantAWeekends(Date.parse("2022-08-31T22:00:00Z"), Date.parse("2022-09-21T15:55:00Z")),
    ).toEqual(
      ["2022-09-03", "2022-09-10", "2022-09-17"].map((saturday, i) => ({
        name: "Weekend",
        startDate: saturday,
        endDate: ["2022-09-04", "2022-09-11", "2022-09-18"][i],
      })),
    );
    // A span that starts on a Sunday (local: 00:30 Rome is still Saturday 22:30 UTC) belongs
    // to the weekend that began the day before; one within a week's working days has none.
    expect(
      plantAWeekends(local(2026, 12, 6, 0, 30), local(2026, 12, 6, 1)).map((c) => c.startDate),
    ).toEqual(["2026-12-05"]);
    expect(plantAWeekends(local(2026, 12, 1, 6), local(2026, 12, 4, 22))).toEqual([]);
  });

  it("plans the check's shifts from Monday to Friday: Friday night runs into Saturday 06:00", () => {
    const planned = weekdayPlannedTime(local(2026, 12, 4, 0), local(2026, 12, 8, 0));
    // From two days before the window (a night shift may reach into it): one stretch from
    // Wednesday 06:00 to Saturday 06:00, then nothing until Monday 06:00.
    expect(planned).toEqual([
      { start: local(2026, 12, 2, 6), end: local(2026, 12, 5, 6) },
      { start: local(2026, 12, 7, 6), end: local(2026, 12, 8, 6) },
    ]);
  });
});
