import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  computeProductionMetrics,
  type LogSpan,
  runTimeOf,
  type StopSpan,
} from "../../src/reports/oee";
import { computeShiftIndicators } from "../../src/reports/shift-time";
import { referenceTimes } from "./oee-reference";

const T0 = Date.UTC(2026, 2, 2, 6, 0); // an instance starting 06:00 UTC
const min = (m: number) => T0 + m * 60_000;
const LATER = min(10_000); // long after the instance

const stop = (from: number, to: number | null, over: Partial<StopSpan> = {}): StopSpan => ({
  start: min(from),
  end: to === null ? null : min(to),
  isProgrammed: false,
  isIncludedInAvailability: true,
  isClassified: false,
  ...over,
});
const log = (from: number, to: number, over: Partial<LogSpan> = {}): LogSpan => ({
  start: min(from),
  end: min(to),
  type: "total",
  count: 0,
  nominalSpeed: 1,
  ...over,
});

describe("a basic example of the docs/metrics.md definitions", () => {
  // Shift 06:00-14:00; programmed stop 10:00-10:30; non-programmed 08:00-09:00;
  // one total log 06:00-14:00 count 5,400 at 15/min; one defects log count 270.
  const window = { start: min(0), end: min(480) };
  const stops = [stop(240, 270, { isProgrammed: true }), stop(120, 180)];
  const logs = [
    log(0, 480, { count: 5400, nominalSpeed: 15 }),
    log(0, 480, { type: "defects", count: 270, nominalSpeed: 15 }),
  ];
  const indicators = computeShiftIndicators(window, stops, logs, LATER);
  const metrics = computeProductionMetrics(indicators, logs);

  it("gives the shift indicators of the example", () => {
    expect(indicators.availableTime).toBe(480);
    expect(indicators.programmedDowntime).toBe(30);
    expect(indicators.nonProgrammedDowntime).toBe(60);
    expect(indicators.lateStartTime + indicators.earlyStopTime + indicators.noDataTime).toBe(0);
    expect(indicators.unavailableTime).toBe(60);
    expect(runTimeOf(indicators)).toBe(390);
    expect(indicators.availability).toBeCloseTo(0.8125, 9);
    expect(indicators.netAvailability).toBeCloseTo(390 / 450, 9);
  });

  it("gives the production metrics of the example", () => {
    expect(metrics.effectiveness).toBeCloseTo(360 / 390, 9);
    expect(metrics.quality).toBeCloseTo(0.95, 9);
    expect(metrics.oee).toBeCloseTo(0.8125 * (360 / 390) * 0.95, 9);
    expect(metrics.oee).toBeCloseTo(0.7125, 4);
    expect(metrics.netOee).toBeCloseTo(0.76, 4);
    expect(metrics.minutesLostByLowSpeed).toBeCloseTo(30, 9);
    expect(metrics.minutesLostByLowQuality).toBeCloseTo(18, 9);
  });
});

describe("time classes", () => {
  const window = { start: min(0), end: min(480) };

  it("gives overlapping stops the class of the highest priority", () => {
    const stops = [
      stop(60, 180, { isIncludedInAvailability: false }), // other stop 60-180
      stop(90, 150), // non-programmed 90-150 wins over other
      stop(120, 140, { isProgrammed: true }), // programmed 120-140 wins over both
    ];
    const i = computeShiftIndicators(window, stops, [log(0, 480)], LATER);
    expect(i.programmedDowntime).toBe(20);
    expect(i.nonProgrammedDowntime).toBe(40);
    expect(i.otherStopsTime).toBe(60);
    // other stops do not reduce availability
    expect(runTimeOf(i)).toBe(480 - 20 - 40);
  });

  it("counts late start, early stop and no data from the uncovered minutes", () => {
    const logs = [log(30, 100), log(130, 400)];
    const i = computeShiftIndicators(window, [], logs, LATER);
    expect(i.lateStartTime).toBe(30);
    expect(i.noDataTime).toBe(30);
    expect(i.earlyStopTime).toBe(80);
    expect(i.unavailableTime).toBe(140);
  });

  it("counts a whole instance without data as no data", () => {
    const i = computeShiftIndicators(window, [], [], LATER);
    expect(i.noDataTime).toBe(480);
    expect(i.availability).toBe(0);
  });

  it("runs an open stop until now while the instance runs, and does not count early stop yet", () => {
    const now = min(200);
    const i = computeShiftIndicators(window, [stop(150, null)], [log(0, 100)], now);
    expect(i.nonProgrammedDowntime).toBe(50);
    expect(i.noDataTime).toBe(50); // 100-150, between covered minutes
    expect(i.earlyStopTime).toBe(0);
    expect(i.lateStartTime).toBe(0);
  });

  it("runs an open stop until the end of an instance that has ended", () => {
    const i = computeShiftIndicators(window, [stop(400, null)], [log(0, 400)], LATER);
    expect(i.nonProgrammedDowntime).toBe(80);
    expect(i.earlyStopTime).toBe(0);
  });

  it("clips stops and logs to the instance and counts annotated downtime of classified stops", () => {
    const stops = [stop(-60, 30, { isClassified: true }), stop(470, 600, { isProgrammed: true })];
    const i = computeShiftIndicators(window, stops, [log(-100, 1000)], LATER);
    expect(i.nonProgrammedDowntime).toBe(30);
    expect(i.programmedDowntime).toBe(10);
    expect(i.annotatedDowntime).toBe(30);
  });
});

