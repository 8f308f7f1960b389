/**
 * Operator routes for machine stops and their classifications.
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
import { stopCauses, stopClassifications, stops } from "../db/schema";
import { stopClassified, stopEvent } from "../events/payloads";
import { publish } from "../events/publish";
import { notFound, unprocessable } from "../http/errors";
import { DateTimeMs } from "../http/filters";
import { createRouter, jsonResponse } from "../http/openapi";
import { arrayBody, IntId, objectBody } from "../http/schemas";
import {
  ClassificationSchema,
  type StopRow,
  StopSchema,
  toClassificationOut,
  toReportShift,
  toStopOut,
} from "../reports/schemas";
import {
  findStopWithClassification,
  type StopWithClassification,
  stopColumns,
} from "../reports/stops-report";
import { instancesContaining, loadShiftPlan } from "../shifts/queries";
import {
  type ClassificationChangeKind,
  classificationEventStatements,
  dispatchDeliveries,
} from "../webhooks/events";
import { requireMachine } from "./lookups";
import { operatorRoute } from "./schemas";

const StopFlags = {
  isIncludedInAvailability: z.boolean().optional().openapi({
    description: "false = an 'other' stop that does not reduce availability; default true.",
  }),
  isIncludedInStops: z
    .boolean()
    .optional()
    .openapi({ description: "false = left out of the stops report; default true." }),
  isManual: z.boolean().optional().openapi({ description: "Entered by hand; default false." }),
};

const StopCreate = z
  .object({
    startTime: DateTimeMs,
    endTime: DateTimeMs.nullish().openapi({ description: "Absent or null = open." }),
    isProgrammed: z.boolean(),
    ...StopFlags,
  })
  .strict()
  .refine((s) => s.endTime === undefined || s.endTime === null || s.endTime > s.startTime, {
    message: "endTime must be after startTime",
    path: ["endTime"],
  });

const StopPatch = z
  .object({
    startTime: DateTimeMs.optional(),
    endTime: DateTimeMs.nullable().optional().openapi({ description: "null reopens the stop." }),
    isProgrammed: z.boolean().optional(),
    ...StopFlags,
  })
  .strict();

const OperatorStopSchema = StopSchema.extend({ machineId: z.number().int() }).openapi(
  "OperatorStop",
);

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
async function shiftOfStop(db: Database, companyId: number, stop: StopRow, now: number) {
  const plan = await loadShiftPlan(db, companyId);
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
    shift: await shiftOfStop(db, found.companyId, found.stop, now),
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
    .where(
      and(eq(stopClassifications.stopId, stopId), eq(stopClassifications.companyId, companyId)),
    );
}

/**
 * The last two results of a `db.batch` whose statements begin with a variable
 * number of writes, typed as the batch typed them (reading them by index would
 * lose the types).
 */
function lastTwo<D, Q>(results: readonly [...unknown[], D, Q]): [D, Q] {
  return [results[results.length - 2], results[results.length - 1]] as [D, Q];
}

export const operatorStopsRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "post",
      path: "/machines/{machine_id}/stops",
      tags: ["Stops"],
      summary: "Create stops of a machine",
      description: "All or none. `endTime`, when given, must be after `startTime`.",
      request: {
        params: z.object({ machine_id: IntId("machine_id") }),
        body: arrayBody(StopCreate),
      },
      responses: { 201: jsonResponse(z.array(OperatorStopSchema), "The created stops, in order.") },
    }),
    async (c) => {
      const { machine_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const db = c.var.db;
      const machine = await requireMachine(db, machine_id);
      const [first, ...rest] = items.map((s) =>
        db
          .insert(stops)
          .values({
            companyId: machine.companyId,
            machineId: machine.id,
            startTime: s.startTime,
            endTime: s.endTime ?? null,
            isProgrammed: s.isProgrammed,
            isIncludedInAvailability: s.isIncludedInAvailability ?? true,
            isIncludedInStops: s.isIncludedInStops ?? true,
            isManual: s.isManual ?? false,
          })
          .returning(stopColumns),
      );
      if (!first) return c.json([], 201);
      const results = await db.batch([first, ...rest]);
      for (const row of results.flat()) {
        await publish(c.env, machine.companyId, row.machineId, stopEvent(row, "created"));
      }
      const now = Date.now();
      return c.json(
        results.flat().map((row) => ({ ...toStopOut(row, now), machineId: row.machineId })),
        201,
      );
    },
  )
  .openapi(
    operatorRoute({
      method: "patch",
      path: "/stops/{stop_id}",
      tags: ["Stops"],
      summary: "Edit a stop (for example close it)",
      description:
        "Send only the fields to change; `endTime: null` reopens the stop. The resulting " +
        "`endTime` must be after `startTime`. A deleted stop is a 404.",
      request: { params: StopParam, body: objectBody(StopPatch) },
      responses: { 204: { description: "Updated." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const patch = c.req.valid("json");
      const db = c.var.db;
      const current = await db
        .select({ startTime: stops.startTime, endTime: stops.endTime, companyId: stops.companyId })
        .from(stops)
        .where(and(eq(stops.id, stop_id), isNull(stops.deletedAt)))
        .get();
      if (!current) throw notFound("Stop not found");
      const startTime = patch.startTime ?? current.startTime;
      const endTime = patch.endTime === undefined ? current.endTime : patch.endTime;
      if (endTime !== null && endTime <= startTime) {
        throw unprocessable(
          ["body", patch.endTime === undefined ? "startTime" : "endTime"],
          "endTime must be after startTime",
        );
      }
      const changes = Object.fromEntries(
        Object.entries(patch).filter(([, value]) => value !== undefined),
      );
      // Guarded on the times read above, so that a concurrent edit cannot slip an end before the start.
      const updated = await db
        .update(stops)
        .set({ ...changes, updatedAt: sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)` })
        .where(
          and(
            eq(stops.id, stop_id),
            isNull(stops.deletedAt),
            eq(stops.startTime, current.startTime),
            current.endTime === null ? isNull(stops.endTime) : eq(stops.endTime, current.endTime),
          ),
        )
        .returning(stopColumns)
        .get();
      if (!updated) throw notFound("Stop not found");
      const wasOpen = current.endTime === null;
      await publish(
        c.env,
        current.companyId,
        updated.machineId,
        stopEvent(updated, "updated", wasOpen),
      );
      return c.body(null, 204);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/stops/{stop_id}",
      tags: ["Stops"],
      summary: "Delete a stop (soft)",
      description: "`deletedAt` is set: the stop leaves both reports at once.",
      request: { params: StopParam },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const row = await c.var.db
        .update(stops)
        // updatedAt too: pull sync finds a deletion by its updatedAt.
        .set({ deletedAt: Date.now(), updatedAt: Date.now() })
        .where(and(eq(stops.id, stop_id), isNull(stops.deletedAt)))
        .returning({ ...stopColumns, companyId: stops.companyId })
        .get();
      if (!row) throw notFound("Stop not found");
      await publish(c.env, row.companyId, row.machineId, stopEvent(row, "deleted"));
      return c.body(null, 204);
    },
  )
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
        sql`(SELECT id FROM stop_causes WHERE company_id = ${companyId} AND kind = ${kind} AND name = ${names[kind]})`;
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
        "Emits `MachineStopClassificationDeleted`. A stop without a classification is a 404.",
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
      return c.body(null, 204);
    },
  );
