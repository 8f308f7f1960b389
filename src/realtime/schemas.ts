/**
 * Request and response schemas of the realtime endpoints.
 */
import { z } from "@hono/zod-openapi";
import { EXAMPLE_MACHINE_ID, EXAMPLE_RECORDS } from "../http/examples";
import { DateTimeMs } from "../http/filters";
import { dateTime } from "../http/instants";
import { IntId } from "../http/schemas";
import { MAX_WORK_ORDER_NAME } from "../resources/simple-work-orders/schemas";

/** Largest `custom` object accepted, in characters of its JSON. */
const MAX_CUSTOM_JSON = 16_384;

/** A JSON object (not an array, not null), as `JSON.parse` gives it. */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const MachineIdParam = z.object({
  machine_id: IntId("machine_id").openapi({ example: EXAMPLE_MACHINE_ID }),
});

/** The fields of a SKU write; at least one must be given, not null. */
export const SKU_WRITE_FIELDS = [
  "skuId",
  "sku",
  "simpleWorkOrderId",
  "simpleWorkOrderName",
  "quantity",
  "start",
  "end",
  "custom",
] as const;

/** Why a SKU write with none of {@link SKU_WRITE_FIELDS} is refused. */
const NO_FIELD =
  `Give at least one of ${SKU_WRITE_FIELDS.join(", ")}: skuId or sku starts a SKU segment; ` +
  "simpleWorkOrderId, simpleWorkOrderName, quantity or custom alone change the segment running now";

export const RealtimeSkuBodySchema = z
  .object({
    skuId: z.string().trim().regex(/\S/, "Must not be blank").max(100).nullish().openapi({
      description: "The SKU's id (uuid). Give `skuId` or `sku`; both must name the same SKU.",
      example: EXAMPLE_RECORDS.sku,
    }),
    sku: z.string().trim().regex(/\S/, "Must not be blank").max(200).nullish().openapi({
      description: "The SKU by name: its exact `name` or `sku` code (422 when several match).",
    }),
    simpleWorkOrderId: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(100)
      .nullish()
      .openapi({
        description: "A simple work order of the company, by id (uuid).",
      }),
    simpleWorkOrderName: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(MAX_WORK_ORDER_NAME)
      .nullish()
      .openapi({
        description:
          "A simple work order by name: found, restored when deleted, or created, as " +
          "`POST /v1/simple-work-orders` does. With `simpleWorkOrderId`, both must name the same one.",
      }),
    quantity: z.number().nullish().openapi({
      description: "The quantity to make (for example the order's size), as given; not a count.",
    }),
    start: DateTimeMs.nullish().openapi({
      description:
        "When the machine starts on this SKU; default: the moment the write is applied. Must be " +
        "inside the running shift instance.",
    }),
    end: DateTimeMs.nullish().openapi({
      description:
        "When it stops (after `start`); default: open, until the next SKU write or the end of " +
        "the instance. Clipped to the instance.",
    }),
    // Not z.record: it copies keys into a plain `{}`, where `__proto__` sets the prototype
    // instead of a key, so that key was silently dropped. The parsed JSON object is kept
    // as given (JSON.parse makes `__proto__` an own key) and stored as its JSON text.
    custom: z
      .custom<Record<string, unknown>>(isJsonObject, { message: "Input should be an object" })
      // z.custom has no JSON Schema of its own: the document gets it here, null included.
      .openapi({ type: ["object", "null"], additionalProperties: {} })
      .nullish()
      .refine((v) => v == null || JSON.stringify(v).length <= MAX_CUSTOM_JSON, {
        message: `custom must be at most ${MAX_CUSTOM_JSON} characters of JSON`,
      })
      .openapi({
        description: "Custom field values keyed by field id, stored and shown as given.",
      }),
  })
  .strict()
  // At least one field, not null: refused by validation (a 422 at the body, before the
  // machine is looked up), and stated in the document as `anyOf` (a generator keeps it).
  .refine((b) => SKU_WRITE_FIELDS.some((field) => b[field] != null), {
    message: NO_FIELD,
    params: { type: "missing" },
  })
  .openapi("RealtimeSkuWrite", {
    anyOf: SKU_WRITE_FIELDS.map((field) => ({
      required: [field],
      properties: { [field]: { not: { type: "null" as const } } },
    })),
  });

export type RealtimeSkuBody = z.infer<typeof RealtimeSkuBodySchema>;

export const RealtimeOperatorBodySchema = z
  .object({
    operatorId: z
      .number()
      .int()
      .positive()
      .openapi({ description: "An operator of the company (integer id)." }),
    start: DateTimeMs.openapi({
      description: "When the assignment begins; inside the running shift instance.",
    }),
  })
  .strict()
  .openapi("RealtimeOperatorWrite");

const SkuOut = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    sku: z.string(),
    name: z.string().nullable(),
    unit: z.string().nullable(),
  })
  .openapi("RealtimeSku");

const WorkOrderOut = z
  .object({ id: z.string().openapi({ format: "uuid" }), name: z.string() })
  .nullable();

const RealtimeSegmentSchema = z
  .object({
    productionLogId: z.string().openapi({
      format: "uuid",
      description: "The live production log of this segment (`GET /v1/production-logs/{id}`).",
    }),
    sku: SkuOut,
    simpleWorkOrder: WorkOrderOut,
    quantity: z.number().nullable(),
    custom: z.record(z.string(), z.unknown()).nullable(),
    nominalSpeed: z.number().openapi({ description: "SKU units per minute." }),
    countingFactor: z.number().openapi({ description: "SKU units per sensor pulse." }),
    start: dateTime(),
    end: dateTime().nullable().openapi({
      description: "Where the segment ends (its `end`, or the next segment's start); null = open.",
    }),
    sensorCount: z
      .number()
      .int()
      .openapi({ description: "Sum of the `count` signal's samples in the segment so far." }),
    count: z.number().int().openapi({ description: "sensorCount x countingFactor, rounded." }),
  })
  .openapi("RealtimeSegment");

export const RealtimeStateSchema = z
  .object({
    machine: z.object({ id: z.number().int(), name: z.string() }),
    shift: z
      .object({
        id: z.number().int().openapi({ description: "The running shift instance's id." }),
        name: z.string(),
        start: dateTime(),
        end: dateTime(),
        isConsidered: z.boolean(),
      })
      .openapi({ description: "The shift instance the machine is running now." }),
    // `.or(z.null())`: `.nullable()` of a registered schema would make the component itself
    // nullable in the document (zod-openapi); see MachineRefObject in resources/references.ts.
    current: RealtimeSegmentSchema.or(z.null()).openapi({
      description:
        "The SKU and work order the machine is on now, with their `start`, `quantity` and " +
        "`custom`; null when none (nothing posted in this instance, or the last one has ended).",
    }),
    operators: z
      .array(
        z.object({
          id: z.number().int(),
          firstName: z.string().nullable(),
          lastName: z.string().nullable(),
          start: dateTime(),
        }),
      )
      .openapi({ description: "Operators assigned in this instance, by `start`." }),
    production: z
      .object({
        sensorCount: z.number().int(),
        count: z.number().int(),
        segments: z.array(RealtimeSegmentSchema),
      })
      .openapi({
        description:
          "Live production so far: totals, and one entry per SKU segment (each is a live " +
          "production log), by `start`.",
      }),
    revision: z.number().int().openapi({
      description: "Writes applied to this instance's timeline so far (SKU and operator writes).",
    }),
    at: dateTime().openapi({ description: "The instant this state describes." }),
  })
  .openapi("RealtimeState");

export type RealtimeStateOut = z.infer<typeof RealtimeStateSchema>;
