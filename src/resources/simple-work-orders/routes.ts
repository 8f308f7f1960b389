/**
 * Simple work orders: `POST /v1/simple-work-orders`, `POST /v1/simple-work-orders/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/simple-work-orders/{simple_work_order_id}`, in the shared
 * shape (../crud.ts). Their own: names unique in the company, deleted ones included, so a
 * create is idempotent by name and restores a deleted one, and a rename to a taken name is
 * a 409 (./queries.ts).
 */
import { createRouter, ErrorSchema, jsonResponse } from "../../http/openapi";
import { MAX_CREATE_ITEMS } from "../../http/schemas";
import { crudRoutes, shownWithCompany, uuidPathId } from "../crud";
import { renameSimpleWorkOrder, simpleWorkOrderTable, upsertSimpleWorkOrders } from "./queries";
import {
  SimpleWorkOrderCreateSchema,
  SimpleWorkOrderFiltersSchema,
  SimpleWorkOrderPatchSchema,
  SimpleWorkOrderSchema,
} from "./schemas";

export const simpleWorkOrdersRoutes = crudRoutes(createRouter(), {
  scope: "simple_work_orders",
  path: "/v1/simple-work-orders",
  tag: "Simple work orders",
  name: { one: "SimpleWorkOrder", many: "SimpleWorkOrders", list: "simpleWorkOrders" },
  noun: { one: "work order", many: "work orders" },
  id: uuidPathId("simple_work_order_id"),
  notFound: "Simple work order not found",
  schemas: {
    row: SimpleWorkOrderSchema,
    create: SimpleWorkOrderCreateSchema,
    patch: SimpleWorkOrderPatchSchema,
    filters: SimpleWorkOrderFiltersSchema,
  },
  table: simpleWorkOrderTable,
  out: shownWithCompany,
  create: {
    summary: "Create simple work orders (idempotent by name)",
    description:
      `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} items \`{name}\`, handled all or none ` +
      "(one invalid item gives a 422 whose `loc` starts with its index). Names are trimmed and " +
      "de-duplicated: the response has one work order per distinct name, in the order of first appearance. " +
      "A name that already exists returns the existing work order unchanged; the name of a deleted work " +
      "order restores it (same id). Success is **200**, whether or not anything was new.",
    created: "One work order per distinct name.",
    run: ({ scope }, items) =>
      upsertSimpleWorkOrders(scope, [...new Set(items.map((item) => item.name))]),
  },
  search: {
    summary: "Search simple work orders",
    description:
      "`simpleWorkOrders.include`/`exclude` take ids; `names.search` is a SQL LIKE pattern in which `%` is " +
      "the only wildcard. Filters combine with AND; `{}` (or no body) is the first page of 10. Ordered by " +
      "name, then id; `limit` is 1 to 100; a page past the last is empty with the same totals. " +
      "Deleted work orders are listed only with `includeDeleted: true`. Pull sync: `updatedAt`, " +
      "`includeDeleted` and the `syncAfter` cursor order rows by (`updatedAt`, id) (see the API guide).",
  },
  get: { summary: "Get a simple work order" },
  update: {
    summary: "Rename a simple work order",
    description:
      "Body `{name}` (trimmed; optional and nullable: `null` leaves the name unchanged, as `{}` " +
      "does; an unknown field is a 422). Success is 204 " +
      "with an empty body. A name used by another work order of the company, deleted ones included, is a " +
      "409 whose `detail` names that work order.",
    done: "Renamed.",
    responses: {
      409: jsonResponse(ErrorSchema, "The name belongs to another work order (maybe deleted).", {
        detail:
          'A simple work order named "WO-2026-0042" already exists (id ' +
          "3f0c1a9e-6b1d-4f3e-9a57-0d2f4c8b7e21, deleted); names are unique in the company, " +
          "deleted work orders included",
      }),
    },
    run: ({ scope }, id, patch) => renameSimpleWorkOrder(scope, id, patch.name),
  },
  delete: {
    summary: "Delete a simple work order",
    description:
      "Soft delete: the work order disappears from GET and searches, but its name stays reserved: " +
      "creating that name again restores it with the same id, and renaming another work order to it is a 409. " +
      "Success is 204.",
  },
});