describe("a running instance, so far (docs/metrics.md)", () => {
  const window = { start: min(0), end: min(480) };

  it("gives a perfect machine 1.0 one hour into an 8-hour shift", () => {
    // 600 pieces in the first 60 minutes at a nominal speed of 10 a minute.
    const logs = [log(0, 60, { count: 600, nominalSpeed: 10 })];
    const i = computeShiftIndicators(window, [], logs, min(60));
    expect(i.availableTime).toBe(60);
    const m = computeProductionMetrics(i, logs);
    expect(m).toMatchObject({ availability: 1, effectiveness: 1, quality: 1, oee: 1 });
    expect(m.minutesLostByLowSpeed).toBe(0);
  });

  it("does not count a stop planned for later in the shift before it happens", () => {
    const logs = [log(0, 60, { count: 600, nominalSpeed: 10 })];
    const stops = [stop(240, 270, { isProgrammed: true })];
    const running = computeShiftIndicators(window, stops, logs, min(60));
    expect(running.programmedDowntime).toBe(0);
    expect(running.availability).toBe(1);
    const ended = computeShiftIndicators(window, stops, logs, LATER);
    expect(ended.availableTime).toBe(480);
    expect(ended.programmedDowntime).toBe(30);
  });

  it("moves continuously into the ended row at the shift's end", () => {
    const logs = [log(0, 480, { count: 2400, nominalSpeed: 10 })];
    const atEnd = computeShiftIndicators(window, [stop(100, 130)], logs, min(480) - 1);
    const ended = computeShiftIndicators(window, [stop(100, 130)], logs, min(480));
    expect(atEnd.availableTime).toBeCloseTo(ended.availableTime, 3);
    expect(atEnd.availability).toBeCloseTo(ended.availability ?? Number.NaN, 3);
  });
});

describe("production metrics", () => {
  const window = { start: min(0), end: min(480) };

  it("has no figure where a denominator is 0, and an OEE of 0 for planned time without production", () => {
    // Nothing recorded: 480 minutes of no data, no run time, no item.
    const empty = computeShiftIndicators(window, [], [], LATER);
    expect(computeProductionMetrics(empty, [])).toEqual({
      availability: 0,
      netAvailability: 0,
      effectiveness: null,
      quality: null,
      oee: 0,
      netOee: 0,
      minutesLostByLowSpeed: 0,
      minutesLostByLowQuality: 0,
      aboveNominalSpeed: false,
    });
    // All programmed: no planned busy time either.
    const planned = computeShiftIndicators(
      window,
      [stop(0, 480, { isProgrammed: true })],
      [],
      LATER,
    );
    expect(planned).toMatchObject({ availability: 0, netAvailability: null });
    expect(computeProductionMetrics(planned, [])).toMatchObject({
      availability: 0,
      netAvailability: null,
      effectiveness: null,
      quality: null,
      oee: 0,
      netOee: null,
    });
    // At the first instant of a running instance nothing has been planned yet.
    const first = computeShiftIndicators(window, [], [], min(0));
    expect(Object.values(computeProductionMetrics(first, [])).slice(0, 6)).toEqual(
      Array(6).fill(null),
    );
    // A line that ran and made nothing has an effectiveness of 0, still no quality.
    const ran = [log(0, 480, { count: 0, nominalSpeed: 10 })];
    const idle = computeProductionMetrics(computeShiftIndicators(window, [], ran, LATER), ran);
    expect(idle).toMatchObject({ availability: 1, effectiveness: 0, quality: null, oee: 0 });
  });

  it("computes OEE as the product of its factors whenever they exist", () => {
    const logs = [
      log(0, 300, { count: 2400, nominalSpeed: 10 }),
      log(300, 400, { type: "defects", count: 120, nominalSpeed: 10 }),
    ];
    const stops = [stop(100, 130, { isProgrammed: true }), stop(200, 260)];
    const m = computeProductionMetrics(computeShiftIndicators(window, stops, logs, LATER), logs);
    const product = (a: number | null, ...rest: (number | null)[]) =>
      rest.reduce<number>((p, x) => p * (x ?? Number.NaN), a ?? Number.NaN);
    expect(m.oee).toBeCloseTo(product(m.availability, m.effectiveness, m.quality), 12);
    expect(m.netOee).toBeCloseTo(product(m.netAvailability, m.effectiveness, m.quality), 12);
  });

  it("uses correct + defects when the instance has no total log", () => {
    const logs = [
      log(0, 240, { type: "correct", count: 900, nominalSpeed: 5 }),
      log(240, 480, { type: "defects", count: 100, nominalSpeed: 5 }),
    ];
    const i = computeShiftIndicators(window, [], logs, LATER);
    const m = computeProductionMetrics(i, logs);
    expect(m.quality).toBeCloseTo(0.9, 12);
    expect(m.effectiveness).toBeCloseTo(200 / 480, 12);
    expect(m.minutesLostByLowQuality).toBeCloseTo((200 * 100) / 1000, 12);
  });

  it("does not clamp effectiveness above 1 (a wrong nominal speed shows)", () => {
    const logs = [log(0, 480, { count: 1000, nominalSpeed: 1 })];
    const i = computeShiftIndicators(window, [], logs, LATER);
    const m = computeProductionMetrics(i, logs);
    expect(m.effectiveness).toBeCloseTo(1000 / 480, 12);
    expect(m.minutesLostByLowSpeed).toBe(0);
    expect(m.aboveNominalSpeed).toBe(true);
  });

  it("flags a shift above nominal speed, and one exactly at it or below it not", () => {
    const flagOf = (count: number) => {
      const logs = [log(0, 480, { count, nominalSpeed: 2 })];
      return computeProductionMetrics(computeShiftIndicators(window, [], logs, LATER), logs);
    };
    // 960 items at 2 a minute in 480 minutes of run time: exactly nominal speed.
    expect(flagOf(960)).toMatchObject({ effectiveness: 1, aboveNominalSpeed: false });
    expect(flagOf(961).aboveNominalSpeed).toBe(true);
    expect(flagOf(959).aboveNominalSpeed).toBe(false);
    // No run time: no effectiveness, no flag.
    const down = [stop(0, 480)];
    const none = computeProductionMetrics(computeShiftIndicators(window, down, [], LATER), []);
    expect(none).toMatchObject({ effectiveness: null, aboveNominalSpeed: false });
  });
});

