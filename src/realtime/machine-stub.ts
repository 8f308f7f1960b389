/**
 * How the Worker reaches a machine's realtime object: its name and its stub.
 */
import { namedStub } from "../durable/named-stub";
import { realtimeObjectName } from "../durable/realtime-barrier";
import type { Env } from "../env";
import type { RealtimeMachineRpc } from "./machine-rpc";
import type { MachineKey } from "./machine-types";

export { realtimeObjectName };

/**
 * The machine a realtime object is for, from its name (`ctx.id.name`).
 *
 * @throws Error when the name is absent or not `<companyId>:<machineId>` (an object reached
 *   other than by `machineObject`: a bug).
 */
export function machineKeyOf(name: string | undefined): MachineKey {
  const match = /^(\d+):(\d+)$/.exec(name ?? "");
  if (!match) throw new Error(`RealtimeMachine reached by the name ${String(name)}`);
  return { companyId: Number(match[1]), machineId: Number(match[2]) };
}

/**
 * The stub of a machine's object (`<companyId>:<machineId>`), for the realtime routes and
 * the read barrier.
 *
 * @param env the bindings holding `REALTIME_MACHINE`.
 * @returns a stub; creating it makes no call.
 */
export function machineObject(
  env: Pick<Env, "REALTIME_MACHINE">,
  companyId: number,
  machineId: number,
): DurableObjectStub<RealtimeMachineRpc> {
  return namedStub(env.REALTIME_MACHINE, realtimeObjectName(companyId, machineId));
}
