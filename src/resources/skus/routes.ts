/**
 * SKUs: `POST /v1/skus`, `POST /v1/skus/filters`, `GET`, `PATCH` and `DELETE /v1/skus/{sku_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import type { Principal } from "../../app-env";
import { scopeOf } from "../../app-env";
import { notFound } from "../../http/errors";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import { filterSkus, findSku, insertSkus, type SkuRow, softDeleteSku, updateSku } from "./queries";
import {
  SkuCreateSchema,
  SkuFiltersSchema,
  type SkuOut,
  SkuPatchSchema,
  SkuSchema,
} from "./schemas";

/** Shapes a SKU row for the API: company expanded, instants as ISO 8601 strings. */
function toSkuOut(row: SkuRow, principal: Principal): SkuOut {
  return {
    id: row.id,
    company: { id: principal.companyId, name: principal.companyName },
    sku: row.sku,
    name: row.name,
    description: row.description,
    unit: row.unit,
    archived: row.archived,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
  };
}

const SkuIdParam = z.object({ sku_id: UuidId("sku_id") });

const createRoute = publicRoute("skus.create", {
  method: "post",
  path: "/v1/skus",
  operationId: "createSkus",
  tags: ["SKUs"],
  summary: "Create SKUs",
  description:
    `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} SKUs, all created or none: ` +
    'one invalid item gives a 422 whose `loc` starts with its index (`["body", 3, "sku"]`). ' +
    "`unit` defaults to `units` (null = no unit), `archived` to false. Codes need not be unique. " +
    "Success is **200** with the created SKUs in the order given.",
  request: { body: arrayBody(SkuCreateSchema) },
  responses: { 200: jsonResponse(z.array(SkuSchema), "The created SKUs.") },
});

const filterRoute = publicRoute("skus.read", {
  method: "post",
  path: "/v1/skus/filters",
  operationId: "searchSkus",
  tags: ["SKUs"],
  summary: "Search SKUs",
  description:
    "Every filter is optional and they combine with AND; `{}` (or no body) is the first page of 10. " +
    "`skus.search`, `names.search`, `description.search` and `unit.search` are fuzzy: case- and " +
    "accent-insensitive containment (`jose` finds `José`), at most 50 UTF-8 bytes. " +
    "`skus.include`/`skus.exclude` take SKU ids. Archived SKUs are included; deleted ones never. " +
    "Ordered by `sku` code, then id; `limit` is 1 to 100; a page past the last is empty with the same totals.",
  request: {
    body: {
      required: false,
      content: { "application/json": { schema: SkuFiltersSchema, example: {} } },
    },
  },
  responses: {
    200: jsonResponse(pagedResponseSchema("skus", SkuSchema, "SkuPage"), "One page of SKUs."),
  },
});

const getRoute = publicRoute("skus.read", {
  method: "get",
  path: "/v1/skus/{sku_id}",
  operationId: "getSku",
  tags: ["SKUs"],
  summary: "Get a SKU",
  description: "A deleted SKU, or one of another company, is a 404.",
  request: { params: SkuIdParam },
  responses: { 200: jsonResponse(SkuSchema, "The SKU."), ...NOT_FOUND_RESPONSE },
});

const patchRoute = publicRoute("skus.update", {
  method: "patch",
  path: "/v1/skus/{sku_id}",
  operationId: "updateSku",
  tags: ["SKUs"],
  summary: "Update a SKU",
  description:
    "Send only the fields to change; each is optional and nullable. `null` for `sku` or `archived` " +
    "(which cannot be null) leaves them unchanged, as an absent field does; `null` for `name`, " +
    "`description` or `unit` clears them. An unknown field is a 422. " +
    "`archived: true` archives and `archived: false` unarchives (an archived SKU stays in the catalog " +
    "and in searches). Changing `unit` converts no historical count. `{}` changes nothing. Success is 204.",
  request: { params: SkuIdParam, body: objectBody(SkuPatchSchema) },
  responses: { 204: { description: "Updated." }, ...NOT_FOUND_RESPONSE },
});

const deleteRoute = publicRoute("skus.delete", {
  method: "delete",
  path: "/v1/skus/{sku_id}",
  operationId: "deleteSku",
  tags: ["SKUs"],
  summary: "Delete a SKU",
  description:
    "Soft delete: `deletedAt` is set and the SKU disappears from GET and searches. Success is 204.",
  request: { params: SkuIdParam },
  responses: { 204: { description: "Deleted." }, ...NOT_FOUND_RESPONSE },
});

export const skusRoutes = createRouter()
  .openapi(createRoute, async (c) => {
    const items = c.req.valid("json");
    const principal = c.get("principal");
    const rows = await insertSkus(
      scopeOf(c),
      items.map((item) => ({
        sku: item.sku,
        name: item.name ?? null,
        description: item.description ?? null,
        unit: item.unit === undefined ? "units" : item.unit,
        archived: item.archived ?? false,
      })),
    );
    return c.json(
      rows.map((r) => toSkuOut(r, principal)),
      200,
    );
  })
  .openapi(filterRoute, async (c) => {
    const filters = c.req.valid("json");
    const principal = c.get("principal");
    const page = await filterSkus(scopeOf(c), filters, pageRequest(filters));
    return c.json(
      pageEnvelope("skus", page, (r) => toSkuOut(r, principal)),
      200,
    );
  })
  .openapi(getRoute, async (c) => {
    const { sku_id } = c.req.valid("param");
    const principal = c.get("principal");
    const row = await findSku(scopeOf(c), sku_id.toLowerCase());
    if (!row) throw notFound("SKU not found");
    return c.json(toSkuOut(row, principal), 200);
  })
  .openapi(patchRoute, async (c) => {
    const { sku_id } = c.req.valid("param");
    const patch = c.req.valid("json");
    if (!(await updateSku(scopeOf(c), sku_id.toLowerCase(), patch))) {
      throw notFound("SKU not found");
    }
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { sku_id } = c.req.valid("param");
    if (!(await softDeleteSku(scopeOf(c), sku_id.toLowerCase()))) {
      throw notFound("SKU not found");
    }
    return c.body(null, 204);
  });
