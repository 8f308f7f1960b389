/**
 * Operator routes for the classification of a machine stop (PUT and DELETE).
 *
 * Causes (component, specific cause, general cause) are a per-company catalog
 * (`stop_causes`, uuid ids), looked up by exact name (after trimming) or
 * created on first use. Every classification write, and the webhook event it
 * emits (`classificationEventStatements`), goes in one `db.batch`, which also
 * returns the ids of the event's deliveries (sent to the Queue right after,
 * `dispatchDeliveries`) and, for a PUT, the classification as written: a
 * classification change costs four D1 round trips (the stop, its shift plan,
 * the batch, and recording the messages sent).
 */

import { z } from "@hono/zod-openapi";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import { type CompanyScope, companyScope, owned, ownedSql } from "../db/company-scope";
import { stopCauses, stopClassifications, stops } from "../db/schema";
import { stopClassified, stopUnclassified } from "../events/payloads";
import { publish } from "../events/publish";
import { notFound } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { IntId, objectBody } from "../http/schemas";
import {
  ClassificationSchema,
  type StopRow,
  toClassificationOut,
  toReportShift,
  toStopOut,
} from "../reports/schemas";
import { findStopWithClassification, type StopWithClassification } from "../reports/stops-report";
import { instancesContaining, loadShiftPlan } from "../shifts/queries";
import {
  type ClassificationChangeKind,
  classificationEventStatements,
  dispatchDeliveries,
} from "../webhooks/events";
import { operatorRoute } from "./schemas";

const CauseName = z
  .object({ name: z.string().trim().min(1).max(200) })
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

/** The shift instance containing a stop's start, in the report shape, or null. */
async function shiftOfStop(scope: CompanyScope, stop: StopRow, now: number) {
  const { db } = scope;
  const plan = await loadShiftPlan(scope);
  if (!plan) return null;
  const [instance] = await instancesContaining(db, plan, [
    { machineId: stop.machineId, at: stop.startTime },
  ]);
  return instance ? toReportShift(instance, now) : null;
}

/** The event context of a classification change of `found`. */
async function changeOf(
  db: Database,
  found: StopWithClassification & { companyId: number },
  kind: ClassificationChangeKind,
  now: number,
) {
  return {
    kind,
    companyId: found.companyId,
    stopId: found.stop.id,
    stop: toStopOut(found.stop, now),
    machine: found.machine,
    shift: await shiftOfStop(companyScope(db, found.companyId), found.stop, now),
    previous: found.classification.id === null ? null : toClassificationOut(found.classification),
  };
}

const componentCause = alias(stopCauses, "component");
const specificCause = alias(stopCauses, "specific_cause");
const generalCause = alias(stopCauses, "general_cause");

/**
 * The classification of a stop that is not deleted, with its causes, as a
 * `ClassificationRow` (for `toClassificationOut`); no row when the stop is
 * unknown, deleted or unclassified. Run last in the write's batch, it reads the
 * classification as that batch wrote it.
 */
function classificationQuery(db: Database, stopId: number, companyId: number) {
  return db
    .select({
      id: stopClassifications.id,
      createdAt: stopClassifications.createdAt,
      updatedAt: stopClassifications.updatedAt,
      description: stopClassifications.description,
      // Aliased: inside db.batch, D1 returns rows as objects keyed by column
      // name, so the three causes' `id` and `name` would overwrite each other.
      componentId: sql<string | null>`${componentCause.id}`.as("component_id"),
      componentName: sql<string | null>`${componentCause.name}`.as("component_name"),
      specificCauseId: sql<string | null>`${specificCause.id}`.as("specific_cause_id"),
      specificCauseName: sql<string | null>`${specificCause.name}`.as("specific_cause_name"),
      generalCauseId: sql<string | null>`${generalCause.id}`.as("general_cause_id"),
      generalCauseName: sql<string | null>`${generalCause.name}`.as("general_cause_name"),
    })
    .from(stopClassifications)
    .innerJoin(stops, and(eq(stops.id, stopClassifications.stopId), isNull(stops.deletedAt)))
    .leftJoin(componentCause, eq(componentCause.id, stopClassifications.componentId))
    .leftJoin(specificCause, eq(specificCause.id, stopClassifications.specificCauseId))
    .leftJoin(generalCause, eq(generalCause.id, stopClassifications.generalCauseId))
    .where(and(eq(stopClassifications.stopId, stopId), owned({ companyId }, stopClassifications)));
}

/**
 * The last two results of a `db.batch` whose statements begin with a variable
 * number of writes, typed as the batch typed them (reading them by index would
 * lose the types).
 */
function lastTwo<D, Q>(results: readonly [...unknown[], D, Q]): [D, Q] {
  return [results[results.length - 2], results[results.length - 1]] as [D, Q];
}

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
      const db = c.var.db;
      const now = Date.now();
      const found = await findStopWithClassification(db, stop_id);
      if (!found) throw notFound("Stop not found");
      const companyId = found.companyId;
      const change = await changeOf(
        db,
        found,
        found.classification.id === null ? "Created" : "Updated",
        now,
      );
      const names = {
        component: body.component?.name ?? null,
        specific_cause: body.specificCause?.name ?? null,
        general_cause: body.generalCause?.name ?? null,
      } as const;
      const causes: BatchItem<"sqlite">[] = [];
      for (const [kind, name] of Object.entries(names) as [keyof typeof names, string | null][]) {
        if (name === null) continue;
        causes.push(
          db
            .insert(stopCauses)
            .values({ id: crypto.randomUUID(), companyId, kind, name })
            .onConflictDoNothing(),
        );
      }
      const causeId = (kind: keyof typeof names) =>
        sql`(SELECT id FROM stop_causes WHERE ${ownedSql({ companyId })} AND kind = ${kind} AND name = ${names[kind]})`;
      const upsert = db
        .insert(stopClassifications)
        .values({
          companyId,
          stopId: stop_id,
          description: body.description ?? null,
          componentId: causeId("component"),
          specificCauseId: causeId("specific_cause"),
          generalCauseId: causeId("general_cause"),
        })
        .onConflictDoUpdate({
          target: stopClassifications.stopId,
          set: {
            description: sql`excluded.description`,
            componentId: sql`excluded.component_id`,
            specificCauseId: sql`excluded.specific_cause_id`,
            generalCauseId: sql`excluded.general_cause_id`,
            updatedAt: sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`,
          },
        });
      const event = classificationEventStatements(db, change);
      // The causes, then the classification that refers to them; `head` is typed
      // apart because db.batch wants a tuple with a first element.
      const [head = upsert, ...middle] = [...causes, upsert];
      const results = await db.batch([
        head,
        ...middle,
        event.event,
        event.deliveries,
        classificationQuery(db, stop_id, companyId),
      ] as const);
      const [deliveries, [written]] = lastTwo(results);
      await dispatchDeliveries(c.env, db, event.eventId, deliveries);
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
      const db = c.var.db;
      const found = await findStopWithClassification(db, stop_id);
      if (!found) throw notFound("Stop not found");
      if (found.classification.id === null) throw notFound("The stop has no classification");
      const change = await changeOf(db, found, "Deleted", Date.now());
      const event = classificationEventStatements(db, change);
      const [, , deliveries] = await db.batch([
        db.delete(stopClassifications).where(eq(stopClassifications.stopId, stop_id)),
        event.event,
        event.deliveries,
      ]);
      await dispatchDeliveries(c.env, db, event.eventId, deliveries);
      await publish(c.env, found.companyId, found.stop.machineId, stopUnclassified(stop_id));
      return c.body(null, 204);
    },
  );
