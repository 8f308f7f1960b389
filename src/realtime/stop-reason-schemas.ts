/**
 * Request and response schemas of the scanner's stop reasons:
 * `POST /v1/realtime/{machine_id}/stop-reason` and `GET /v1/realtime/{machine_id}/stops`
 * (docs/realtime.md, "Stop reasons").
 */
import { z } from "@hono/zod-openapi";
import { dateTime } from "../http/instants";
import { ReportMachineSchema } from "../reports/schemas";
import { StopsReportRowSchema } from "../reports/stops-report";
import { CauseCatalogSchema } from "../stops/causes";
import { DAY_MS } from "../time/units";

/** How long after its end a stop can still be given a reason from the machine, ms. */
export const RECENT_STOP_MS = DAY_MS;

/** Most recent stops `GET /v1/realtime/{machine_id}/stops` lists (the newest). */
export const MAX_RECENT_STOPS = 100;

/** Longest description, as the operator's classification takes it. */
const MAX_DESCRIPTION = 2000;

/**
 * A cause of the catalog, by `id` or `name` (both: they must name the same cause). Its own
 * component name: `StopCauseRef` is the downtime report's answer (`{id, name}`, both
 * required), which the document would otherwise show here. "At least one" is stated as
 * `anyOf` and refused by validation, as a machine or SKU reference.
 */
const CauseRefSchema = z
  .object({
    id: z.guid().nullish().openapi({
      description: "The cause's id, as `GET /v1/realtime/{machine_id}/stops` lists it.",
    }),
    name: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(200)
      .nullish()
      .openapi({ description: "The cause's exact name (after trimming)." }),
  })
  .strict()
  .refine((ref) => ref.id != null || ref.name != null, {
    message: "Give the cause's id or name",
  })
  .openapi("StopCauseChoice", {
    anyOf: [
      { required: ["id"], properties: { id: { type: "string" } } },
      { required: ["name"], properties: { name: { type: "string" } } },
    ],
  });

export const StopReasonBodySchema = z
  .object({
    stopId: z
      .number()
      .int()
      .positive()
      .nullish()
      .openapi({
        description:
          "The stop to give the reason to: one of the machine's recent stops (begun, and open " +
          "or ended less than 24 hours ago). Default: the machine's current stop (the open stop " +
          "that started last).",
      }),
    generalCause: CauseRefSchema.openapi({
      description: "The general cause, from the company's catalog (required).",
    }),
    specificCause: CauseRefSchema.nullish().openapi({
      description: "The specific cause, from the company's catalog; null or absent = none.",
    }),
    component: CauseRefSchema.nullish().openapi({
      description: "The component, from the company's catalog; null or absent = none.",
    }),
    description: z
      .string()
      .max(MAX_DESCRIPTION)
      .nullish()
      .openapi({ description: "Free text, as given; null or absent = none." }),
  })
  .strict()
  .openapi("RealtimeStopReason");

export type StopReasonBody = z.infer<typeof StopReasonBodySchema>;

export const RealtimeStopsSchema = z
  .object({
    machine: ReportMachineSchema,
    recentSince: dateTime().openapi({
      description:
        "24 hours before now: stops that ended before this instant are not listed and cannot " +
        "be given a reason from the machine.",
    }),
    defaultStopId: z
      .number()
      .int()
      .nullable()
      .openapi({
        description:
          "The stop a `stop-reason` write without `stopId` goes to: the open stop that " +
          "started last, else the stop that ended last; null when there is none.",
      }),
    stops: z.array(StopsReportRowSchema).openapi({
      description:
        `The machine's recent stops (begun by now, and open or ended at or after \`recentSince\`), newest start ` +
        `first, at most ${MAX_RECENT_STOPS}, as rows of the stops report with their ` +
        "classification (all null while a stop waits for its reason).",
    }),
    causes: CauseCatalogSchema,
  })
  .openapi("RealtimeStops");

export type RealtimeStopsOut = z.infer<typeof RealtimeStopsSchema>;
