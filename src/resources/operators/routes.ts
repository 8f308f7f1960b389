/**
 * Operators: `POST /v1/operators`, `POST /v1/operators/filters`, and `GET`, `PATCH`,
 * `DELETE /v1/operators/{operator_id}`, in the shared shape (../crud.ts). Their own: integer
 * ids, names that may stay empty until a PATCH completes them, the fuzzy search on both
 * names, and a removal that leaves history pointing at no one.
 */
import { EXAMPLE_OPERATOR_ID } from "../../http/examples";
import { createRouter } from "../../http/openapi";
import { MAX_CREATE_ITEMS } from "../../http/schemas";
import { crudRoutes, intPathId, shownWithCompany } from "../crud";
import { insertOperators, operatorTable } from "./queries";
import {
  OperatorCreateSchema,
  OperatorFiltersSchema,
  OperatorPatchSchema,
  OperatorSchema,
} from "./schemas";

export const operatorsRoutes = crudRoutes(createRouter(), {
  scope: "operators",
  path: "/v1/operators",
  tag: "Operators",
  name: { one: "Operator", many: "Operators", list: "operators" },
  noun: { one: "operator", many: "operators" },
  id: intPathId("operator_id", EXAMPLE_OPERATOR_ID),
  notFound: "Operator not found",
  schemas: {
    row: OperatorSchema,
    create: OperatorCreateSchema,
    patch: OperatorPatchSchema,
    filters: OperatorFiltersSchema,
  },
  table: operatorTable,
  out: shownWithCompany,
  create: {
    summary: "Create operators",
    description:
      `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} operators, all created or none: ` +
      "one invalid item gives a 422 whose `loc` starts with its index. `firstName` and `lastName` are " +
      "both optional and nullable (a PATCH completes the operator later). " +
      "Success is **200** with the created operators, with their integer ids, in the order given.",
    run: ({ scope }, items) =>
      insertOperators(
        scope,
        items.map((item) => ({
          firstName: item.firstName ?? null,
          lastName: item.lastName ?? null,
        })),
      ),
  },
  search: {
    summary: "Search operators",
    description:
      "`firstName.search` and `lastName.search` are fuzzy filters combined with AND: case- and " +
      "accent-insensitive containment (`jose` finds `José`), at most 50 UTF-8 bytes. `{}` (or no body) " +
      "is the first page of 10. Ordered by first name, then last name (case- and accent-insensitively, " +
      "missing names last), then id; `limit` is 1 to 100; a page past the last is empty with the same totals. " +
      "Deleted operators are listed only with `includeDeleted: true`. Pull sync: `updatedAt`, " +
      "`includeDeleted` and the `syncAfter` cursor order rows by (`updatedAt`, id) (see the API guide).",
  },
  get: { summary: "Get an operator" },
  update: {
    summary: "Complete or correct an operator",
    description:
      "Send only the fields to change (`firstName`, `lastName`; null clears one); an unknown field is a 422. " +
      "`{}` changes nothing. Success is 204.",
  },
  delete: {
    summary: "Remove an operator from the roster",
    description:
      "The operator disappears from GET and searches. Production logs and shifts that pointed at them " +
      "keep their history but show `operator: null`. Success is 204.",
    done: "Removed.",
  },
});
