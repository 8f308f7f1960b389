/**
 * Nominal speeds: `POST /v1/nominal-speeds`, `POST /v1/nominal-speeds/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/nominal-speeds/{nominal_speed_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, ErrorSchema, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import {
  filterNominalSpeeds,
  findNominalSpeed,
  findPairHolders,
  insertNominalSpeeds,
  isPairConflict,
  type NewNominalSpeed,
  type NominalSpeedRow,
  type PairHolder,
  softDeleteNominalSpeed,
  updateNominalSpeed,
} from "./queries";
import {
  type ResolvedMachine,
  type ResolvedSku,
  resolvedOrIssue,
  resolveItemReferences,
  resolveMachineRefs,
  resolveOne,
  resolveSkuRefs,
} from "./references";
import {
  NominalSpeedCreateSchema,
  NominalSpeedFiltersSchema,
  type NominalSpeedOut,
  NominalSpeedPatchSchema,
  NominalSpeedSchema,
} from "./schemas";

/** Shapes a nominal speed for the API: instants as ISO 8601 strings. */
export function toNominalSpeedOut(row: NominalSpeedRow): NominalSpeedOut {
  return {
    ...row,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
  };
}

/**
 * 409 naming the live nominal speed(s) that already hold the pairs.
 *
 * @param holders the holders found; `describe` names a pair for the message.
 */
function pairConflict(
  holders: readonly PairHolder[],
  describe: (h: PairHolder) => string,
): ApiError {
  const shown = holders.slice(0, 10).map((h) => `${describe(h)}: ${h.id}`);
  const more = holders.length > shown.length ? ` (and ${holders.length - shown.length} more)` : "";
  return new ApiError(
    409,
    `A nominal speed already exists for ${shown.join("; ")}${more}. ` +
      "There is at most one per machine and SKU: update it with PATCH, or delete it first.",
  );
}

const IdParam = z.object({ nominal_speed_id: UuidId("nominal_speed_id") });

const CONFLICT_RESPONSE = {
  409: jsonResponse(
    ErrorSchema,
    "The machine/SKU pair already has a live nominal speed; `detail` names its id.",
    {
      detail:
        'A nominal speed already exists for machine "Asset 0" and SKU "P04": ' +
        "3f0c1a9e-6b1d-4f3e-9a57-0d2f4c8b7e21. There is at most one per machine and SKU: " +
        "update it with PATCH, or delete it first.",
    },
  ),
} as const;

const createRoute = publicRoute("nominal_speeds.create", {
  method: "post",
  path: "/v1/nominal-speeds",
  operationId: "createNominalSpeeds",
  tags: ["Nominal speeds"],
  summary: "Create nominal speeds",
  description:
    `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} items, all created or none. ` +
    "`machine` and `sku` each take `id` or `name` (a SKU name matches its `name` or its `sku` code); " +
    "a reference that is missing, not found in the company, or ambiguous (a name matching several) is a 422 " +
    'at `["body", i, "machine"]` or `["body", i, "sku"]`. `nominalSpeed` (SKU units per minute) and ' +
    "`countingFactor` (default 1) must be > 0. There is at most one live nominal speed per machine/SKU pair: " +
    "a pair that already has one is a 409 naming its id; the same pair twice in the array is a 422. " +
    "Success is **200** with the created nominal speeds, machine and SKU expanded.",
  request: { body: arrayBody(NominalSpeedCreateSchema) },
  responses: {
    200: jsonResponse(z.array(NominalSpeedSchema), "The created nominal speeds."),
    ...CONFLICT_RESPONSE,
  },
});

