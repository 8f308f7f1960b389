/**
 * Operator routes for shift definitions (docs/metrics.md, "Shifts"); their queries are in
 * ./queries.ts and src/shifts/definitions.ts.
 */

import { z } from "@hono/zod-openapi";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, MAX_CREATE_ITEMS } from "../../http/schemas";
import { tellPlanChanged } from "../../machine-state/notify";
import { armMachines } from "../../realtime/arm";
import { createShiftDefinitions, listShiftDefinitions } from "../../shifts/definitions";
import { requireCompanyScope } from "../lookups";
import { companyRoute } from "../schemas";
import { machinesOfShifts } from "./queries";

const ALL_WEEKDAYS = [1, 2, 3, 4, 5, 6, 7];

const Clock = z
  .string()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: "Must be a local time HH:MM (00:00 to 23:59)" })
  .openapi({ example: "06:00" });

const ShiftCreate = z
  .object({
    name: z.string().trim().regex(/\S/, "Must not be blank").max(200),
    startTime: Clock.openapi({ description: "Local wall-clock start in the company's zone." }),
    endTime: Clock.openapi({
      description: "Local wall-clock end; `<= startTime` means the next day (equal = 24 hours).",
      example: "14:00",
    }),
    weekdays: z
      .array(z.number().int().min(1).max(7))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, { message: "Weekdays must not repeat" })
      .optional()
      .openapi({
        uniqueItems: true,
        description: "ISO weekdays of the start, 1 = Monday ... 7 = Sunday; default all.",
      }),
    isConsidered: z.boolean().optional().openapi({
      description: "Whether its instances appear in the metrics report; default true.",
    }),
    machineIds: z
      .array(z.number().int().positive())
      .min(1)
      .max(MAX_CREATE_ITEMS)
      .nullish()
      .openapi({
        description: "Machines it applies to; absent or null = every machine of the company.",
      }),
  })
  .strict();

const ShiftDefinitionOut = z
  .object({
    id: z.number().int(),
    name: z.string(),
    startTime: z.string(),
    endTime: z.string(),
    weekdays: z.array(z.number().int()),
    isConsidered: z.boolean(),
    machineIds: z
      .array(z.number().int())
      .nullable()
      .openapi({ description: "null = every machine." }),
  })
  .openapi("OperatorShiftDefinition");

export const operatorShiftsRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/shifts",
      tags: ["Shifts"],
      summary: "Create shift definitions",
      description:
        "All or none. A definition whose instances would overlap those of another definition " +
        "(existing, or earlier in the same array) on a machine both apply to is a 422 naming it; " +
        "a definition for all machines shares every machine. Unknown machine ids are a 422. " +
        "The machines' live streams publish `shift.started` and `shift.ended` at every " +
        "boundary of the new shifts from then on, whether or not anything is written to them.",
      request: { body: arrayBody(ShiftCreate) },
      responses: {
        201: jsonResponse(z.array(ShiftDefinitionOut), "The created definitions, in order."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const scope = await requireCompanyScope(c.env, company_id);
      const created = await createShiftDefinitions(
        scope,
        items.map((item) => ({
          name: item.name,
          startTime: item.startTime,
          endTime: item.endTime,
          weekdays: [...(item.weekdays ?? ALL_WEEKDAYS)].sort((a, b) => a - b),
          isConsidered: item.isConsidered ?? true,
          machineIds: item.machineIds ?? null,
        })),
      );
      // The machines' realtime objects wake at every boundary of the new shifts, so that
      // their streams publish shift.started / shift.ended even when nothing is written.
      const machineIds = await machinesOfShifts(
        scope,
        items.map((item) => item.machineIds),
      );
      await armMachines(c.env, company_id, machineIds);
      // Their stop detectors evaluate the last week again with the new planned time.
      await tellPlanChanged(c.env, company_id, machineIds);
      return c.json(created, 201);
    },
  )
  .openapi(
    companyRoute({
      method: "get",
      path: "/companies/{company_id}/shifts",
      tags: ["Shifts"],
      summary: "List shift definitions",
      responses: { 200: jsonResponse(z.array(ShiftDefinitionOut), "Definitions by id.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      return c.json(await listShiftDefinitions(await requireCompanyScope(c.env, company_id)), 200);
    },
  );
