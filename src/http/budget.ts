/**
 * The isolate shared between requests (docs/bounded-work.md, "The budget of a request"):
 * requests of every company run in the same isolates, one JavaScript turn at a time, so a
 * long loop of one request (materializing years of shift instances, adding up a year of
 * KPIs) holds up every other. Such loops do their work in chunks and let the others run in
 * between with `yieldToOtherRequests`.
 */

/** Most items a loop handles between two yields (a few milliseconds of work at most). */
export const ITEMS_PER_TURN = 250;

/**
 * Resolves after a timer turn, in which the requests waiting on the isolate run.
 *
 * @returns a promise of nothing; it never rejects.
 */
export function yieldToOtherRequests(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
