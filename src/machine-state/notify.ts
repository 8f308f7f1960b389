/**
 * What the operator API tells a machine's detector (docs/machine-state.md, "Where the state
 * lives"): a stop of the machine recorded, edited or deleted, and new shifts. The change is
 * already in D1 when it is told; a failure to tell is logged and does not fail the change
 * (the detector reads the machine's plan and recorded stops again within the hour).
 */
import type { Env } from "../env";
import { logError } from "../observability/log";
import { machineStateStore, type RecordedStopChange } from "./signal-store";

/** Stores told at once (as the realtime objects are armed). */
const CONCURRENCY = 8;

/**
 * Tells a machine's detector that one of its stops changed through the operator API.
 *
 * @returns once the detector evaluated the change; never throws.
 */
export async function tellRecordedStop(
  env: Pick<Env, "SIGNAL_STORE">,
  companyId: number,
  machineId: number,
  change: RecordedStopChange,
): Promise<void> {
  try {
    await machineStateStore(env, companyId, machineId).recordedStopChanged(
      { companyId, machineId },
      change,
    );
  } catch (error) {
    logError("stop_detection_recorded_stop", error, { companyId, machineId });
  }
}

/**
 * Tells the detectors of machines that their shifts changed.
 *
 * @returns once every store answered; never throws.
 */
export async function tellPlanChanged(
  env: Pick<Env, "SIGNAL_STORE">,
  companyId: number,
  machineIds: readonly number[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let id = machineIds[next++]; id !== undefined; id = machineIds[next++]) {
      try {
        await machineStateStore(env, companyId, id).planChanged({ companyId, machineId: id });
      } catch (error) {
        logError("stop_detection_plan", error, { companyId, machineId: id });
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, machineIds.length) }, () => worker()),
  );
}
