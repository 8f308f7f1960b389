/**
 * `isoInstant` against the platform's `toISOString`, over days, years and edges; and
 * `INSTANT_PATTERN` (the request date-times' pattern) against zod's format and the epoch.
 */
import { z } from "@hono/zod-openapi";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INSTANT, INSTANT_PATTERN, isoInstant } from "../../src/http/instants";

describe("isoInstant", () => {
  it("formats exactly as toISOString for any instant Date accepts", () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoInstant(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it("formats runs of instants within a day and across midnight, leap days and years", () => {
    const starts = [0, Date.UTC(2022, 8, 5), Date.UTC(2024, 1, 28, 23), Date.UTC(1999, 11, 31, 23)];
    for (const start of starts) {
      for (let ms = start - 5_000; ms < start + 2 * 86_400_000; ms += 59_999) {
        expect(isoInstant(ms)).toBe(new Date(ms).toISOString());
      }
    }
    expect(isoInstant(-1)).toBe("1969-12-31T23:59:59.999Z");
    expect(isoInstant(1.5)).toBe(new Date(1.5).toISOString());
  });

  it("throws on an instant Date cannot represent, as toISOString does", () => {
    expect(() => isoInstant(8.64e15 + 1)).toThrow(RangeError);
    expect(() => isoInstant(Number.NaN)).toThrow(RangeError);
  });
});

describe("INSTANT_PATTERN, the pattern the documents give every request date-time", () => {
  /** zod's regex of `z.iso.datetime({ offset: true, local: true })`: the format the API reads. */
  const ZOD_DATE_TIME = z.regexes.datetime({ offset: true, local: true });

  it("takes exactly the ISO 8601 date-times zod reads that are not before the epoch", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.stringMatching(ZOD_DATE_TIME),
          // Near the epoch and the leap days, where the pattern has its cases.
          fc
            .date({
              min: new Date("1969-12-30T00:00:00Z"),
              max: new Date("1972-03-02T00:00:00Z"),
              noInvalidDate: true,
            })
            .map((d) => d.toISOString()),
          fc
            .tuple(
              fc.constantFrom("1970-01-01T", "1969-12-31T", "1970-01-02T"),
              fc.stringMatching(
                /^(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/,
              ),
            )
            .map(([day, time]) => day + time),
        ),
        (s) => {
          if (!ZOD_DATE_TIME.test(s)) return;
          const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
          const positiveOffsetOnFirstDay = /^1970-01-01T.*\+(?!00:00)\d\d:\d\d$/.test(s);
          // The date as written counts too: 1969-12-31T10:00:00-20:00 is after the epoch as
          // an instant, but a date before 1970 is refused however far its offset reaches.
          const writtenFrom1970 = s.slice(0, 10) >= "1970-01-01";
          expect(INSTANT.test(s), s).toBe(ms >= 0 && writtenFrom1970 && !positiveOffsetOnFirstDay);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it.each([
    ["1970-01-01T00:00:00Z", true],
    ["1970-01-01T00:00", true],
    ["1970-01-01T05:00:00-01:00", true],
    ["1970-01-01T05:00:00+01:00", false],
    ["1969-12-31T23:59:59.999Z", false],
    ["1969-12-31T10:00:00-20:00", false],
    ["1972-02-29T00:00:00Z", true],
    ["2100-02-29T00:00:00Z", false],
    ["2000-02-29T12:00:00.5+02:00", true],
    ["9999-12-31T23:59:59Z", true],
  ])("%s: %s", (s, taken) => {
    expect(INSTANT.test(s)).toBe(taken);
    expect(new RegExp(INSTANT_PATTERN).test(s)).toBe(taken);
  });
});
