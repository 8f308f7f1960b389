/**
 * The read barrier of the realtime write-behind (see the file comment of
 * `./realtime-machine.ts`): before a reader of production logs queries D1, the
 * objects of the company's machines marked in `realtime_pending` flush what
 * they hold, so every realtime write that returned before the read is shown.
 */
import type { Env } from "../env";
import { machineObject } from "./realtime-machine";

/**
 * Asks every machine of the company with realtime writes possibly not in D1 yet
 * to flush them, in parallel, and waits for all.
 *
 * Costs one indexed D1 read when no machine is marked (the common case for a
 * company without scanners writing right now).
 *
 * @param env the Worker bindings (`DB`, `REALTIME_MACHINE`).
 * @param companyId the reader's company.
 * @param machineIds only these machines (the reader's filter), or all when omitted.
 * @throws whatever a Durable Object call throws (the read then fails with a 500
 *   rather than show production that misses acknowledged writes).
 */
export async function syncPendingMachines(
  env: Pick<Env, "DB" | "REALTIME_MACHINE">,
  companyId: number,
  machineIds?: readonly number[],
): Promise<void> {
  const rows = await env.DB.prepare(
    "SELECT machine_id FROM realtime_pending WHERE company_id = CAST(?1 AS INTEGER)",
  )
    .bind(companyId)
    .raw<[number]>();
  const wanted = machineIds ? new Set(machineIds) : null;
  await Promise.all(
    rows
      .map(([machineId]) => machineId)
      .filter((machineId) => wanted === null || wanted.has(machineId))
      .map((machineId) => machineObject(env, companyId, machineId).sync({ companyId, machineId })),
  );
}
