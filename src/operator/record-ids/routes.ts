/**
 * `POST /operator/v1/companies/{company_id}/record-ids`: gives a company's SKUs, simple work
 * orders, nominal speeds and production logs ids the operator chooses (the demo's fixed ids, a
 * plant keeping the ids of its former system). A record anything refers to is refused, so no
 * reference is left on an old id; the checks and writes are in ./queries.ts
 * (docs/operator-api.md, "Fixed record ids").
 */

import { z } from "@hono/zod-openapi";
import { createRouter, ErrorSchema, jsonResponse } from "../../http/openapi";
import { arrayBody } from "../../http/schemas";
import { requireCompanyScope } from "../lookups";
import { companyRoute } from "../schemas";
import { changeRecordIds, RECORD_TYPES } from "./queries";

const Uuid = z.guid().transform((id) => id.toLowerCase());

const RecordIdChange = z
  .object({
    type: z.enum(RECORD_TYPES),
    id: Uuid.openapi({ description: "The record's current id." }),
    newId: Uuid.openapi({ description: "The id it takes; unused by any record of its type." }),
  })
  .strict()
  .openapi("OperatorRecordIdChange");

const RecordIdOut = z
  .object({ type: z.enum(RECORD_TYPES), id: z.string().openapi({ format: "uuid" }) })
  .openapi("OperatorRecordId");

export const operatorRecordIdsRoutes = createRouter().openapi(
  companyRoute({
    method: "post",
    path: "/companies/{company_id}/record-ids",
    tags: ["Record ids"],
    summary: "Give records fixed ids",
    description:
      "Changes the ids of SKUs, simple work orders, nominal speeds and production logs of the " +
      "company, all or none: for ids known in advance (the demo's, or those of a system the " +
      "plant leaves). Only before the record is used: a SKU that nominal speeds or logs refer " +
      "to, a work order on logs, or a live log is a 409, and so is a SKU or work order that " +
      "a running machine holds in realtime writes not yet written to D1 (they are flushed " +
      "first), or one that a realtime write written to D1 comes to refer to while the ids " +
      "change.",
    request: {
      body: arrayBody(RecordIdChange),
    },
    responses: {
      200: jsonResponse(z.array(RecordIdOut), "The records with their new ids, in order."),
      409: jsonResponse(ErrorSchema, "A record is already referred to."),
    },
  }),
  async (c) => {
    const { company_id } = c.req.valid("param");
    const changes = c.req.valid("json");
    const scope = await requireCompanyScope(c.env, company_id);
    await changeRecordIds(c.env, scope, changes);
    return c.json(
      changes.map((change) => ({ type: change.type, id: change.newId })),
      200,
    );
  },
);
