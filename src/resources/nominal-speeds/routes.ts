/**
 * Nominal speeds: `POST /v1/nominal-speeds`, `POST /v1/nominal-speeds/filters`, and `GET`,
 * `PATCH`, `DELETE /v1/nominal-speeds/{nominal_speed_id}`, in the shared shape (../crud.ts).
 * Their own: the machine and SKU, by reference on the way in and expanded on the way out,
 * and the rule "at most one per machine/SKU pair" that governs the create and the PATCH
 * (./rules.ts, its 409).
 */
import { createRouter, ErrorSchema, jsonResponse } from "../../http/openapi";
import { MAX_CREATE_ITEMS } from "../../http/schemas";
import { crudRoutes, shown, uuidPathId } from "../crud";
import { nominalSpeedTable } from "./queries";
import { createNominalSpeeds, patchNominalSpeed } from "./rules";
import {
  NominalSpeedCreateSchema,
  NominalSpeedFiltersSchema,
  NominalSpeedPatchSchema,
  NominalSpeedSchema,
} from "./schemas";

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

export const nominalSpeedsRoutes = crudRoutes(createRouter(), {
  scope: "nominal_speeds",
  path: "/v1/nominal-speeds",
  tag: "Nominal speeds",
  name: { one: "NominalSpeed", many: "NominalSpeeds", list: "nominalSpeeds" },
  noun: { one: "nominal speed", many: "nominal speeds" },
  id: uuidPathId("nominal_speed_id"),
  notFound: "Nominal speed not found",
  schemas: {
    row: NominalSpeedSchema,
    create: NominalSpeedCreateSchema,
    patch: NominalSpeedPatchSchema,
    filters: NominalSpeedFiltersSchema,
  },
  table: nominalSpeedTable,
  out: shown,
  create: {
    summary: "Create nominal speeds",
    description:
      `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} items, all created or none. ` +
      "`machine` and `sku` each take `id` or `name` (a SKU name matches its `name` or its `sku` code); " +
      "a reference that is missing, not found in the company, or ambiguous (a name matching several) is a 422 " +
      'at `["body", i, "machine"]` or `["body", i, "sku"]`. `nominalSpeed` (SKU units per minute) and ' +
      "`countingFactor` (default 1) must be > 0. There is at most one active nominal speed (not deleted) per machine/SKU pair: " +
      "a pair that already has one is a 409 naming its id; the same pair twice in the array is a 422. " +
      "Success is **200** with the created nominal speeds, machine and SKU expanded.",
    responses: CONFLICT_RESPONSE,
    run: ({ scope }, items) => createNominalSpeeds(scope, items),
  },
  search: {
    summary: "Search nominal speeds",
    description:
      "`machines` and `skus` take `{include, exclude}` id lists; `nominalSpeed` takes `greaterThan`, " +
      "`greaterThanOrEqual`, `lessThan`, `lessThanOrEqual`, `equal`, `notEqual`. Filters combine with AND; " +
      "`{}` (or no body) is the first page of 10. Ordered by machine name, machine id, SKU code, then id; " +
      "`limit` is 1 to 100; a page past the last is empty with the same totals. Deleted nominal speeds are " +
      "never listed.",
  },
  get: { summary: "Get a nominal speed" },
  update: {
    summary: "Update a nominal speed",
    description:
      "Send only the fields to change: `nominalSpeed`, `countingFactor` (> 0), `machine`, `sku` (by `id` or " +
      "`name`, as on creation). Every field is optional and nullable: `null` leaves it unchanged, as " +
      "an absent field does (none of them can be null). An unknown field is a 422; `{}` changes nothing. Moving to a " +
      "machine/SKU pair that has another active nominal speed is a 409 naming it. Success is 204.",
    responses: CONFLICT_RESPONSE,
    run: ({ scope }, id, patch) => patchNominalSpeed(scope, id, patch),
  },
  delete: {
    summary: "Delete a nominal speed",
    description:
      "Soft delete (`deletedAt` set): gone from GET and searches, and its machine/SKU pair is free for a " +
      "new nominal speed. Success is 204.",
  },
});
