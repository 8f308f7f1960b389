/**
 * Operator routes for the classification of a machine stop (PUT and DELETE), over the one
 * classification path every door shares (src/stops/classify.ts: the rows, the webhook event and
 * the stream event of a change; docs/operator-api.md, "Stops and classifications").
 */

import { z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { IntId, objectBody } from "../../http/schemas";
import { ClassificationSchema } from "../../reports/schemas";
import { classifyStop, readStopFirst, unclassifyStop } from "../../stops/classify";
import { requireRowScope } from "../lookups";
import { operatorRoute } from "../schemas";

const CauseName = z
  .object({ name: z.string().trim().regex(/\S/, "Must not be blank").max(200) })
  .strict()
  .nullish();

const ClassificationPut = z
  .object({
    description: z.string().max(2000).nullish(),
    component: CauseName,
    specificCause: CauseName,
    generalCause: CauseName,
  })
  .strict();

const StopParam = z.object({ stop_id: IntId("stop_id") });

export const operatorStopClassificationsRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "put",
      path: "/stops/{stop_id}/classification",
      tags: ["Stops"],
      summary: "Classify a stop (create or replace its classification)",
      description:
        "Replaces the whole classification: an omitted or null field becomes null. Cause names " +
        "are looked up in the company's catalog (exact, after trimming) or created. Emits " +
        "`MachineStopClassificationCreated` for a first classification, `...Updated` for a " +
        "changed one, and nothing when the stop already has exactly this classification.",
      request: { params: StopParam, body: objectBody(ClassificationPut) },
      responses: { 200: jsonResponse(ClassificationSchema, "The classification.") },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const body = c.req.valid("json");
      const scope = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      // The stop, its classification and its shift in one first batch; the webhook
      // deliveries handed over after the answer (docs/realtime.md, "Stop reasons").
      const first = await readStopFirst(scope, stop_id);
      const classified = await classifyStop(
        c.env,
        scope.db,
        stop_id,
        scope.companyId,
        {
          description: body.description ?? null,
          component: body.component?.name ?? null,
          specificCause: body.specificCause?.name ?? null,
          generalCause: body.generalCause?.name ?? null,
        },
        { first, afterAnswer: (work) => c.executionCtx.waitUntil(work) },
      );
      if (!classified) throw notFound("Stop not found");
      return c.json(classified.classification, 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/stops/{stop_id}/classification",
      tags: ["Stops"],
      summary: "Delete a stop's classification",
      description:
        "Emits `MachineStopClassificationDeleted` (webhook) and `stop.unclassified` (stream " +
        "event). A stop without a classification is a 404.",
      request: { params: StopParam },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const { db, companyId } = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      const outcome = await unclassifyStop(c.env, db, stop_id, companyId);
      if (outcome === "not_found") throw notFound("Stop not found");
      if (outcome === "unclassified") throw notFound("The stop has no classification");
      return c.body(null, 204);
    },
  );
