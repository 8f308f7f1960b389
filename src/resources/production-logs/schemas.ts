/**
 * Request and response schemas of the production log endpoints.
 */

import { z } from "@hono/zod-openapi";
import { DateComparisonFilter, DateTimeMs, MachinesFilter } from "../../http/filters";
import { dateTime } from "../../http/instants";
import { PageFields } from "../../http/pagination";
import { NumericComparisonFilter, SearchTerm, stringIdListFields } from "../../http/search";
import { SyncFilterFields } from "../../http/sync";
import { MAX_RATE, MIN_RATE, RATE_BOUNDS } from "../nominal-speeds/schemas";
import { MAX_OPERATOR_NAME } from "../operators/schemas";
import { MachineRefObject, MachineRefSchema, SkuRefObject, SkuRefSchema } from "../references";
import { MAX_WORK_ORDER_NAME } from "../simple-work-orders/schemas";

const LOG_TYPES = ["correct", "defects", "total"] as const;
export type LogType = (typeof LOG_TYPES)[number];

const LogType = z.enum(LOG_TYPES).openapi({
  description:
    "`total` = every item made; `correct` and `defects` split them (the metrics report uses the " +
    "`total` logs of a shift when it has any, else `correct` + `defects`).",
});

const positiveRate = (description: string) =>
  z
    .number()
    .min(MIN_RATE)
    .max(MAX_RATE)
    .openapi({ description: `${description} ${RATE_BOUNDS}` });

/**
 * Most items one log may count: a thousand times a fast line's day (1,000 a minute for
 * 24 h is 1.44 million). With the rate bounds every report figure stays finite
 * (docs/input-bounds.md).
 */
export const MAX_COUNT = 1e9;
/** Most sensor pulses one log may hold: MAX_COUNT / MIN_RATE, a safe integer. */
export const MAX_SENSOR_COUNT = MAX_COUNT / MIN_RATE;

const Count = z
  .number()
  .int()
  .min(0)
  .max(MAX_COUNT)
  .openapi({
    description: `Items produced in the interval, in the SKU's unit; integer from 0 to ${MAX_COUNT.toExponential()}.`,
  });

const OPERATOR_BY_NAME =
  "The company's operator with exactly this first and last name (trimmed; the lowest id " +
  "when several match); created when there is none. Deleted operators are not matched.";

/**
 * An operator by name. Not a registered component: `.nullish()` of a registered schema is
 * documented wrongly (see `MachineRefObject`), and both uses are nullable.
 */
const OperatorByNameObject = z
  .object({
    firstName: z.string().trim().regex(/\S/, "Must not be blank").max(MAX_OPERATOR_NAME),
    lastName: z.string().trim().regex(/\S/, "Must not be blank").max(MAX_OPERATOR_NAME),
  })
  .strict();

const WorkOrderName = z
  .string()
  .trim()
  .regex(/\S/, "Must not be blank")
  .max(MAX_WORK_ORDER_NAME)
  .openapi({
    description:
      "A work order name (trimmed): the company's work order of that name, created (status " +
      "`InProgress`) when there is none.",
    example: "WO-2026-0042",
  });

export const ProductionLogSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    type: LogType,
    sensorCount: z
      .number()
      .int()
      .openapi({ description: "Sensor pulses: `count / countingFactor`, rounded to an integer." }),
    count: z.number().int().openapi({ description: "Items in the SKU's unit." }),
    nominalSpeed: z.number().openapi({ description: "SKU units per minute." }),
    countingFactor: z.number().openapi({ description: "SKU units per sensor pulse." }),
    start: dateTime(),
    end: dateTime(),
    isReviewed: z.boolean(),
    isAutomated: z
      .boolean()
      .openapi({ description: "True for logs written by the service (realtime), false here." }),
    machineId: z.number().int(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
    deletedAt: dateTime().nullable(),
    live: z.boolean().openapi({ description: "True while a realtime log is still growing." }),
    machine: z.object({
      id: z.number().int(),
      name: z.string(),
      isCountEnabled: z.boolean(),
      externalName: z.string().nullable(),
    }),
    company: z.object({ id: z.number().int(), name: z.string(), timezone: z.string() }),
    shift: z
      .object({
        id: z.number().int().openapi({ description: "Shift instance id." }),
        name: z.string(),
        start: dateTime(),
        end: dateTime(),
        isConsidered: z.boolean(),
      })
      .nullable()
      .openapi({
        description: "The machine's shift instance containing `start`; null when no shift does.",
      }),
    operator: z
      .object({
        id: z.number().int(),
        firstName: z.string().nullable(),
        lastName: z.string().nullable(),
        email: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "Null when none is set or the operator was deleted." }),
    sku: z
      .object({
        id: z.string().openapi({ format: "uuid" }),
        name: z.string().nullable(),
        description: z.string().nullable(),
        unit: z.string().nullable(),
      })
      .nullable(),
    workOrder: z
      .object({
        id: z.string().openapi({ format: "uuid" }),
        name: z.string(),
        description: z.string().nullable(),
        status: z.string().openapi({ example: "InProgress" }),
      })
      .nullable(),
    simpleWorkOrder: z
      .object({ id: z.string().openapi({ format: "uuid" }), name: z.string() })
      .nullable()
      .openapi({ description: "Set by the realtime endpoints; null when none or deleted." }),
  })
  .openapi("ProductionLog");