const filterRoute = publicRoute("nominal_speeds.read", {
  method: "post",
  path: "/v1/nominal-speeds/filters",
  operationId: "searchNominalSpeeds",
  tags: ["Nominal speeds"],
  summary: "Search nominal speeds",
  description:
    "`machines` and `skus` take `{include, exclude}` id lists; `nominalSpeed` takes `greaterThan`, " +
    "`greaterThanOrEqual`, `lessThan`, `lessThanOrEqual`, `equal`, `notEqual`. Filters combine with AND; " +
    "`{}` (or no body) is the first page of 10. Ordered by machine name, machine id, SKU code, then id; " +
    "`limit` is 1 to 100; a page past the last is empty with the same totals. Deleted nominal speeds are " +
    "never listed.",
  request: {
    body: {
      required: false,
      content: { "application/json": { schema: NominalSpeedFiltersSchema, example: {} } },
    },
  },
  responses: {
    200: jsonResponse(
      pagedResponseSchema("nominalSpeeds", NominalSpeedSchema, "NominalSpeedPage"),
      "One page of nominal speeds.",
    ),
  },
});

const getRoute = publicRoute("nominal_speeds.read", {
  method: "get",
  path: "/v1/nominal-speeds/{nominal_speed_id}",
  operationId: "getNominalSpeed",
  tags: ["Nominal speeds"],
  summary: "Get a nominal speed",
  description: "A deleted nominal speed, or one of another company, is a 404.",
  request: { params: IdParam },
  responses: { 200: jsonResponse(NominalSpeedSchema, "The nominal speed."), ...NOT_FOUND_RESPONSE },
});

const patchRoute = publicRoute("nominal_speeds.update", {
  method: "patch",
  path: "/v1/nominal-speeds/{nominal_speed_id}",
  operationId: "updateNominalSpeed",
  tags: ["Nominal speeds"],
  summary: "Update a nominal speed",
  description:
    "Send only the fields to change: `nominalSpeed`, `countingFactor` (> 0), `machine`, `sku` (by `id` or " +
    "`name`, as on creation). Every field is optional and nullable: `null` leaves it unchanged, as " +
    "an absent field does (none of them can be null). An unknown field is a 422; `{}` changes nothing. Moving to a " +
    "machine/SKU pair that has another live nominal speed is a 409 naming it. Success is 204.",
  request: { params: IdParam, body: objectBody(NominalSpeedPatchSchema) },
  responses: { 204: { description: "Updated." }, ...NOT_FOUND_RESPONSE, ...CONFLICT_RESPONSE },
});

const deleteRoute = publicRoute("nominal_speeds.delete", {
  method: "delete",
  path: "/v1/nominal-speeds/{nominal_speed_id}",
  operationId: "deleteNominalSpeed",
  tags: ["Nominal speeds"],
  summary: "Delete a nominal speed",
  description:
    "Soft delete (`deletedAt` set): gone from GET and searches, and its machine/SKU pair is free for a " +
    "new nominal speed. Success is 204.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." }, ...NOT_FOUND_RESPONSE },
});

