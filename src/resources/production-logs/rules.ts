/**
 * Rules every production log keeps, whichever endpoint writes it: `start` before `end`, and
 * `count = sensorCount x countingFactor` (docs/metrics.md). The rule of the running shift
 * (no log in a shift that has not ended; what a live log may change) is running-shift.ts.
 */

import type { ValidationIssue } from "../../http/errors";

/**
 * Sensor pulses of a count: `count / countingFactor` (docs/metrics.md: `count`
 * is `sensorCount x countingFactor`), rounded to the nearest integer, halves up
 * (`sensor_count` is an integer column).
 *
 * @returns the pulses, or null when they exceed the largest safe integer.
 */
export function sensorCountOf(count: number, countingFactor: number): number | null {
  const pulses = Math.round(count / countingFactor);
  return Number.isSafeInteger(pulses) ? pulses : null;
}

/**
 * Items of a count: `sensorCount x countingFactor` (docs/metrics.md), rounded to the
 * nearest integer, halves up: the count of a log created without one, as the
 * realtime logs compute it (src/realtime/projection.ts).
 *
 * @returns the count, or null when it exceeds the largest safe integer.
 */
export function countOf(sensorCount: number, countingFactor: number): number | null {
  const items = Math.round(sensorCount * countingFactor);
  return Number.isSafeInteger(items) ? items : null;
}

/** The 422 issue of an interval whose end is not after its start, at `loc`. */
export function startBeforeEnd(loc: (string | number)[]): ValidationIssue {
  return {
    loc,
    msg: "end must be after start",
    type: "value_error",
  };
}
