/**
 * Operators: `POST /v1/operators`, `POST /v1/operators/filters`, and `GET`,
 * `PATCH`, `DELETE /v1/operators/{operator_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import type { Principal } from "../../app-env";
import { scopeOf } from "../../app-env";
import { notFound } from "../../http/errors";
import { EXAMPLE_OPERATOR_ID } from "../../http/examples";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, IntId, MAX_CREATE_ITEMS, objectBody } from "../../http/schemas";
import {
  filterOperators,
  findOperator,
  insertOperators,
  type OperatorRow,
  softDeleteOperator,
  updateOperator,
} from "./queries";
import {
  OperatorCreateSchema,
  OperatorFiltersSchema,
  type OperatorOut,
  OperatorPatchSchema,
  OperatorSchema,
} from "./schemas";

/** Shapes an operator for the API, with the company expanded. */
function toOperatorOut(row: OperatorRow, principal: Principal): OperatorOut {
  return {
    id: row.id,
    company: { id: principal.companyId, name: principal.companyName },
    firstName: row.firstName,
    lastName: row.lastName,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
  };
}

const OperatorIdParam = z.object({
  operator_id: IntId("operator_id").openapi({ example: EXAMPLE_OPERATOR_ID }),
});

const createRoute = publicRoute("operators.create", {
  method: "post",
  path: "/v1/operators",
  operationId: "createOperators",
  tags: ["Operators"],
  summary: "Create operators",
  description:
    `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} operators, all created or none: ` +
    "one invalid item gives a 422 whose `loc` starts with its index. `firstName` and `lastName` are " +
    "both optional and nullable (a PATCH completes the operator later). " +
    "Success is **200** with the created operators, with their integer ids, in the order given.",
  request: { body: arrayBody(OperatorCreateSchema) },
  responses: { 200: jsonResponse(z.array(OperatorSchema), "The created operators.") },
});

const filterRoute = publicRoute("operators.read", {
  method: "post",
  path: "/v1/operators/filters",
  operationId: "searchOperators",
  tags: ["Operators"],
  summary: "Search operators",
  description:
    "`firstName.search` and `lastName.search` are fuzzy filters combined with AND: case- and " +
    "accent-insensitive containment (`jose` finds `José`), at most 50 UTF-8 bytes. `{}` (or no body) " +
    "is the first page of 10. Ordered by first name, then last name (case- and accent-insensitively, " +
    "missing names last), then id; `limit` is 1 to 100; a page past the last is empty with the same totals. " +
    "Deleted operators are listed only with `includeDeleted: true`. Pull sync: `updatedAt`, " +
    "`includeDeleted` and the `syncAfter` cursor order rows by (`updatedAt`, id) (see the API guide).",
  request: {
    body: {
      required: false,
      content: { "application/json": { schema: OperatorFiltersSchema, example: {} } },
    },
  },
  responses: {
    200: jsonResponse(
      pagedResponseSchema("operators", OperatorSchema, "OperatorPage"),
      "One page of operators.",
    ),
  },
});

const getRoute = publicRoute("operators.read", {
  method: "get",
  path: "/v1/operators/{operator_id}",
  operationId: "getOperator",
  tags: ["Operators"],
  summary: "Get an operator",
  description: "A deleted operator, or one of another company, is a 404.",
  request: { params: OperatorIdParam },
  responses: { 200: jsonResponse(OperatorSchema, "The operator."), ...NOT_FOUND_RESPONSE },
});

const patchRoute = publicRoute("operators.update", {
  method: "patch",
  path: "/v1/operators/{operator_id}",
  operationId: "updateOperator",
  tags: ["Operators"],
  summary: "Complete or correct an operator",
  description:
    "Send only the fields to change (`firstName`, `lastName`; null clears one); an unknown field is a 422. " +
    "`{}` changes nothing. Success is 204.",
  request: { params: OperatorIdParam, body: objectBody(OperatorPatchSchema) },
  responses: { 204: { description: "Updated." }, ...NOT_FOUND_RESPONSE },
});

const deleteRoute = publicRoute("operators.delete", {
  method: "delete",
  path: "/v1/operators/{operator_id}",
  operationId: "deleteOperator",
  tags: ["Operators"],
  summary: "Remove an operator from the roster",
  description:
    "The operator disappears from GET and searches. Production logs and shifts that pointed at them " +
    "keep their history but show `operator: null`. Success is 204.",
  request: { params: OperatorIdParam },
  responses: { 204: { description: "Removed." }, ...NOT_FOUND_RESPONSE },
});

export const operatorsRoutes = createRouter()
  .openapi(createRoute, async (c) => {
    const items = c.req.valid("json");
    const principal = c.get("principal");
    const rows = await insertOperators(
      scopeOf(c),
      items.map((item) => ({ firstName: item.firstName ?? null, lastName: item.lastName ?? null })),
    );
    return c.json(
      rows.map((r) => toOperatorOut(r, principal)),
      200,
    );
  })
  .openapi(filterRoute, async (c) => {
    const filters = c.req.valid("json");
    const principal = c.get("principal");
    const page = await filterOperators(scopeOf(c), filters, pageRequest(filters));
    return c.json(
      pageEnvelope("operators", page, (r) => toOperatorOut(r, principal)),
      200,
    );
  })
  .openapi(getRoute, async (c) => {
    const { operator_id } = c.req.valid("param");
    const principal = c.get("principal");
    const row = await findOperator(scopeOf(c), operator_id);
    if (!row) throw notFound("Operator not found");
    return c.json(toOperatorOut(row, principal), 200);
  })
  .openapi(patchRoute, async (c) => {
    const { operator_id } = c.req.valid("param");
    const patch = c.req.valid("json");
    if (!(await updateOperator(scopeOf(c), operator_id, patch))) {
      throw notFound("Operator not found");
    }
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { operator_id } = c.req.valid("param");
    if (!(await softDeleteOperator(scopeOf(c), operator_id))) {
      throw notFound("Operator not found");
    }
    return c.body(null, 204);
  });
