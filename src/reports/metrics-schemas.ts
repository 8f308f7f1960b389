/**
 * The request and row schemas of the metrics report (`POST /v1/reports/metrics`):
 * what a client may send and what each row holds. The figures are defined in
 * docs/metrics.md and computed by `./oee.ts`; the report itself is
 * `./metrics-report.ts`.
 */
import { z } from "@hono/zod-openapi";
import { DateComparisonFilter, MachinesFilter } from "../http/filters";
import { PageFields } from "../http/pagination";
import { integerIdListFields } from "../http/search";
import { CompanyRefSchema } from "../resources/references";
import { ABOVE_NOMINAL_SPEED, OEE_FIGURES, type OeeFigure } from "./oee";
import { ReportMachineSchema, ReportShiftSchema } from "./schemas";

const minutes = (description: string) =>
  z.number().openapi({ description: `${description} (minutes)` });

/**
 * A ratio of the report, the KPI report or the live stream: a fraction, null when its
 * denominator is 0 (docs/metrics.md, "A figure without a denominator").
 */
export const figure = (description: string) =>
  z
    .number()
    .nullable()
    .openapi({ description: `${description} (a fraction; null when its denominator is 0)` });

/**
 * The OEE figures with their definitions, the one list (`OEE_FIGURES`, ./oee.ts), for
 * every schema that shows them: report rows, KPI groups, the live `oee` event.
 */
const OeeFigureFields = {
  availability: figure(OEE_FIGURES.availability),
  netAvailability: figure(OEE_FIGURES.netAvailability),
  effectiveness: figure(OEE_FIGURES.effectiveness),
  quality: figure(OEE_FIGURES.quality),
  oee: figure(OEE_FIGURES.oee),
  netOee: figure(OEE_FIGURES.netOee),
} as const satisfies Record<OeeFigure, unknown>;

/**
 * The OEE figures and the speed flag beside them (`aboveNominalSpeed`, ./oee.ts), as every
 * schema that shows the figures carries them.
 */
export const OeeFigureAndFlagFields = {
  ...OeeFigureFields,
  aboveNominalSpeed: z.boolean().openapi({ description: ABOVE_NOMINAL_SPEED }),
} as const;

const ShiftIndicatorsSchema = z
  .object({
    indicatorId: z
      .number()
      .int()
      .openapi({ description: "Stable id of this row (the shift instance id)." }),
    availableTime: minutes(
      "Length of the shift instance; while it runs (`isActive`), its elapsed part: every figure of an active row is the shift so far",
    ),
    programmedDowntime: minutes("Time in programmed stops"),
    nonProgrammedDowntime: minutes("Time in non-programmed stops counted in availability"),
    otherStopsTime: minutes("Time in stops not counted in availability"),
    lateStartTime: minutes("Uncovered time before the first covered minute"),
    earlyStopTime: minutes(
      "Uncovered time after the last covered minute, once the shift has ended",
    ),
    noDataTime: minutes("Other uncovered time"),
    unavailableTime: minutes("nonProgrammedDowntime + lateStartTime + earlyStopTime + noDataTime"),
    annotatedDowntime: minutes("Stop time covered by classified stops"),
    availability: OeeFigureFields.availability,
    netAvailability: OeeFigureFields.netAvailability,
  })
  .openapi("ShiftIndicators");

const ProductionMetricsSchema = z
  .object({
    ...OeeFigureAndFlagFields,
    minutesLostByLowSpeed: minutes("max(0, runTime - ideal minutes)"),
    minutesLostByLowQuality: minutes("Ideal minutes x defects / total count; 0 without items"),
  })
  .openapi("ProductionMetrics");

export const MetricsReportRowSchema = z
  .object({
    company: CompanyRefSchema,
    machine: ReportMachineSchema,
    shift: ReportShiftSchema,
    shiftIndicators: ShiftIndicatorsSchema,
    productionMetrics: ProductionMetricsSchema,
  })
  .openapi("MetricsReportRow");

export type MetricsReportRow = z.infer<typeof MetricsReportRowSchema>;

export const MetricsReportFiltersSchema = z
  .object({
    ...PageFields,
    machines: MachinesFilter.openapi({
      description: "`search` (fuzzy, on the machine name), `include`, `exclude` (machine ids).",
    }),
    shifts: z
      .object(integerIdListFields)
      .strict()
      .nullish()
      .openapi({ description: "Shift definition ids to include or exclude." }),
    startDate: DateComparisonFilter.openapi({ description: "On the instance's start." }),
    endDate: DateComparisonFilter.openapi({ description: "On the instance's end." }),
  })
  .strict()
  .openapi("MetricsReportFilters");

export type MetricsReportFilters = z.infer<typeof MetricsReportFiltersSchema>;