describe("the sweep agrees with the straightforward classification", () => {
  // Random small shifts: minute-grained stops (some open, some classified, of
  // every class) and logs around and inside a 480-minute window, `now` before,
  // inside or after it. The reference scans every span per segment.
  const stopArb = fc.record({
    from: fc.integer({ min: -60, max: 540 }),
    length: fc.option(fc.integer({ min: 0, max: 200 }), { freq: 5 }),
    isProgrammed: fc.boolean(),
    isIncludedInAvailability: fc.boolean(),
    isClassified: fc.boolean(),
  });
  const logArb = fc.record({
    from: fc.integer({ min: -60, max: 540 }),
    length: fc.integer({ min: 0, max: 300 }),
  });
  const minutes = (ms: number) => ms / 60_000;

  it("gives the same shift indicators to 1e-9 on random shifts", () => {
    fc.assert(
      fc.property(
        fc.array(stopArb, { maxLength: 12 }),
        fc.array(logArb, { maxLength: 12 }),
        fc.integer({ min: -30, max: 600 }),
        (rawStops, rawLogs, nowMinute) => {
          const window = { start: min(0), end: min(480) };
          const stops = rawStops.map((s) =>
            stop(s.from, s.length === null ? null : s.from + s.length, {
              isProgrammed: s.isProgrammed,
              isIncludedInAvailability: s.isIncludedInAvailability,
              isClassified: s.isClassified,
            }),
          );
          const logs = rawLogs.map((l) => log(l.from, l.from + l.length));
          const now = min(nowMinute);
          const got = computeShiftIndicators(window, stops, logs, now);
          const want = referenceTimes(window, stops, logs, now);
          const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9;
          expect(close(got.programmedDowntime, minutes(want.totals.get(1) ?? 0))).toBe(true);
          expect(close(got.nonProgrammedDowntime, minutes(want.totals.get(2) ?? 0))).toBe(true);
          expect(close(got.otherStopsTime, minutes(want.totals.get(3) ?? 0))).toBe(true);
          expect(close(got.lateStartTime, minutes(want.lateStart))).toBe(true);
          expect(close(got.earlyStopTime, minutes(want.earlyStop))).toBe(true);
          expect(close(got.noDataTime, minutes(want.noData))).toBe(true);
          expect(close(got.annotatedDowntime, minutes(want.annotated))).toBe(true);
          const unavailable = minutes(
            (want.totals.get(2) ?? 0) + want.lateStart + want.earlyStop + want.noData,
          );
          // "So far": the available time is the elapsed part of the 480 minutes.
          const elapsed = Math.min(480, Math.max(0, nowMinute));
          expect(close(got.availableTime, elapsed)).toBe(true);
          const runTime = elapsed - minutes(want.totals.get(1) ?? 0) - unavailable;
          if (elapsed === 0) expect(got.availability).toBeNull();
          else expect(close(got.availability ?? Number.NaN, runTime / elapsed)).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