export const nominalSpeedsRoutes = createRouter()
  .openapi(createRoute, async (c) => {
    const scope = scopeOf(c);
    const items = c.req.valid("json");
    const [machineResolutions, skuResolutions] = await resolveItemReferences(scope, items);
    const issues: ValidationIssue[] = [];
    const rows: NewNominalSpeed[] = [];
    const firstIndexOfPair = new Map<string, number>();
    items.forEach((item, i) => {
      const machineResolution = machineResolutions[i];
      const skuResolution = skuResolutions[i];
      if (!machineResolution || !skuResolution) return;
      const machine = resolvedOrIssue(machineResolution, ["body", i, "machine"], issues);
      const sku = resolvedOrIssue(skuResolution, ["body", i, "sku"], issues);
      if (!machine || !sku) return;
      const pair = `${machine.id}|${sku.id}`;
      const earlier = firstIndexOfPair.get(pair);
      if (earlier !== undefined) {
        issues.push({
          loc: ["body", i],
          msg: `Same machine and SKU as item ${earlier}: at most one nominal speed per pair`,
          type: "value_error",
        });
        return;
      }
      firstIndexOfPair.set(pair, i);
      rows.push({
        machine,
        sku,
        nominalSpeed: item.nominalSpeed,
        countingFactor: item.countingFactor ?? 1,
      });
    });
    if (issues.length > 0) throw new ApiError(422, issues);

    const machinesById = new Map<number, ResolvedMachine>(
      rows.map((r) => [r.machine.id, r.machine]),
    );
    const skusById = new Map<string, ResolvedSku>(rows.map((r) => [r.sku.id, r.sku]));
    const describe = (h: PairHolder) =>
      `machine "${machinesById.get(h.machineId)?.name ?? h.machineId}" (id ${h.machineId}) and ` +
      `SKU "${skusById.get(h.skuId)?.sku ?? h.skuId}" (id ${h.skuId})`;
    const pairs = rows.map((r) => ({ machineId: r.machine.id, skuId: r.sku.id }));
    const holders = await findPairHolders(scope, pairs);
    if (holders.length > 0) throw pairConflict(holders, describe);
    try {
      const created = await insertNominalSpeeds(scope, rows);
      return c.json(created.map(toNominalSpeedOut), 200);
    } catch (error) {
      // Another request took a pair between the check and the insert.
      if (isPairConflict(error)) {
        const raced = await findPairHolders(scope, pairs);
        if (raced.length > 0) throw pairConflict(raced, describe);
      }
      throw error;
    }
  })
  .openapi(filterRoute, async (c) => {
    const filters = c.req.valid("json");
    const page = await filterNominalSpeeds(scopeOf(c), filters, pageRequest(filters));
    return c.json(pageEnvelope("nominalSpeeds", page, toNominalSpeedOut), 200);
  })
  .openapi(getRoute, async (c) => {
    const { nominal_speed_id } = c.req.valid("param");
    const row = await findNominalSpeed(scopeOf(c), nominal_speed_id.toLowerCase());
    if (!row) throw notFound("Nominal speed not found");
    return c.json(toNominalSpeedOut(row), 200);
  })
  .openapi(patchRoute, async (c) => {
    const scope = scopeOf(c);
    const { nominal_speed_id } = c.req.valid("param");
    const id = nominal_speed_id.toLowerCase();
    const patch = c.req.valid("json");
    const current = await findNominalSpeed(scope, id);
    if (!current) throw notFound("Nominal speed not found");
    const issues: ValidationIssue[] = [];
    const [machineResolution, skuResolution] = await Promise.all([
      patch.machine ? resolveOne(resolveMachineRefs, scope, patch.machine) : undefined,
      patch.sku ? resolveOne(resolveSkuRefs, scope, patch.sku) : undefined,
    ]);
    const machine =
      machineResolution && resolvedOrIssue(machineResolution, ["body", "machine"], issues);
    const sku = skuResolution && resolvedOrIssue(skuResolution, ["body", "sku"], issues);
    if (issues.length > 0) throw new ApiError(422, issues);

    const target = { machine: machine ?? current.machine, sku: sku ?? current.sku };
    const describe = (h: PairHolder) =>
      `machine "${target.machine.name}" (id ${h.machineId}) and SKU "${target.sku.sku}" (id ${h.skuId})`;
    const pairChanges =
      target.machine.id !== current.machine.id || target.sku.id !== current.sku.id;
    const pair = [{ machineId: target.machine.id, skuId: target.sku.id }];
    if (pairChanges) {
      const holders = await findPairHolders(scope, pair, id);
      if (holders.length > 0) throw pairConflict(holders, describe);
    }
    const set: {
      machineId?: number;
      skuId?: string;
      nominalSpeed?: number;
      countingFactor?: number;
    } = {};
    if (machine) set.machineId = machine.id;
    if (sku) set.skuId = sku.id;
    if (patch.nominalSpeed !== undefined) set.nominalSpeed = patch.nominalSpeed;
    if (patch.countingFactor !== undefined) set.countingFactor = patch.countingFactor;
    try {
      if (!(await updateNominalSpeed(scope, id, set))) {
        throw notFound("Nominal speed not found");
      }
    } catch (error) {
      if (isPairConflict(error)) {
        const raced = await findPairHolders(scope, pair, id);
        if (raced.length > 0) throw pairConflict(raced, describe);
      }
      throw error;
    }
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { nominal_speed_id } = c.req.valid("param");
    if (!(await softDeleteNominalSpeed(scopeOf(c), nominal_speed_id.toLowerCase()))) {
      throw notFound("Nominal speed not found");
    }
    return c.body(null, 204);
  });
