/**
 * The time units of src/, in milliseconds, and the instant helpers built on them alone (no
 * time zone here: a plant's local day is src/http/instants.ts's and src/shifts/'s). The one
 * place these are declared: test/architecture.test.ts fails on a `SECOND_MS`, `MINUTE_MS`,
 * `HOUR_MS`, `DAY_MS` or `WEEK_MS` declared anywhere else in src/.
 */

/** A second, ms. */
export const SECOND_MS = 1_000;
/** A minute, ms. */
export const MINUTE_MS = 60 * SECOND_MS;
/** An hour, ms. */
export const HOUR_MS = 60 * MINUTE_MS;
/** A UTC day (24 hours), ms; a local day around a daylight-saving change is not one. */
export const DAY_MS = 24 * HOUR_MS;

/**
 * The start of the UTC hour holding an instant (`hourStart(t) <= t < hourStart(t) + HOUR_MS`).
 *
 * @param t an instant, ms since the epoch (before 1970 too).
 * @returns the hour's start, ms since the epoch.
 */
export function hourStart(t: number): number {
  return Math.floor(t / HOUR_MS) * HOUR_MS;
}
