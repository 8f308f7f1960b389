/**
 * An instance no record touches is added to the KPI report by arithmetic
 * (`emptyInstanceFigures`): its figures must be those the records' computation gives it
 * (`computeInstanceFigures` with no stop and no log), whole and split by log key, ended,
 * running or not yet started.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  computeInstanceFigures,
  emptyInstanceFigures,
  type Figures,
} from "../../src/reports/kpi-figures";

const HOUR = 3_600_000;

describe("the figures of an instance without records (property)", () => {
  it("are those computed from no record, at any instant", () => {
    const instance = fc
      .tuple(
        fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2100, 0, 1) }),
        fc.integer({ min: 1, max: 25 * HOUR }),
      )
      .map(([start, length]) => ({ start, end: start + length }));
    fc.assert(
      fc.property(instance, fc.integer({ min: -30 * HOUR, max: 30 * HOUR }), (w, offset) => {
        // Now before, during (the running case) or after the instance.
        const now = w.start + offset;
        const whole = computeInstanceFigures(w, [], [], [], now).get("") as Figures;
        expect(emptyInstanceFigures(w, now)).toEqual(whole);
        const split = computeInstanceFigures(w, [], [], [], now, {
          keyOf: () => "a log",
          nullKey: "none",
        });
        expect([...split.keys()]).toEqual(["none"]);
        expect(split.get("none")).toEqual(emptyInstanceFigures(w, now));
      }),
      { numRuns: 500 },
    );
  });
});
