/**
 * `isoInstant` against the platform's `toISOString`, over days, years and edges.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoInstant } from "../../src/http/instants";

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