export type ProductionLogOut = z.infer<typeof ProductionLogSchema>;

export const ProductionLogCreateSchema = z
  .object({
    // Examples an hour apart: a body sampled from the property examples must be accepted.
    start: DateTimeMs.openapi({
      description: "Start of the interval (included).",
      example: "2022-09-05T08:00:00Z",
    }),
    end: DateTimeMs.openapi({
      description: "End of the interval (excluded); after `start`.",
      example: "2022-09-05T09:00:00Z",
    }),
    count: Count.nullish().openapi({
      description:
        "Items produced in the interval, in the SKU's unit; integer >= 0. Absent or null: " +
        "measured, as the realtime logs are: `sensorCount` (when not given) is the sum of the " +
        "machine's `count` signal samples in [`start`, `end`), rounded, and `count = " +
        "sensorCount x countingFactor`, rounded; 0 when the machine has no `count` signal.",
    }),
    type: LogType.optional().openapi({ default: "total" }),
    nominalSpeed: positiveRate(
      "SKU units per minute; default: the nominal speed of the machine/SKU pair (422 when the " +
        "pair has none and none is given).",
    ).nullish(),
    countingFactor: positiveRate(
      "SKU units per sensor pulse; default: the counting factor of the pair's nominal speed, " +
        "else 1.",
    ).nullish(),
    sensorCount: z
      .number()
      .int()
      .min(0)
      .max(MAX_SENSOR_COUNT)
      .nullish()
      .openapi({
        description:
          `Sensor pulses (at most ${MAX_SENSOR_COUNT.toExponential()}); default ` +
          "`count / countingFactor`, rounded, or the measured pulses when `count` is absent too.",
      }),
    machine: MachineRefSchema,
    sku: SkuRefSchema,
    operator: OperatorByNameObject.nullish().openapi({
      description: `${OPERATOR_BY_NAME} Absent or null = no operator.`,
    }),
    workOrder: WorkOrderName.nullish(),
    isReviewed: z.boolean().optional().openapi({ default: false }),
  })
  .strict()
  .openapi("ProductionLogCreate");

export type ProductionLogCreate = z.infer<typeof ProductionLogCreateSchema>;

export const ProductionLogPatchSchema = z
  .object({
    type: LogType.nullish().openapi({ description: "Absent or null = unchanged." }),
    count: Count.nullish().openapi({
      description:
        "Items in the SKU's unit, integer >= 0; re-derives `sensorCount`. Absent or null = unchanged.",
    }),
    nominalSpeed: positiveRate("SKU units per minute; absent or null = unchanged.").nullish(),
    start: DateTimeMs.nullish().openapi({
      description: "Absent or null = unchanged.",
      example: "2022-09-05T08:00:00Z",
    }),
    end: DateTimeMs.nullish().openapi({
      description: "Absent or null = unchanged.",
      example: "2022-09-05T09:00:00Z",
    }),
    machine: MachineRefObject.nullish().openapi({
      description: "A machine of the company, by `id` or by `name`; absent or null = unchanged.",
    }),
    sku: SkuRefObject.nullish().openapi({
      description: "A SKU of the company, by `id` or by `name`; absent or null = unchanged.",
    }),
    operator: OperatorByNameObject.nullish().openapi({
      description: "Found by name or created; null removes the operator from the log.",
    }),
    workOrder: WorkOrderName.nullish().openapi({
      description: "Found by name or created; null removes the work order from the log.",
    }),
    isReviewed: z.boolean().nullish().openapi({ description: "Absent or null = unchanged." }),
  })
  .strict()
  .openapi("ProductionLogPatch");

export type ProductionLogPatch = z.infer<typeof ProductionLogPatchSchema>;

export const ProductionLogFiltersSchema = z
  .object({
    ...PageFields,
    machines: MachinesFilter.openapi({
      description:
        "`search`: fuzzy on the machine name (case- and accent-insensitive containment); " +
        "`include`/`exclude`: machine ids.",
    }),
    skus: z
      .object({
        search: SearchTerm.nullish().openapi({
          description:
            "Fuzzy on the SKU's `sku` code or its `name` (either matches); blank = no filter.",
        }),
        ...stringIdListFields,
      })
      .strict()
      .nullish(),
    start: DateComparisonFilter.openapi({ description: "On the log's start." }),
    end: DateComparisonFilter.openapi({ description: "On the log's end." }),
    count: NumericComparisonFilter.openapi({ description: "Comparisons with `count`." }),
    isReviewed: z.boolean().nullish(),
    type: LogType.nullish(),
    ...SyncFilterFields,
  })
  .strict()
  .openapi("ProductionLogFilters");

export type ProductionLogFilters = z.infer<typeof ProductionLogFiltersSchema>;
