/**
 * What a machine is doing in its running shift, as `GET /v1/realtime/{machine_id}` and the
 * `machine_now` MCP tool show it: one function, so that both doors give the same answer.
 */

import type { CompanyScope } from "../db/company-scope";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import { isoInstant as iso } from "../http/instants";
import { machineObject } from "./machine-stub";
import type { SegmentView } from "./machine-types";
import { findMachine } from "./queries";
import type { RealtimeStateOut } from "./schemas";

/** 409 of a machine that runs no shift now (the exact wording). */
export function notRunning(machineId: number): ApiError {
  return new ApiError(409, `Machine ${machineId} is not running a shift now`);
}

function segmentOut(v: SegmentView): RealtimeStateOut["production"]["segments"][number] {
  return {
    productionLogId: v.productionLogId,
    sku: v.sku,
    simpleWorkOrder: v.simpleWorkOrder,
    quantity: v.quantity,
    custom: v.customJson === null ? null : (JSON.parse(v.customJson) as Record<string, unknown>),
    nominalSpeed: v.nominalSpeed,
    countingFactor: v.countingFactor,
    start: iso(v.start),
    end: v.end === null ? null : iso(v.end),
    sensorCount: v.sensorCount,
    count: v.count,
  };
}

/**
 * The running shift instance of a machine of the company, its current SKU segment, operators
 * and live production (the machine object's snapshot; instants ISO 8601 UTC).
 *
 * @param env the bindings (the realtime objects).
 * @param scope the credential's company.
 * @param machineId the machine's id.
 * @throws ApiError 404 `Machine not found` (also another company's machine); 409 when the
 *   machine runs no shift now.
 */
export async function readRealtimeState(
  env: Pick<Env, "REALTIME_MACHINE">,
  scope: CompanyScope,
  machineId: number,
): Promise<RealtimeStateOut> {
  const { companyId } = scope;
  const machine = await findMachine(scope, machineId);
  const state = await machineObject(env, companyId, machineId).snapshot();
  if (!state.ok) throw notRunning(machineId);
  const segments = state.segments.map(segmentOut);
  return {
    machine: { id: machine.id, name: machine.name },
    shift: {
      id: state.instance.id,
      name: state.instance.name,
      start: iso(state.instance.start),
      end: iso(state.instance.end),
      isConsidered: state.instance.isConsidered,
    },
    current: state.current === null ? null : segmentOut(state.current),
    operators: state.operators.map((o) => ({
      id: o.operatorId,
      firstName: o.firstName,
      lastName: o.lastName,
      start: iso(o.start),
    })),
    production: {
      sensorCount: segments.reduce((sum, s) => sum + s.sensorCount, 0),
      count: segments.reduce((sum, s) => sum + s.count, 0),
      segments,
    },
    revision: state.revision,
    at: iso(state.at),
  };
}
