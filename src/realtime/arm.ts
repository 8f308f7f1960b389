/**
 * Starts the shift-boundary clock of machines: each machine's realtime object takes its
 * running instance (or waits for the next one's start) and wakes at every boundary, so that
 * the machine's live stream publishes `shift.ended` and `shift.started` whether or not
 * anything is ever written to the machine.
 */
import type { Env } from "../env";
import { logError } from "../observability/log";
import { machineObject } from "./machine-stub";

/** Objects armed at once (as the read barrier's concurrency). */
const ARM_CONCURRENCY = 8;

/**
 * Arms the realtime objects of machines (after machines or shift definitions are created).
 *
 * @param env the bindings holding `REALTIME_MACHINE`.
 * @param companyId the machines' company; `machineIds` the machines (internal ids).
 * @returns once every object answered; never throws: a failure is logged (the object is
 *   armed anyway by its machine's next realtime call).
 */
export async function armMachines(
  env: Pick<Env, "REALTIME_MACHINE">,
  companyId: number,
  machineIds: readonly number[],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let id = machineIds[next++]; id !== undefined; id = machineIds[next++]) {
      try {
        await machineObject(env, companyId, id).arm();
      } catch (error) {
        logError("realtime_arm", error, { companyId, machineId: id });
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(ARM_CONCURRENCY, machineIds.length) }, () => worker()),
  );
}
