/**
 * Ingestion of signal samples into the machine's `SignalStore`.
 */
import type { Env } from "../../env";
import { type IngestContext, signalStore } from "./store";

/** At most this many samples in one ingestion call. */
export const MAX_SAMPLES_PER_CALL = 10_000;

/**
 * Largest magnitude of a sample value. Why a bound: a bucket's `sum` (and the `avg` computed
 * from it) must be a finite float64, and two samples of 1.7e308 already sum to Infinity (no
 * compensated sum helps: the exact sum is not representable). A bucket holds at most
 * 14 days x 24 hours x `MAX_SAMPLES_PER_BLOCK` (180,000) = 60,480,000 samples, and
 * 60,480,000 x 1e300 = 6.05e307 stays below float64's largest finite value (1.8e308).
 */
export const MAX_ABS_SAMPLE_VALUE = 1e300;

/** Samples of one signal as parallel arrays: `values[i]` (finite) at `ts[i]` (ms since the epoch). */
interface SampleArrays {
  ts: readonly number[];
  values: readonly number[];
}

/**
 * Stores samples of one signal in its machine's `SignalStore`, which rewrites the blocks
 * (hours) they touch and their rollups atomically.
 *
 * A sample at an instant that already has one replaces it; within one call the last
 * sample at an instant wins (see `SignalStore.ingest`).
 *
 * @param env the bindings holding `SIGNAL_STORE`.
 * @param signal internal signal id, its company and machine, the company's raw-sample
 *   retention in ms (null: kept forever) and its hot window in ms (older hours go to the
 *   archive on R2).
 * @param samples at most `MAX_SAMPLES_PER_CALL` finite samples, in any order.
 * @param countSignal true when the signal is the machine's count signal (the store detects
 *   the machine's stops from it: docs/machine-state.md).
 * @returns the number of samples stored (after de-duplication by instant), or the
 *   store's reason for refusing the call.
 */
export async function ingestSamples(
  env: Pick<Env, "SIGNAL_STORE">,
  signal: {
    id: number;
    companyId: number;
    machineId: number;
    retentionMs: number | null;
    hotWindowMs: number;
  },
  samples: SampleArrays,
  countSignal = false,
): Promise<{ accepted: number; refused?: string }> {
  if (samples.ts.length === 0) return { accepted: 0 };
  const context: IngestContext = {
    companyId: signal.companyId,
    machineId: signal.machineId,
    countSignal,
    hotWindowMs: signal.hotWindowMs,
  };
  return signalStore(env, signal.companyId, signal.machineId).ingest(
    signal.id,
    samples.ts,
    samples.values,
    signal.retentionMs,
    context,
  );
}
