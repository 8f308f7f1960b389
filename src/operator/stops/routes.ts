/**
 * Operator routes for machine stops: create, edit (close, reopen) and delete (their queries in
 * ./queries.ts). Their classifications, the catalog of causes and the detection settings have
 * their routers beside it (docs/operator-api.md, "Stops and classifications").
 */

import { z } from "@hono/zod-openapi";
import { notFound, unprocessable } from "../../http/errors";
import { DateTimeMs } from "../../http/filters";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, IntId, objectBody } from "../../http/schemas";
import { tellRecordedStop } from "../../machine-state/notify";
import { StopSchema, toStopOut } from "../../reports/schemas";
import { stopEvent } from "../../streams/payloads";
import { publish } from "../../streams/publish";
import { requireMachine, requireRowScope } from "../lookups";
import { operatorRoute } from "../schemas";
import { createStops, deleteStop, findNotDeletedStop, updateStop } from "./queries";

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
    endTime: DateTimeMs.nullish().openapi({
      description: "Absent or null = open.",
      example: "2026-03-02T06:45:00Z",
    }),
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
    endTime: DateTimeMs.nullable()
      .optional()
      .openapi({ description: "null reopens the stop.", example: "2026-03-02T06:45:00Z" }),
    isProgrammed: z.boolean().optional(),
    ...StopFlags,
  })
  .strict();

const OperatorStopSchema = StopSchema.extend({ machineId: z.number().int() }).openapi(
  "OperatorStop",
);

const StopParam = z.object({ stop_id: IntId("stop_id") });

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
      const machine = await requireMachine(c.env, machine_id);
      const created = await createStops(machine.scope, machine.id, items);
      for (const row of created) {
        await publish(c.env, machine.companyId, row.machineId, stopEvent(row, "created"));
        await tellRecordedStop(c.env, machine.companyId, row.machineId, {
          id: row.id,
          start: row.startTime,
          end: row.endTime,
          kind: "recorded",
        });
      }
      const now = Date.now();
      return c.json(
        created.map((row) => ({ ...toStopOut(row, now), machineId: row.machineId })),
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
        "`endTime` must be after `startTime`. A deleted stop is a 404. A detected stop " +
        "(from the machine's signals) edited so becomes a recorded one: detection no longer " +
        "changes it.",
      request: { params: StopParam, body: objectBody(StopPatch) },
      responses: { 204: { description: "Updated." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const patch = c.req.valid("json");
      const { db } = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      const current = await findNotDeletedStop(db, stop_id);
      if (!current) throw notFound("Stop not found");
      // Times edit the stop's own (recorded) ones; the detected downtime it took in is taken
      // in again by its machine's detector when it still overlaps or touches them.
      const startTime = patch.startTime ?? current.recordedStartTime;
      const endTime = patch.endTime === undefined ? current.recordedEndTime : patch.endTime;
      if (endTime !== null && endTime <= startTime) {
        throw unprocessable(
          ["body", patch.endTime === undefined ? "startTime" : "endTime"],
          "endTime must be after startTime",
        );
      }
      const updated = await updateStop(db, stop_id, current, patch);
      if (!updated) throw notFound("Stop not found");
      const wasOpen = current.endTime === null;
      await publish(
        c.env,
        current.companyId,
        updated.machineId,
        stopEvent(updated, "updated", wasOpen),
      );
      // An edited stop is the plant's record, a detected one included (the detector lets go).
      await tellRecordedStop(c.env, current.companyId, updated.machineId, {
        id: updated.id,
        start: updated.startTime,
        end: updated.endTime,
        previous: { start: current.startTime, end: current.endTime },
        kind: "recorded",
      });
      return c.body(null, 204);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/stops/{stop_id}",
      tags: ["Stops"],
      summary: "Delete a stop (soft)",
      description:
        "`deletedAt` is set: the stop leaves both reports at once. A detected stop deleted " +
        "so stays deleted: its machine's signals make no stop of that time again.",
      request: { params: StopParam },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { stop_id } = c.req.valid("param");
      const { db } = await requireRowScope(c.env, "stops", stop_id, "Stop not found");
      const row = await deleteStop(db, stop_id);
      if (!row) throw notFound("Stop not found");
      await publish(c.env, row.companyId, row.machineId, stopEvent(row, "deleted"));
      // A detected stop a person deletes is dismissed: its time is no stop any more.
      await tellRecordedStop(c.env, row.companyId, row.machineId, {
        id: row.id,
        start: row.startTime,
        end: row.endTime,
        kind: row.detectionKey === null ? "deleted" : "dismissed",
      });
      return c.body(null, 204);
    },
  );
