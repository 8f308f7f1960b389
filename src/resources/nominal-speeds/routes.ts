/**
 * Nominal speeds: `POST /v1/nominal-speeds`, `POST /v1/nominal-speeds/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/nominal-speeds/{nominal_speed_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import { notFound } from "../../http/errors";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, ErrorSchema, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import {
  filterNominalSpeeds,
  findNominalSpeed,
  type NominalSpeedRow,
  softDeleteNominalSpeed,
} from "./queries";
import { createNominalSpeeds, patchNominalSpeed } from "./rules";
import {
  NominalSpeedCreateSchema,
  NominalSpeedFiltersSchema,
  type NominalSpeedOut,
  NominalSpeedPatchSchema,
  NominalSpeedSchema,
} from "./schemas";

/** Shapes a nominal speed for the API: instants as ISO 8601 strings. */
function toNominalSpeedOut(row: NominalSpeedRow): NominalSpeedOut {
  return {
    ...row,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
  };
}

const IdParam = z.object({ nominal_speed_id: UuidId("nominal_speed_id") });

const CONFLICT_RESPONSE = {
  409: jsonResponse(
    ErrorSchema,
    "The machine/SKU pair already has an active nominal speed; `detail` names its id.",
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
    "`countingFactor` (default 1) must be > 0. There is at most one active nominal speed (not deleted) per machine/SKU pair: " +
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
    "machine/SKU pair that has another active nominal speed is a 409 naming it. Success is 204.",
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
    const created = await createNominalSpeeds(scopeOf(c), c.req.valid("json"));
    return c.json(created.map(toNominalSpeedOut), 200);
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
    const { nominal_speed_id } = c.req.valid("param");
    await patchNominalSpeed(scopeOf(c), nominal_speed_id.toLowerCase(), c.req.valid("json"));
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { nominal_speed_id } = c.req.valid("param");
    if (!(await softDeleteNominalSpeed(scopeOf(c), nominal_speed_id.toLowerCase()))) {
      throw notFound("Nominal speed not found");
    }
    return c.body(null, 204);
  });
