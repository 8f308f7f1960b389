/**
 * The request and row schemas of the downtime report (`POST /v1/reports/downtime`):
 * the stops of the stops report, grouped by an ordered `groupBy` and ranked by
 * minutes (a Pareto). The report itself is `./downtime-report.ts`.
 */
import { z } from "@hono/zod-openapi";
import { DateComparisonFilter, MachinesFilter } from "../http/filters";
import { PageFields } from "../http/pagination";
import { ReportMachineSchema, StopOriginFilter } from "./schemas";

export const DOWNTIME_KEYS = [
  "generalCause",
  "specificCause",
  "component",
  "machine",
  "shift",
  "day",
] as const;

export type DowntimeKey = (typeof DOWNTIME_KEYS)[number];

export const DowntimeReportFiltersSchema = z
  .object({
    ...PageFields,
    machines: MachinesFilter.openapi({
      description: "`search` (fuzzy, on the machine name), `include`, `exclude` (machine ids).",
    }),
    startDate: DateComparisonFilter.openapi({ description: "On the stop's `startTime`." }),
    endDate: DateComparisonFilter.openapi({
      description: "On the stop's `endTime`; an open stop matches no operator.",
    }),
    isProgrammed: z
      .boolean()
      .nullish()
      .openapi({ description: "Only programmed (`true`) or non-programmed (`false`) stops." }),
    origin: StopOriginFilter,
    groupBy: z
      .array(z.enum(DOWNTIME_KEYS))
      .min(1)
      .max(DOWNTIME_KEYS.length)
      .refine((keys) => new Set(keys).size === keys.length, "Each key may appear once")
      .nullish()
      .openapi({
        uniqueItems: true,
        description:
          'Ordered grouping keys; default `["generalCause"]`. `shift` is the shift definition ' +
          "name of the instance containing the stop's start; `day` its local date in the company's zone.",
        example: ["generalCause", "machine"],
      }),
  })
  .strict()
  .openapi("DowntimeReportFilters");

export type DowntimeReportFilters = z.infer<typeof DowntimeReportFiltersSchema>;

const CauseRefSchema = z
  .object({ id: z.string().openapi({ format: "uuid" }), name: z.string() })
  .openapi("StopCauseRef");

// `.or(z.null())`: `.nullable()` of a registered schema would make the component nullable.
const nullableCause = (what: string) =>
  CauseRefSchema.or(z.null())
    .optional()
    .openapi({ description: `${what}; null when unset.` });

export const DowntimeReportRowSchema = z
  .object({
    generalCause: nullableCause("The classification's general cause"),
    specificCause: nullableCause("The classification's specific cause"),
    component: nullableCause("The classification's component"),
    machine: ReportMachineSchema.optional(),
    shift: z.string().nullable().optional().openapi({
      description: "Name of the shift containing the stop's start; null when none.",
    }),
    day: z.string().optional().openapi({
      description: "Local date of the stop's start, `YYYY-MM-DD`.",
      example: "2026-03-02",
    }),
    stops: z.number().int().openapi({ description: "Number of stops in the group." }),
    minutes: z.number().openapi({ description: "Sum of the stops' `durationInMinutes`." }),
    share: z
      .number()
      .openapi({ description: "`minutes` / the minutes of every group (0 when 0)." }),
    cumulativeShare: z.number().openapi({
      description: "`share` of this row and every row ranked before it.",
    }),
  })
  .openapi("DowntimeReportRow", {
    description: "One group: only the keys named in `groupBy` are present.",
  });

export type DowntimeReportRow = z.infer<typeof DowntimeReportRowSchema>;
