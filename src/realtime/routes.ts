/**
 * Realtime: `POST /v1/realtime/{machine_id}/sku`, `POST /v1/realtime/{machine_id}/operator`
 * and `GET /v1/realtime/{machine_id}`, writing to and reading the shift instance a
 * machine is running now, through the machine's `RealtimeMachine` Durable Object.
 */

import type { Context } from "hono";
import { publicRoute } from "../app-chain/public-route";
import { type AppEnv, scopeOf } from "../app-env";
import { readSettings } from "../env";
import { ApiError, unprocessable } from "../http/errors";
import { isoInstant as iso } from "../http/instants";
import { createRouter, ErrorSchema, jsonResponse, NOT_FOUND_RESPONSE } from "../http/openapi";
import { objectBody } from "../http/schemas";
import { runningInstance } from "../shifts/queries";
import { machineObject } from "./machine-stub";
import type { RealtimeInstance, RealtimeRefusal } from "./machine-types";
import {
  findMachine,
  resolveOperatorWrite,
  resolveSegmentUpdate,
  resolveSkuWrite,
} from "./queries";
import { NOT_RUNNING, refuseEndBeforeStart, refuseSkuWrite } from "./rules";
import {
  MachineIdParam,
  RealtimeOperatorBodySchema,
  type RealtimeSkuBody,
  RealtimeSkuBodySchema,
  RealtimeStateSchema,
  SKU_WRITE_FIELDS,
} from "./schemas";
import { notRunning, readRealtimeState } from "./state";

/** Turns a refusal of the object's rules (`./rules.ts`) into the API's error: HTTP only. */
function refusal(machineId: number, refused: RealtimeRefusal): ApiError {
  switch (refused.reason) {
    case "not_running":
      return notRunning(machineId);
    case "outside_instance":
      return unprocessable(
        ["body", refused.field],
        `${refused.field} must be inside the shift instance machine ${machineId} is running ` +
          `("${refused.instance.name}", id ${refused.instance.id}, ${iso(refused.instance.start)} ` +
          `to ${iso(refused.instance.end)})`,
      );
    case "end_not_after_start":
      return unprocessable(["body", "end"], "end must be after start");
    case "no_current_segment":
      return unprocessable(
        ["body", "skuId"],
        `Machine ${machineId} has no SKU running now: give skuId or sku to start one`,
        "missing",
      );
  }
}

/**
 * Refuses, before the object is called, what the object's rules (`./rules.ts`) would
 * refuse on the instance the machine is running now (from D1): an unknown machine first
 * (404), then no shift now (409), then `check`'s refusal (422).
 *
 * @param check the rule to apply to the running instance (null = running is enough).
 * @throws ApiError 404, 409, 422.
 */
async function refuseAsTheObjectWould(
  c: Context<AppEnv>,
  machineId: number,
  check: (instance: RealtimeInstance) => RealtimeRefusal | null = () => null,
): Promise<void> {
  const scope = scopeOf(c);
  const instance = await runningInstance(scope, machineId, Date.now());
  const refused = instance ? check(instance) : NOT_RUNNING;
  if (!refused) return;
  if (refused.reason === "not_running") await findMachine(scope, machineId);
  throw refusal(machineId, refused);
}

/**
 * Runs a realtime write so that its errors come in a useful order: an unknown machine
 * (404), then a machine that runs no shift now (409), then what is wrong with the body
 * (422). The running instance is only looked up when the write fails with a 422, so
 * a write that succeeds pays nothing for it.
 */
async function inErrorOrder<T>(
  c: Context<AppEnv>,
  machineId: number,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 422) throw error;
    await refuseAsTheObjectWould(c, machineId);
    throw error;
  }
}

const NOT_RUNNING_RESPONSE = {
  409: jsonResponse(
    ErrorSchema,
    "The machine runs no shift now: `Machine <id> is not running a shift now`.",
    { detail: "Machine 1 is not running a shift now" },
  ),
} as const;

