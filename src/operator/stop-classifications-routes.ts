/**
 * Operator routes for the classification of a machine stop (PUT and DELETE). The
 * catalog of causes, the batch that writes a classification with its webhook event, and
 * the reads are in ./stop-classifications-queries.ts: a classification change costs four
 * D1 round trips (the stop, its shift plan, the batch, and recording the messages sent).
 */

import { z } from "@hono/zod-openapi";
import { scopeIn } from "../db/company-scope";
import { stopClassified, stopUnclassified } from "../events/payloads";
import { publish } from "../events/publish";
import { notFound } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { IntId, objectBody } from "../http/schemas";
import { ClassificationSchema, toClassificationOut } from "../reports/schemas";
import { findStopWithClassification } from "../reports/stops-report";
import { dispatchDeliveries } from "../webhooks/events";
import { requireRowScope } from "./lookups";
import { operatorRoute } from "./schemas";
import {
  classificationChange,
  deleteClassification,
  putClassification,
} from "./stop-classifications-queries";

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
        "`MachineStopClassificationCreated` for a first classification, `...Updated` otherwise.",
      request: { params: StopParam, body: objectBody(ClassificationPut) },
      responses: { 200: jsonResponse(ClassificationSchema, "The classification.") },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const body = c.req.valid("json");
      const { db } = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      const now = Date.now();
      const found = await findStopWithClassification(db, stop_id);
      if (!found) throw notFound("Stop not found");
      const companyId = found.companyId;
      const change = await classificationChange(
        db,
        found,
        found.classification.id === null ? "Created" : "Updated",
        now,
      );
      const { eventId, deliveries, written } = await putClassification(
        scopeIn(db, companyId),
        stop_id,
        {
          description: body.description ?? null,
          component: body.component?.name ?? null,
          specificCause: body.specificCause?.name ?? null,
          generalCause: body.generalCause?.name ?? null,
        },
        change,
      );
      await dispatchDeliveries(c.env, scopeIn(db, companyId), eventId, deliveries);
      if (!written) throw notFound("Stop not found");
      const out = toClassificationOut(written);
      await publish(c.env, companyId, found.stop.machineId, stopClassified(stop_id, out));
      return c.json(out, 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/stops/{stop_id}/classification",
      tags: ["Stops"],
      summary: "Delete a stop's classification",
      description:
        "Emits `MachineStopClassificationDeleted` (webhook) and `stop.unclassified` (live " +
        "events). A stop without a classification is a 404.",
      request: { params: StopParam },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const { db } = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      const found = await findStopWithClassification(db, stop_id);
      if (!found) throw notFound("Stop not found");
      if (found.classification.id === null) throw notFound("The stop has no classification");
      const change = await classificationChange(db, found, "Deleted", Date.now());
      const { eventId, deliveries } = await deleteClassification(db, stop_id, change);
      await dispatchDeliveries(c.env, scopeIn(db, found.companyId), eventId, deliveries);
      await publish(c.env, found.companyId, found.stop.machineId, stopUnclassified(stop_id));
      return c.body(null, 204);
    },
  );
