/**
 * The request and row schemas of the KPI report (`POST /v1/reports/kpis`): the
 * shift instances of the metrics report grouped by an ordered `groupBy`, each
 * group's figures computed from its summed times and counts (docs/metrics.md,
 * "KPIs by any dimension"). The report itself is `./kpi-report.ts`.
 */
import { z } from "@hono/zod-openapi";
import { figure, MetricsReportFiltersSchema, OeeFigureAndFlagFields } from "./metrics-schemas";
import { ReportMachineSchema } from "./schemas";

export const KPI_KEYS = [
  "machine",
  "shift",
  "day",
  "week",
  "month",
  "sku",
  "operator",
  "simpleWorkOrder",
] as const;

export type KpiKey = (typeof KPI_KEYS)[number];

export const KpiReportFiltersSchema = MetricsReportFiltersSchema.extend({
  groupBy: z
    .array(z.enum(KPI_KEYS))
    .min(1)
    .max(KPI_KEYS.length)
    .refine((keys) => new Set(keys).size === keys.length, "Each key may appear once")
    .nullish()
    .openapi({
      uniqueItems: true,
      description:
        'Ordered grouping keys; default `["machine"]`. `shift` is the shift definition name; ' +
        "`day`, `week` (ISO) and `month` are the local date of the instance's start in the " +
        "company's zone; `sku`, `operator` and `simpleWorkOrder` follow the production log " +
        "covering each instant (null where none does).",
      example: ["month", "sku"],
    }),
})
  .strict()
  .openapi("KpiReportFilters");

export type KpiReportFilters = z.infer<typeof KpiReportFiltersSchema>;

const minutes = (description: string) =>
  z.number().openapi({ description: `${description} (minutes)` });

const RefSchema = (name: string, id: z.ZodType) => z.object({ id, name: z.string() }).openapi(name);
const SkuRef = RefSchema("KpiSkuRef", z.string().openapi({ format: "uuid" }));
const OperatorRef = RefSchema("KpiOperatorRef", z.number().int());
const WorkOrderRef = RefSchema("KpiWorkOrderRef", z.string().openapi({ format: "uuid" }));
const label = (description: string, example: string) =>
  z.string().optional().openapi({ description, example });

const KpiMinutesSchema = z
  .object({
    calendarTime: minutes("24 h (23 or 25 on a DST day) per machine and local day of the group"),
    availableTime: minutes("Sum of the metrics rows' availableTime (planned operation time)"),
    plannedTime: minutes("availableTime - programmedDowntime (planned busy time)"),
    runTime: minutes("availableTime - programmedDowntime - unavailableTime"),
    idealTime: minutes("Ideal minutes: count / nominal speed over the counted logs"),
    programmedDowntime: minutes("As in shiftIndicators, summed"),
    nonProgrammedDowntime: minutes("As in shiftIndicators, summed"),
    otherStopsTime: minutes("As in shiftIndicators, summed"),
    lateStartTime: minutes("As in shiftIndicators, summed"),
    earlyStopTime: minutes("As in shiftIndicators, summed"),
    noDataTime: minutes("As in shiftIndicators, summed"),
    unavailableTime: minutes("As in shiftIndicators, summed"),
    annotatedDowntime: minutes("As in shiftIndicators, summed"),
  })
  .openapi("KpiMinutes");

const KpiCountsSchema = z
  .object({
    total: z.number().openapi({ description: "Total count T, summed" }),
    good: z.number().openapi({ description: "Good count G, summed" }),
    defects: z.number().openapi({ description: "Defects B, summed" }),
    unplannedStops: z.number().int().openapi({
      description: "Non-programmed stops counted in availability that start in the group's time",
    }),
  })
  .openapi("KpiCounts");

export const KpiReportRowSchema = z
  .object({
    machine: ReportMachineSchema.optional(),
    shift: label("Shift definition name.", "Morning"),
    day: label("Local date `YYYY-MM-DD` of the instances' start.", "2026-03-02"),
    week: label("ISO week `YYYY-Www` of the instances' start.", "2026-W10"),
    month: label("Month `YYYY-MM` of the instances' start.", "2026-03"),
    sku: SkuRef.or(z.null()).optional(),
    operator: OperatorRef.or(z.null()).optional(),
    simpleWorkOrder: WorkOrderRef.or(z.null()).optional(),
    instances: z
      .number()
      .int()
      .openapi({ description: "Shift instances contributing to the group." }),
    minutes: KpiMinutesSchema,
    counts: KpiCountsSchema,
    ...OeeFigureAndFlagFields,
    teep: figure("oee x availableTime / calendarTime"),
    mtbf: minutes("runTime / unplannedStops; null without unplanned stops").nullable(),
    mttr: minutes(
      "nonProgrammedDowntime / unplannedStops; null without unplanned stops",
    ).nullable(),
    scrapRatio: figure("defects / total"),
  })
  .openapi("KpiReportRow", {
    description:
      "One group: only the keys named in `groupBy` are present. Every ratio is computed from " +
      "the group's summed minutes and counts, never as an average of per-shift ratios.",
  });

export type KpiReportRow = z.infer<typeof KpiReportRowSchema>;
