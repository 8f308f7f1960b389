/**
 * Operator routes of the plant calendar: a company's closures (non-working dates, for the
 * company or one machine), created, listed and deleted; their queries are in
 * src/shifts/closures.ts. A change tells the machines' realtime objects and stop detectors,
 * as new shift definitions do. docs/operator-api.md ("The plant calendar").
 */

import { z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { DateTimeMs } from "../../http/filters";
import { dateTime } from "../../http/instants";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, IntId, MAX_ID, textInteger, UuidId } from "../../http/schemas";
import { tellPlanChanged } from "../../machine-state/notify";
import { armMachines } from "../../realtime/arm";
import {
  CLOSURE_MAX_DATE,
  CLOSURE_MIN_DATE,
  createClosures,
  deleteClosure,
  listClosures,
  MAX_CLOSURES,
} from "../../shifts/closures";
import { companyQuery } from "../../shifts/plan";
import { DAY_MS } from "../../time/units";
import { requireCompanyScope } from "../lookups";
import { companyRoute, operatorRoute } from "../schemas";
import { machinesOfShifts } from "../shifts/queries";

/** Longest closure, in days (a year and a day: a shutdown, a season). */
const MAX_CLOSURE_DAYS = 366;

/** Whether `YYYY-MM-DD` is a date of the calendar (no 2026-02-30). */
function isCalendarDate(text: string): boolean {
  const [y, m, d] = text.split("-").map(Number) as [number, number, number];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

const LocalDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "Must be a local date YYYY-MM-DD" })
  .refine(isCalendarDate, { message: "Must be a date of the calendar" })
  .refine((d) => d >= CLOSURE_MIN_DATE && d <= CLOSURE_MAX_DATE, {
    message: `Must be from ${CLOSURE_MIN_DATE} to ${CLOSURE_MAX_DATE}`,
  });

const daysOf = (startDate: string, endDate: string) =>
  Math.round((Date.parse(endDate) - Date.parse(startDate)) / DAY_MS) + 1;

const ClosureCreate = z
  .object({
    name: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(200)
      .openapi({ description: "What the plant calls it.", example: "Christmas shutdown" }),
    startDate: LocalDate.optional().openapi({
      description: `First closed local date, in the company's zone (${CLOSURE_MIN_DATE} to ${CLOSURE_MAX_DATE}). Give the dates, or \`start\` and \`end\`.`,
      example: "2026-12-24",
    }),
    endDate: LocalDate.optional().openapi({
      description: `Last closed local date, inclusive; default \`startDate\` (one day). At most ${MAX_CLOSURE_DAYS} days from \`startDate\`, counted inclusively.`,
      example: "2026-12-26",
    }),
    start: DateTimeMs.optional().openapi({
      description:
        "Instead of dates: the closure's first instant (a shift instance that starts at or after it, before `end`, is closed).",
    }),
    end: DateTimeMs.optional().openapi({
      description: `With \`start\`: the instant the closure ends (exclusive), after \`start\` and at most ${MAX_CLOSURE_DAYS} days later.`,
    }),
    machineId: z.number().int().positive().max(MAX_ID).nullish().openapi({
      description: "The one machine closed; absent or null = every machine of the company.",
    }),
  })
  .strict()
  .superRefine((item, ctx) => {
    const issue = (path: string, message: string) =>
      ctx.addIssue({ code: "custom", path: [path], message });
    if (item.startDate !== undefined) {
      if (item.start !== undefined) issue("start", "Give startDate and endDate, or start and end");
      if (item.end !== undefined) issue("end", "Give startDate and endDate, or start and end");
      const endDate = item.endDate ?? item.startDate;
      if (endDate < item.startDate) issue("endDate", "Must not be before startDate");
      else if (daysOf(item.startDate, endDate) > MAX_CLOSURE_DAYS) {
        issue("endDate", `A closure lasts at most ${MAX_CLOSURE_DAYS} days`);
      }
      return;
    }
    if (item.endDate !== undefined) issue("startDate", "Required with endDate");
    if (item.start === undefined) {
      issue("startDate", "Give startDate (and endDate), or start and end");
    } else if (item.end === undefined) {
      issue("end", "Required with start");
    } else if (item.end <= item.start) {
      issue("end", "Must be after start");
    } else if (item.end - item.start > MAX_CLOSURE_DAYS * DAY_MS) {
      issue("end", `A closure lasts at most ${MAX_CLOSURE_DAYS} days`);
    }
  })
  .openapi({
    description: "A closure: `startDate` (and `endDate`), or `start` and `end`, not both.",
    example: { name: "Christmas shutdown", startDate: "2026-12-24", endDate: "2026-12-26" },
  });

