/**
 * The example values of the OpenAPI document: records of the demo that `npm start` loads,
 * whose ids are the same on every install (scripts/lib/demo-ids.ts, docs/demo-data.md), so
 * that "Try it out" on `/docs` answers with real data when given the demo key.
 * test/scripts/demo-ids.test.ts keeps these equal to the demo's ids.
 */

/** Demo Plant A's "Asset 0": its uuid (signals routes) and integer id (realtime routes). */
export const EXAMPLE_MACHINE_UUID = "a0000000-0000-4000-8000-000001000000";
export const EXAMPLE_MACHINE_ID = 1;
/** Asset 0's `power` signal. */
export const EXAMPLE_SIGNAL_ID = "a5000000-0000-4000-8000-000001000001";
/** A day of the recorded data with production on every machine: a one-day window at 1 h. */
export const EXAMPLE_WINDOW = {
  start: "2022-09-05T00:00:00Z",
  end: "2022-09-06T00:00:00Z",
  aggUnit: "h",
} as const;
/** The first demo operator of Demo Plant A (integer id on a fresh install). */
export const EXAMPLE_OPERATOR_ID = 1;