const TIMELINE =
  "Writes to one machine are applied one at a time, in the order they arrive, and take effect " +
  "immediately: when the call returns, `GET /v1/realtime/{machine_id}`, the production logs " +
  "(`live: true`) and the metrics report show it. The running shift's production is one live " +
  "production log per SKU segment (`isAutomated: true`, `type` `total`), with `sensorCount` " +
  "summed from the machine's `count` signal inside the segment and `count = sensorCount x " +
  "countingFactor`; when the shift instance ends, its logs are closed (`live: false`).";

const skuRoute = publicRoute("realtime.write", {
  method: "post",
  path: "/v1/realtime/{machine_id}/sku",
  operationId: "setRealtimeSku",
  tags: ["Realtime"],
  summary: "Set the SKU a machine is making now",
  description:
    "Attaches a SKU (and optionally a work order, a quantity and custom values) to the shift " +
    "instance the machine is running at the moment of the call, from `start` (default: now). " +
    "The segment lasts until `end`, the next SKU write's `start`, or the end of the instance. A " +
    "write with the same `start` as an earlier one replaces it, so a write without `start` always " +
    "begins a new segment, even for the current SKU (of two applied in the same millisecond, the " +
    "later one stands): a client that retries sends its own `start` " +
    "or an `Idempotency-Key`. The SKU is `skuId` or `sku` (its " +
    "name or code): neither, both naming different SKUs, or an unknown one is a 422; the " +
    "machine/SKU pair needs a nominal speed (422 `missing_nominal_speed` otherwise). A new " +
    "`simpleWorkOrderName` creates the work order. `start` outside the running instance is a " +
    "422.\n\n**Without a SKU** (every field is optional and nullable; null = not given), the write " +
    "changes the segment running now, keeping its SKU, start and log: `simpleWorkOrderId` or " +
    "`simpleWorkOrderName` attaches that work order (a scanner reading a work-order barcode), " +
    "`quantity` and `custom` replace theirs. No SKU running now is a 422 at `skuId`; `start` or " +
    "`end` without a SKU is a 422; a write with no field at all is a 422 naming the fields.\n\n" +
    "**Errors in order:** an unknown machine (404), then a machine that runs no shift now (409), " +
    `then anything about the SKU, the work order or the nominal speed (422).\n\n${TIMELINE}`,
  request: { params: MachineIdParam, body: objectBody(RealtimeSkuBodySchema) },
  responses: {
    204: { description: "Applied." },
    ...NOT_FOUND_RESPONSE,
    ...NOT_RUNNING_RESPONSE,
  },
});

const operatorRoute = publicRoute("realtime.write", {
  method: "post",
  path: "/v1/realtime/{machine_id}/operator",
  operationId: "addRealtimeOperator",
  tags: ["Realtime"],
  summary: "Add an operator to the current shift",
  description:
    "Assigns an operator of the company to the machine's running shift instance from `start` " +
    "(both fields required). Several operators can be assigned at once; assigning one again " +
    "moves their `start`. A live log's `operator` is the one assigned most recently at or " +
    "before its segment's start (else the first one assigned during it). An unknown operator " +
    "is a 422; `start` outside the running instance is a 422; no running instance is a 409." +
    `\n\n${TIMELINE}`,
  request: { params: MachineIdParam, body: objectBody(RealtimeOperatorBodySchema) },
  responses: {
    204: { description: "Applied." },
    ...NOT_FOUND_RESPONSE,
    ...NOT_RUNNING_RESPONSE,
  },
});

const getRoute = publicRoute("realtime.read", {
  method: "get",
  path: "/v1/realtime/{machine_id}",
  operationId: "getRealtimeState",
  tags: ["Realtime"],
  summary: "What a machine is doing in its running shift",
  description:
    "The shift instance the machine is running now, the current SKU and work order with their " +
    "`start`, `quantity` and `custom` values, the operators assigned with their `start`, and the " +
    "live production so far (every segment's counts are recomputed from the samples for this " +
    "answer). No running instance is a 409.",
  request: { params: MachineIdParam },
  responses: {
    200: jsonResponse(RealtimeStateSchema, "The machine's running shift."),
    ...NOT_FOUND_RESPONSE,
    ...NOT_RUNNING_RESPONSE,
  },
});

/**
 * A SKU write: a new segment of this SKU from `start` (default: now).
 *
 * @throws ApiError 404, 409, 422 (see the route).
 */