const ClosureOut = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    startDate: z
      .string()
      .nullable()
      .openapi({ description: "First closed local date; null for a closure given as instants." }),
    endDate: z.string().nullable().openapi({
      description: "Last closed local date (inclusive); null for a closure given as instants.",
    }),
    machineId: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "The one machine closed; null = every machine." }),
    start: dateTime(
      "The closure's first instant: as given, or `startDate`'s midnight in the company's zone.",
    ),
    end: dateTime(
      "The instant after it: as given, or the midnight that ends `endDate`, in the company's zone.",
    ),
  })
  .openapi("OperatorClosure");

const ClosureParams = z.object({
  company_id: IntId("company_id"),
  closure_id: UuidId("closure_id"),
});

const ListQuery = z.object({
  machine_id: textInteger(1, MAX_ID)
    .optional()
    .openapi({
      param: { name: "machine_id", in: "query" },
      description: "Only the closures that apply to this machine (its own and the company's).",
    }),
});

/** The machines a closure change concerns: one, or every machine of the company. */
async function machinesOf(
  scope: Awaited<ReturnType<typeof requireCompanyScope>>,
  machineIds: readonly (number | null)[],
): Promise<number[]> {
  return machinesOfShifts(
    scope,
    machineIds.map((id) => (id === null ? null : [id])),
  );
}

export const operatorClosuresRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/closures",
      tags: ["Plant calendar"],
      summary: "Create closures (non-working dates or spans)",
      description:
        "All or none. A closure is local dates (`startDate`, `endDate`, in the company's zone) " +
        "or two instants (`start`, `end`). A shift instance that starts in it is not scheduled: no planned production time in the reports, no running shift, " +
        "no detected stop; its day counts only in the KPI report's calendar time. " +
        "Idempotent: an item equal (name, span, machine) to a closure the company has, or to " +
        "an earlier item, answers that closure with its id and adds nothing. A machine that " +
        `is not the company's is a 422 at \`["body", i, "machineId"]\`; a company has at most ` +
        `${MAX_CLOSURES} closures (422 \`too_many_closures\`). The machines' detectors ` +
        "evaluate their history again, so detected stops inside the closure go.",
      request: { body: arrayBody(ClosureCreate) },
      responses: {
        201: jsonResponse(z.array(ClosureOut), "The closures, in request order."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const scope = await requireCompanyScope(c.env, company_id);
      const [company] = await companyQuery(scope);
      if (!company) throw notFound("Company not found");
      const { closures, created } = await createClosures(
        scope,
        company.timezone,
        items.map((item) => ({
          name: item.name,
          startDate: item.startDate ?? null,
          endDate: item.startDate === undefined ? null : (item.endDate ?? item.startDate),
          start: item.start ?? null,
          end: item.end ?? null,
          machineId: item.machineId ?? null,
        })),
      );
      if (created > 0) {
        // As for new shifts: the realtime objects take their instance again, the detectors
        // read the plan again and evaluate the history (detected stops in the closure go).
        // A create that added nothing (all repeated) changes no plan.
        const machineIds = await machinesOf(
          scope,
          items.map((item) => item.machineId ?? null),
        );
        await armMachines(c.env, company_id, machineIds);
        await tellPlanChanged(c.env, company_id, machineIds);
      }
      return c.json(closures, 201);
    },
  )
  .openapi(
    companyRoute({
      method: "get",
      path: "/companies/{company_id}/closures",
      tags: ["Plant calendar"],
      summary: "List closures",
      request: { query: ListQuery },
      responses: {
        200: jsonResponse(z.array(ClosureOut), "Closures not deleted, by start."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const { machine_id } = c.req.valid("query");
      const scope = await requireCompanyScope(c.env, company_id);
      return c.json(await listClosures(scope, machine_id), 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/companies/{company_id}/closures/{closure_id}",
      tags: ["Plant calendar"],
      summary: "Delete a closure",
      description:
        "Its dates are scheduled again as the shifts say; the machines' detectors evaluate " +
        "their history again. Idempotent: deleting a deleted closure answers 204 again; an " +
        "id the company never had is a 404.",
      request: { params: ClosureParams },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { company_id, closure_id } = c.req.valid("param");
      const scope = await requireCompanyScope(c.env, company_id);
      const { machineId, deleted } = await deleteClosure(scope, closure_id.toLowerCase());
      if (deleted) {
        const machineIds = await machinesOf(scope, [machineId]);
        await armMachines(c.env, company_id, machineIds);
        await tellPlanChanged(c.env, company_id, machineIds);
      }
      return c.body(null, 204);
    },
  );
