/**
 * How the Worker reaches a machine's realtime object: its name, its stub, and what the code
 * below src/realtime/ is handed to reach it (the read barrier's `heldWritesOf`, the
 * production logs' `liveLogOwnersOf`), so that only this layer names the object.
 */
import { namedStub } from "../durable/named-stub";
import type { FlushHeldWrites } from "../durable/realtime-barrier";
import type { Env } from "../env";
import type { LiveLogOwnerOf } from "../resources/production-logs/running-shift";
import type { RealtimeMachineRpc } from "./machine-rpc";
import type { MachineKey } from "./machine-types";

/**
 * The Durable Object name of a machine's realtime object, `<companyId>:<machineId>`:
 * deterministic, so every isolate reaches the same object.
 */
export function realtimeObjectName(companyId: number, machineId: number): string {
  return `${companyId}:${machineId}`;
}

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

/**
 * The read barrier's way to the machines' objects (src/durable/realtime-barrier.ts): flushes
 * one machine's held writes through its `sync`.
 *
 * @param env the bindings holding `REALTIME_MACHINE`, read at each call.
 */
export function heldWritesOf(env: Pick<Env, "REALTIME_MACHINE">): FlushHeldWrites {
  return (companyId, machineId) => machineObject(env, companyId, machineId).sync();
}

/**
 * The production-log endpoints' way to a machine's object, for its live logs
 * (src/resources/production-logs/running-shift.ts).
 */
export function liveLogOwnersOf(env: Pick<Env, "REALTIME_MACHINE">): LiveLogOwnerOf {
  return (companyId, machineId) => machineObject(env, companyId, machineId);
}