async function applySkuWrite(
  c: Context<AppEnv>,
  machine_id: number,
  body: RealtimeSkuBody,
): Promise<void> {
  const principal = c.get("principal");
  const early = body.start != null ? refuseEndBeforeStart(body.start, body.end ?? null) : null;
  if (early) throw refusal(machine_id, early);
  if (body.simpleWorkOrderName != null) {
    // A new name creates a work order before the object decides: refuse first what the
    // object would refuse, so that a refused call writes nothing. (Only here: the
    // common write without a new name keeps its single round trip.)
    const write = { start: body.start ?? null, end: body.end ?? null };
    await refuseAsTheObjectWould(c, machine_id, (instance) =>
      refuseSkuWrite(instance, write, Date.now()),
    );
  }
  const { write } = await resolveSkuWrite(
    scopeOf(c),
    machine_id,
    body,
    readSettings(c.env).credentialCacheSeconds,
  );
  const result = await machineObject(c.env, principal.companyId, machine_id).applySku(write);
  // The object publishes the write's event (segment.changed) itself, in revision order.
  if (!result.ok) throw refusal(machine_id, result);
}

/**
 * A write without a SKU: changes the work order, quantity or custom values of the
 * segment running now, keeping its SKU. `start` and `end` belong to a SKU write.
 *
 * @throws ApiError 404, 409; 422 for a body without any field, for `start`/`end`
 *   without a SKU, for an unknown work order, or when no SKU is running now.
 */
async function updateRunningSegment(
  c: Context<AppEnv>,
  machineId: number,
  body: RealtimeSkuBody,
): Promise<void> {
  const principal = c.get("principal");
  if (SKU_WRITE_FIELDS.every((field) => body[field] == null)) {
    throw unprocessable(
      ["body"],
      `Give at least one of ${SKU_WRITE_FIELDS.join(", ")}: skuId or sku starts a SKU segment; ` +
        "simpleWorkOrderId, simpleWorkOrderName, quantity or custom alone change the segment running now",
      "missing",
    );
  }
  for (const field of ["start", "end"] as const) {
    if (body[field] != null) {
      throw unprocessable(
        ["body", field],
        `${field} needs a SKU (skuId or sku): a write without one changes the segment running now`,
      );
    }
  }
  if (body.simpleWorkOrderName != null) {
    // A new name creates a work order: refuse first what the object would refuse for a
    // machine that runs no shift, so that a refused call writes nothing.
    await refuseAsTheObjectWould(c, machineId);
  }
  const { simpleWorkOrder } = await resolveSegmentUpdate(scopeOf(c), machineId, body);
  const update = {
    ...(simpleWorkOrder ? { simpleWorkOrder } : {}),
    ...(body.quantity != null ? { quantity: body.quantity } : {}),
    ...(body.custom != null ? { customJson: JSON.stringify(body.custom) } : {}),
  };
  const result = await machineObject(c.env, principal.companyId, machineId).updateSegment(update);
  if (!result.ok) throw refusal(machineId, result);
}

// The read first: in /docs it comes before the writes, whose "Try it out" the page fills in
// from its answer (src/http/docs-page.ts).
export const realtimeRoutes = createRouter()
  .openapi(getRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    return c.json(await readRealtimeState(c.env, scopeOf(c), machine_id), 200);
  })
  .openapi(skuRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    const body = c.req.valid("json");
    await inErrorOrder(c, machine_id, () =>
      body.skuId == null && body.sku == null
        ? updateRunningSegment(c, machine_id, body)
        : applySkuWrite(c, machine_id, body),
    );
    return c.body(null, 204);
  })
  .openapi(operatorRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    const body = c.req.valid("json");
    const principal = c.get("principal");
    const { operator } = await resolveOperatorWrite(scopeOf(c), machine_id, body.operatorId);
    const assignment = {
      operatorId: operator.id,
      firstName: operator.firstName,
      lastName: operator.lastName,
      start: body.start,
    };
    const result = await machineObject(c.env, principal.companyId, machine_id).assignOperator(
      assignment,
    );
    if (!result.ok) throw refusal(machine_id, result);
    return c.body(null, 204);
  });
