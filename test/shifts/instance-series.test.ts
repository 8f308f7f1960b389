/**
 * The instances of a report counted, paged and listed by calendar arithmetic
 * (src/shifts/instance-series.ts) against the plain listing: every instance of every
 * (definition, machine) pair within its bounds, sorted by start then machine. Random
 * definitions, zones (DST both ways, changes at midnight, a 30-minute change, a skipped date,
 * 3-hour changes), bounds on start and end, pages and runs of dates.
 */
import { TZDate } from "@date-fns/tz";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  InstanceSeries,
  type SeriesBounds,
  type SeriesInput,
} from "../../src/shifts/instance-series";
import { instancesBetween } from "../../src/shifts/instances";
import { CHANGING_ZONES, shiftTimes, timeZone } from "../fixtures/shift-arbitraries";

const DAY = 86_400_000;

interface Def {
  id: number;
  startTime: string;
  endTime: string;
  weekdays: number[];
}

/** The reference: every instance of every pair within its bounds, in report order. */
function listed(timezone: string, inputs: readonly SeriesInput<Def>[]) {
  const out: { start: number; end: number; machineId: number; definitionId: number }[] = [];
  for (const { definition, machineId, bounds } of inputs) {
    for (const i of instancesBetween(definition, timezone, bounds.startFrom, bounds.startTo)) {
      if (bounds.endAfter !== undefined && i.end <= bounds.endAfter) continue;
      if (bounds.endBefore !== undefined && i.end >= bounds.endBefore) continue;
      out.push({ ...i, machineId, definitionId: definition.id });
    }
  }
  return out.sort(
    (a, b) => a.start - b.start || a.machineId - b.machineId || a.definitionId - b.definitionId,
  );
}

const localDay = (t: number, timezone: string) => {
  const d = new TZDate(t, timezone);
  return Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()) / DAY;
};

const shape = (list: readonly { start: number; end: number; machineId: number }[]) =>
  list.map((i) => [i.start, i.end, i.machineId]);

/** Checks the series' total, pages and runs of dates against the listing. */
function agrees(
  timezone: string,
  inputs: SeriesInput<Def>[],
  pages: readonly [number, number][],
  runs: readonly [number, number][],
) {
  const expected = listed(timezone, inputs);
  const series = new InstanceSeries(timezone, inputs);
  expect(series.total).toBe(expected.length);
  for (const [offset, limit] of pages) {
    expect(shape(series.page(offset, limit)), `page ${offset}+${limit}`).toEqual(
      shape(expected.slice(offset, offset + limit)),
    );
  }
  for (const [a, b] of runs) {
    const want = expected.filter((i) => {
      const day = localDay(i.start, timezone);
      return day >= a && day < b;
    });
    const got = series.between(a, b);
    expect(shape(got), `days ${a}-${b}`).toEqual(shape(want));
    expect(got.map((i) => i.day)).toEqual(want.map((i) => localDay(i.start, timezone)));
    expect(series.countBefore(b) - series.countBefore(a)).toBe(want.length);
  }
}

describe("a report's instances by calendar arithmetic (property)", () => {
  const definitions = fc
    .array(shiftTimes({ minWeekdays: 1 }), { minLength: 1, maxLength: 3 })
    .map((defs) => defs.map((d, i) => ({ ...d, id: i + 1 })));
  // And a zone that kept an offset for a week only (Noronha, October 2000).
  const zone = timeZone([...CHANGING_ZONES, "America/Noronha"]);
  const scenario = fc
    .record({
      from: fc.oneof(
        fc.integer({ min: Date.UTC(1971, 0, 1), max: Date.UTC(2040, 0, 1) }),
        // Around Samoa's skipped 2011-12-30 and Casey's 3-hour changes.
        fc.integer({ min: Date.UTC(2011, 11, 1), max: Date.UTC(2012, 0, 10) }),
        fc.integer({ min: Date.UTC(2009, 9, 1), max: Date.UTC(2010, 3, 1) }),
      ),
      length: fc.oneof(
        fc.integer({ min: 0, max: 60 * DAY }),
        fc.integer({ min: 0, max: 3 * 365 * DAY }),
      ),
      machines: fc.array(
        fc.record({
          lateBy: fc.integer({ min: 0, max: 40 * DAY }),
          activeAfter: fc.option(fc.integer({ min: -2 * DAY, max: 40 * DAY })),
        }),
        { minLength: 1, maxLength: 3 },
      ),
      endBefore: fc.option(fc.integer({ min: 0, max: 60 * DAY })),
      pages: fc.array(fc.tuple(fc.nat(400), fc.integer({ min: 1, max: 40 })), { maxLength: 4 }),
      runs: fc.array(fc.tuple(fc.integer({ min: -3, max: 70 }), fc.nat(20)), { maxLength: 3 }),
    })
    .map((s) => ({ ...s, to: s.from + s.length }));

  it("counts, pages and lists what the listing gives", () => {
    fc.assert(
      fc.property(definitions, zone, scenario, (defs, timezone, s) => {
        const inputs: SeriesInput<Def>[] = [];
        s.machines.forEach((m, k) => {
          for (const definition of defs) {
            const bounds: SeriesBounds = { startFrom: s.from + m.lateBy, startTo: s.to };
            if (m.activeAfter !== null) bounds.endAfter = s.from + m.activeAfter;
            if (s.endBefore !== null) bounds.endBefore = s.from + s.endBefore;
            inputs.push({ definition, machineId: k + 1, bounds });
          }
        });
        const firstDay = Math.floor(s.from / DAY);
        agrees(
          timezone,
          inputs,
          s.pages,
          s.runs.map(([a, n]) => [firstDay + a, firstDay + a + n]),
        );
      }),
      { numRuns: 200 },
    );
  });

  it("sees a zone that keeps an offset for a week only (Noronha, October 2000)", () => {
    // Daylight saving from 8 to 15 October 2000: the zone's offset is sampled often enough.
    const bounds = { startFrom: Date.UTC(2000, 8, 20), startTo: Date.UTC(2000, 10, 1) };
    for (const [startTime, endTime] of [
      ["00:30", "08:30"],
      ["23:00", "07:00"],
      ["12:00", "12:00"],
    ] as const) {
      const definition = { id: 1, startTime, endTime, weekdays: [1, 2, 3, 4, 5, 6, 7] };
      const days: [number, number] = [Date.UTC(2000, 8, 20) / DAY, Date.UTC(2000, 10, 1) / DAY];
      agrees("America/Noronha", [{ definition, machineId: 1, bounds }], [[0, 50]], [days]);
    }
  });

  it("pages 130 years of a weekday shift as the listing would", () => {
    const def = { id: 1, startTime: "22:00", endTime: "06:00", weekdays: [1, 2, 3, 4, 5] };
    const bounds = { startFrom: Date.UTC(1970, 0, 1), startTo: Date.UTC(2100, 0, 1) };
    const inputs = [{ definition: def, machineId: 1, bounds }];
    const total = listed("Europe/Rome", inputs).length;
    agrees(
      "Europe/Rome",
      inputs,
      [
        [0, 10],
        [Math.floor(total / 2), 100],
        [total - 7, 100],
      ],
      [[Date.UTC(2024, 2, 25) / DAY, Date.UTC(2024, 3, 5) / DAY]],
    );
  });
});
