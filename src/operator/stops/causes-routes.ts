/**
 * Operator routes for a company's catalog of stop causes (general causes, specific causes,
 * components): the reasons its scanners pick from (`POST /v1/realtime/{machine_id}/stop-reason`,
 * which never adds one). The catalog's queries are in src/stops/causes.ts
 * (docs/operator-api.md, "Stops and classifications").
 */

import { z } from "@hono/zod-openapi";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody } from "../../http/schemas";
import {
  addCauses,
  CauseCatalogSchema,
  causeCatalog,
  MAX_CATALOG_CAUSES,
} from "../../stops/causes";
import { requireCompanyScope } from "../lookups";
import { companyRoute } from "../schemas";

const CauseKind = z.enum(["generalCause", "specificCause", "component"]).openapi({
  description: "Which list of the catalog: `generalCause`, `specificCause` or `component`.",
});

const StopCauseCreate = z
  .object({ kind: CauseKind, name: z.string().trim().min(1).max(200) })
  .strict();

const StopCauseOut = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    kind: CauseKind,
    name: z.string(),
  })
  .openapi("OperatorStopCause");

export const operatorStopCausesRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/stop-causes",
      tags: ["Stops"],
      summary: "Add causes to the company's catalog",
      description:
        "The reasons a stop can be given from the machine. A name the list has already (exact, " +
        "after trimming) is kept with its id, so the call can be repeated. Classifications " +
        "through `PUT /stops/{stop_id}/classification` add the names they use as well.",
      request: { body: arrayBody(StopCauseCreate) },
      responses: {
        201: jsonResponse(z.array(StopCauseOut), "Each item's cause, in order."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const scope = await requireCompanyScope(c.env, company_id);
      return c.json(await addCauses(scope, items), 201);
    },
  )
  .openapi(
    companyRoute({
      method: "get",
      path: "/companies/{company_id}/stop-causes",
      tags: ["Stops"],
      summary: "The company's catalog of causes",
      description: `Each list by name, at most ${MAX_CATALOG_CAUSES} each.`,
      responses: { 200: jsonResponse(CauseCatalogSchema, "The catalog.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      return c.json(await causeCatalog(await requireCompanyScope(c.env, company_id)), 200);
    },
  );
