/**
 * Schemas and shapes shared by the metrics and stops reports (and by the
 * operator's stop-classification response and, later, the webhook events,
 * which use the stops report's shapes): company, machine and shift references,
 * a stop, and its classification.
 */

import { z } from "@hono/zod-openapi";
import { inArray, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { STOP_ORIGINS, type StopOrigin } from "../db/stop-origins";
import { isoInstant as iso } from "../http/instants";
import { instanceContains } from "../shifts/instances";
import type { ShiftInstanceRow } from "../shifts/queries";
import { minutesOf } from "./oee";

const dateTime = () => z.string().openapi({ format: "date-time" });

/** A machine as a report row shows it (`ReportMachine`: its id and name). */
export const ReportMachineSchema = z.object({ id: z.number().int(), name: z.string() });

export const ReportShiftSchema = z
  .object({
    id: z
      .number()
      .int()
      .openapi({ description: "Shift instance id (one machine, one occurrence)." }),
    name: z.string().openapi({ description: "Name of the shift definition." }),
    startTime: dateTime().openapi({ description: "Start of the instance." }),
    endTime: dateTime().openapi({ description: "End of the instance." }),
    isActive: z.boolean().openapi({ description: "True while `startTime <= now < endTime`." }),
  })
  .openapi("ReportShift");

export type ReportShift = z.infer<typeof ReportShiftSchema>;

/** The `shift` object of a report row for an instance, at `now` (ms). */
export function toReportShift(
  instance: Pick<ShiftInstanceRow, "id" | "name" | "start" | "end">,
  now: number,
): ReportShift {
  return {
    id: instance.id,
    name: instance.name,
    startTime: iso(instance.start),
    endTime: iso(instance.end),
    isActive: instanceContains(instance, now),
  };
}

const CauseSchema = z.object({
  id: z.string().nullable().openapi({ format: "uuid" }),
  name: z.string().nullable(),
});

export const ClassificationSchema = z
  .object({
    id: z.number().int().nullable(),
    createdAt: dateTime().nullable(),
    updatedAt: dateTime().nullable(),
    description: z.string().nullable(),
    component: CauseSchema,
    specificCause: CauseSchema,
    generalCause: CauseSchema,
  })
  .openapi("StopClassification", {
    description: "Every field is null (and each cause `{id: null, name: null}`) when unclassified.",
  });

export type ClassificationOut = z.infer<typeof ClassificationSchema>;

/** A classification row joined with its three causes (each null when not set). */
export interface ClassificationRow {
  id: number | null;
  createdAt: number | null;
  updatedAt: number | null;
  description: string | null;
  componentId: string | null;
  componentName: string | null;
  specificCauseId: string | null;
  specificCauseName: string | null;
  generalCauseId: string | null;
  generalCauseName: string | null;
}

/** Shapes a classification row (or the all-null row of an unclassified stop). */
export function toClassificationOut(row: ClassificationRow): ClassificationOut {
  return {
    id: row.id,
    createdAt: row.createdAt === null ? null : iso(row.createdAt),
    updatedAt: row.updatedAt === null ? null : iso(row.updatedAt),
    description: row.description,
    component: { id: row.componentId, name: row.componentName },
    specificCause: { id: row.specificCauseId, name: row.specificCauseName },
    generalCause: { id: row.generalCauseId, name: row.generalCauseName },
  };
}

export const StopOriginSchema = z.enum(STOP_ORIGINS).openapi("StopOrigin", {
  description:
    "How the stop came to be: `detected` from the machine's own signals (its count signal, " +
    "or its analog rule), `operatorApi` recorded through the operator API (by a person, or " +
    "the plant's own system such as an MES). Set once: a detected stop a person edits stays " +
    "`detected`. A scanner's reason (`POST /v1/realtime/{machine_id}/stop-reason`) classifies " +
    "a stop and creates none.",
  example: "detected",
});

/**
 * The `origin` filter of the stops and downtime reports: only stops of these origins.
 * Absent or null: every origin.
 */
export const StopOriginFilter = z
  .array(StopOriginSchema)
  .min(1)
  .max(STOP_ORIGINS.length)
  .nullish()
  .openapi({
    description:
      "Only stops of these origins (any of them): `detected` (from the machine's signals), " +
      "`operatorApi` (recorded through the operator API). Default: every origin.",
    example: ["detected"],
  });

/** The SQL condition of an `origin` filter (undefined: no condition). */
export function originCondition(
  column: SQLiteColumn,
  origins: readonly StopOrigin[] | null | undefined,
): SQL | undefined {
  return origins ? inArray(column, [...origins]) : undefined;
}

const DetectedDowntimeSchema = z
  .object({
    startTime: dateTime(),
    endTime: dateTime().nullable(),
  })
  .openapi("DetectedDowntime");

export const StopSchema = z
  .object({
    id: z.number().int(),
    startTime: dateTime(),
    endTime: dateTime().nullable().openapi({ description: "null while the stop is open." }),
    isProgrammed: z.boolean(),
    isIncludedInAvailability: z.boolean(),
    isIncludedInStops: z.boolean(),
    isManual: z.boolean().openapi({
      description:
        "As the stop was recorded (`isManual` of the operator API: entered by hand); false on " +
        "a detected stop. Where a stop came from is `origin`.",
    }),
    origin: StopOriginSchema,
    detectedDowntime: DetectedDowntimeSchema.or(z.null()).openapi({
      description:
        "On a recorded stop that took in the machine's detected downtime it overlaps or " +
        "touches (one breakdown, one stop: `startTime` and `endTime` cover both, and the " +
        "stop keeps its own classification and flags): that downtime, `endTime` null while " +
        "it goes on. null otherwise (always on a stop the detector itself holds).",
    }),
    createdAt: dateTime().nullable(),
    updatedAt: dateTime().nullable(),
    deletedAt: dateTime().nullable().optional(),
    durationInMinutes: z.number().openapi({
      description: "(`endTime`, or now for an open stop) - `startTime`, in minutes.",
    }),
  })
  .openapi("Stop");

export type StopOut = z.infer<typeof StopSchema>;

/** A stop row as stored. */
export interface StopRow {
  id: number;
  machineId: number;
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
  isIncludedInAvailability: boolean;
  isIncludedInStops: boolean;
  isManual: boolean;
  origin: StopOrigin;
  /** The detected downtime a recorded stop took in (null: none; end null: going on). */
  detectedStartTime: number | null;
  detectedEndTime: number | null;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

/** Shapes a stop; `durationInMinutes` runs to `now` (ms) while the stop is open. */
export function toStopOut(row: StopRow, now: number): StopOut {
  return {
    id: row.id,
    startTime: iso(row.startTime),
    endTime: row.endTime === null ? null : iso(row.endTime),
    isProgrammed: row.isProgrammed,
    isIncludedInAvailability: row.isIncludedInAvailability,
    isIncludedInStops: row.isIncludedInStops,
    isManual: row.isManual,
    origin: row.origin,
    detectedDowntime:
      row.detectedStartTime === null
        ? null
        : {
            startTime: iso(row.detectedStartTime),
            endTime: row.detectedEndTime === null ? null : iso(row.detectedEndTime),
          },
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    deletedAt: row.deletedAt === null ? null : iso(row.deletedAt),
    durationInMinutes: minutesOf((row.endTime ?? now) - row.startTime),
  };
}
