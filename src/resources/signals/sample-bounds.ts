/**
 * The bounds of a sample's instant (docs/input-bounds.md, "Sample instants"): on or after
 * 1970-01-01 (the request pattern, `src/http/instants.ts`) and at most `MAX_SAMPLE_AHEAD_MS`
 * after the server's clock. The operator ingestion refuses a sample beyond them; the store
 * drops those an ingestion accepted before the bound existed (`SignalStore.repairFuture`).
 */
import { MINUTE_MS } from "../../time/units";

/**
 * How far after the server's clock a sample's instant may lie, ms (5 minutes). A sample
 * stands for something a machine measured: one from the future is a gateway's clock set
 * wrong (or a test of the API), never data. A few minutes let a gateway whose clock runs a
 * little ahead (NTP drift, a batch stamped as it is sent) upload without losing its last
 * samples. Why a bound at all: every piece of work that follows a sample (the hour blocks, the
 * detector's runs and planned time, the stops it writes, the store's alarm) is then
 * bounded by the present; a sample in 9999 once made the detector plan 2.9 million days
 * (docs/input-bounds.md, docs/decisions.md).
 */
export const MAX_SAMPLE_AHEAD_MS = 5 * MINUTE_MS;

/**
 * The latest instant a sample may have when it arrives at `now`, ms.
 *
 * @param now the server's clock, ms.
 */
export function latestSampleAt(now: number): number {
  return now + MAX_SAMPLE_AHEAD_MS;
}
