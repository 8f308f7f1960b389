/**
 * Simple work orders: `POST /v1/simple-work-orders`, `POST /v1/simple-work-orders/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/simple-work-orders/{simple_work_order_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import type { Principal } from "../../app-env";
import { scopeOf } from "../../app-env";
import { notFound } from "../../http/errors";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, ErrorSchema, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import {
  filterSimpleWorkOrders,
  findSimpleWorkOrder,
  renameSimpleWorkOrder,
  type SimpleWorkOrderRow,
  softDeleteSimpleWorkOrder,
  upsertSimpleWorkOrders,
} from "./queries";
import {
  SimpleWorkOrderCreateSchema,
  SimpleWorkOrderFiltersSchema,
  type SimpleWorkOrderOut,
  SimpleWorkOrderPatchSchema,
  SimpleWorkOrderSchema,
} from "./schemas";

/** Shapes a work order for the API: company expanded, instants as ISO 8601 strings. */
function toSimpleWorkOrderOut(row: SimpleWorkOrderRow, principal: Principal): SimpleWorkOrderOut {
  return {
    id: row.id,
    company: { id: principal.companyId, name: principal.companyName },
    name: row.name,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
  };
}

const IdParam = z.object({ simple_work_order_id: UuidId("simple_work_order_id") });

const createRoute = publicRoute("simple_work_orders.create", {
  method: "post",
  path: "/v1/simple-work-orders",
  operationId: "createSimpleWorkOrders",
  tags: ["Simple work orders"],
  summary: "Create simple work orders (idempotent by name)",
  description:
    `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} items \`{name}\`, handled all or none ` +
    "(one invalid item gives a 422 whose `loc` starts with its index). Names are trimmed and " +
    "de-duplicated: the response has one work order per distinct name, in the order of first appearance. " +
    "A name that already exists returns the existing work order unchanged; the name of a deleted work " +
    "order restores it (same id). Success is **200**, whether or not anything was new.",
  request: { body: arrayBody(SimpleWorkOrderCreateSchema) },
  responses: {
    200: jsonResponse(z.array(SimpleWorkOrderSchema), "One work order per distinct name."),
  },
});

const filterRoute = publicRoute("simple_work_orders.read", {
  method: "post",
  path: "/v1/simple-work-orders/filters",
  operationId: "searchSimpleWorkOrders",
  tags: ["Simple work orders"],
  summary: "Search simple work orders",
  description:
    "`simpleWorkOrders.include`/`exclude` take ids; `names.search` is a SQL LIKE pattern in which `%` is " +
    "the only wildcard. Filters combine with AND; `{}` (or no body) is the first page of 10. Ordered by " +
    "name, then id; `limit` is 1 to 100; a page past the last is empty with the same totals. " +
    "Deleted work orders are listed only with `includeDeleted: true`. Pull sync: `updatedAt`, " +
    "`includeDeleted` and the `syncAfter` cursor order rows by (`updatedAt`, id) (see the API guide).",
  request: {
    body: {
      required: false,
      content: { "application/json": { schema: SimpleWorkOrderFiltersSchema, example: {} } },
    },
  },
  responses: {
    200: jsonResponse(
      pagedResponseSchema("simpleWorkOrders", SimpleWorkOrderSchema, "SimpleWorkOrderPage"),
      "One page of work orders.",
    ),
  },
});

const getRoute = publicRoute("simple_work_orders.read", {
  method: "get",
  path: "/v1/simple-work-orders/{simple_work_order_id}",
  operationId: "getSimpleWorkOrder",
  tags: ["Simple work orders"],
  summary: "Get a simple work order",
  description: "A deleted work order, or one of another company, is a 404.",
  request: { params: IdParam },
  responses: { 200: jsonResponse(SimpleWorkOrderSchema, "The work order."), ...NOT_FOUND_RESPONSE },
});

const patchRoute = publicRoute("simple_work_orders.update", {
  method: "patch",
  path: "/v1/simple-work-orders/{simple_work_order_id}",
  operationId: "updateSimpleWorkOrder",
  tags: ["Simple work orders"],
  summary: "Rename a simple work order",
  description:
    "Body `{name}` (trimmed; optional and nullable: `null` leaves the name unchanged, as `{}` " +
    "does; an unknown field is a 422). Success is 204 " +
    "with an empty body. A name used by another work order of the company, deleted ones included, is a " +
    "409 whose `detail` names that work order.",
  request: { params: IdParam, body: objectBody(SimpleWorkOrderPatchSchema) },
  responses: {
    204: { description: "Renamed." },
    ...NOT_FOUND_RESPONSE,
    409: jsonResponse(ErrorSchema, "The name belongs to another work order (maybe deleted).", {
      detail:
        'A simple work order named "WO-2026-0042" already exists (id ' +
        "3f0c1a9e-6b1d-4f3e-9a57-0d2f4c8b7e21, deleted); names are unique in the company, " +
        "deleted work orders included",
    }),
  },
});

const deleteRoute = publicRoute("simple_work_orders.delete", {
  method: "delete",
  path: "/v1/simple-work-orders/{simple_work_order_id}",
  operationId: "deleteSimpleWorkOrder",
  tags: ["Simple work orders"],
  summary: "Delete a simple work order",
  description:
    "Soft delete: the work order disappears from GET and searches, but its name stays reserved: " +
    "creating that name again restores it with the same id, and renaming another work order to it is a 409. " +
    "Success is 204.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." }, ...NOT_FOUND_RESPONSE },
});

export const simpleWorkOrdersRoutes = createRouter()
  .openapi(createRoute, async (c) => {
    const items = c.req.valid("json");
    const principal = c.get("principal");
    const names = [...new Set(items.map((item) => item.name))];
    const rows = await upsertSimpleWorkOrders(scopeOf(c), names);
    return c.json(
      rows.map((r) => toSimpleWorkOrderOut(r, principal)),
      200,
    );
  })
  .openapi(filterRoute, async (c) => {
    const filters = c.req.valid("json");
    const principal = c.get("principal");
    const page = await filterSimpleWorkOrders(scopeOf(c), filters, pageRequest(filters));
    return c.json(
      pageEnvelope("simpleWorkOrders", page, (r) => toSimpleWorkOrderOut(r, principal)),
      200,
    );
  })
  .openapi(getRoute, async (c) => {
    const { simple_work_order_id } = c.req.valid("param");
    const principal = c.get("principal");
    const row = await findSimpleWorkOrder(scopeOf(c), simple_work_order_id.toLowerCase());
    if (!row) throw notFound("Simple work order not found");
    return c.json(toSimpleWorkOrderOut(row, principal), 200);
  })
  .openapi(patchRoute, async (c) => {
    const { simple_work_order_id } = c.req.valid("param");
    const { name } = c.req.valid("json");
    const found = await renameSimpleWorkOrder(scopeOf(c), simple_work_order_id.toLowerCase(), name);
    if (!found) throw notFound("Simple work order not found");
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { simple_work_order_id } = c.req.valid("param");
    const deleted = await softDeleteSimpleWorkOrder(scopeOf(c), simple_work_order_id.toLowerCase());
    if (!deleted) throw notFound("Simple work order not found");
    return c.body(null, 204);
  });
