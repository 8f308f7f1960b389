/**
 * `GET /v1/machines/{machine_uuid}/signals` and
 * `GET /v1/machines/{machine_uuid}/signals/{public_id}` (snake_case bodies, as the spec says).
 */
import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { notFound, unprocessable } from "../../http/errors";
import { EXAMPLE_MACHINE_UUID, EXAMPLE_SIGNAL_ID, EXAMPLE_WINDOW } from "../../http/examples";
import { isoInstant } from "../../http/instants";
import { createRouter, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { queryBoolean } from "../../http/query";
import { findMachineByUuid } from "../machines/queries";
import { AGG_FUNCTIONS } from "./aggregate";
import { describe, findSignalByMachineUuid, listMachineSignals } from "./queries";
import { signalStore } from "./store";

/** Longest window of one signal-data query. */
export const MAX_WINDOW_MS = 14 * 24 * 3600 * 1000;
/** Most points one signal-data query may produce. */
export const MAX_POINTS = 10_000;

export const AGG_UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

// Path ids are matched case-insensitively: stored uuids are lowercase.
const Uuid = z
  .guid()
  .transform((s) => s.toLowerCase())
  .openapi({ type: "string", format: "uuid" });

const MachineUuidParam = z.object({
  machine_uuid: Uuid.openapi({
    param: { name: "machine_uuid", in: "path" },
    example: EXAMPLE_MACHINE_UUID,
  }),
});

const SignalSchema = z
  .object({
    public_id: z
      .string()
      .openapi({ format: "uuid", description: "Needed to read the signal's data." }),
    name: z.string().openapi({ example: "power" }),
    display_name: z.string().openapi({ example: "Power" }),
    description: z.string().nullable(),
  })
  .openapi("Signal");

const listSignalsRoute = publicRoute("signals.read", {
  method: "get",
  path: "/v1/machines/{machine_uuid}/signals",
  operationId: "listMachineSignals",
  tags: ["Signals"],
  summary: "List the signals of a machine",
  description:
    "The machine's signals under `signals`, ordered by `name`, then `display_name`. " +
    "`description` is in English, or in Spanish with `language=es` (English when there is no translation). " +
    "Deleted signals and signals without a kind are not listed.",
  request: {
    params: MachineUuidParam,
    query: z.object({ language: z.enum(["en", "es"]).default("en") }),
  },
  responses: {
    200: jsonResponse(
      z.object({ signals: z.array(SignalSchema) }).openapi("SignalList"),
      "The machine's signals.",
    ),
    ...NOT_FOUND_RESPONSE,
  },
});

const isoDateTime = z.iso
  .datetime({ offset: true, local: true })
  .openapi({ format: "date-time", example: "2022-09-05T00:00:00Z" })
  .transform((s, ctx) => {
    // A date-time without an offset is read as UTC.
    const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
    if (!Number.isFinite(ms) || ms < 0) {
      ctx.addIssue({
        code: "custom",
        message: "Must be a date-time on or after 1970-01-01T00:00:00Z",
      });
      return z.NEVER;
    }
    return ms;
  });

const SignalDataQuery = z.object({
  start_time: isoDateTime.openapi({
    description: "Window start (inclusive), ISO 8601; no offset = UTC.",
    example: EXAMPLE_WINDOW.start,
  }),
  end_time: isoDateTime.openapi({
    description: "Window end (exclusive); at most 14 days after `start_time`.",
    example: EXAMPLE_WINDOW.end,
  }),
  agg_unit: z.enum(["s", "m", "h", "d"]).default("s").openapi({
    description: "Bucket unit; a `d` bucket is a UTC day.",
    example: EXAMPLE_WINDOW.aggUnit,
  }),
  agg_period: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1)
    // z.coerce hides the bounds from the generator: state them.
    .openapi({
      type: "integer",
      minimum: 1,
      maximum: 1_000_000,
      default: 1,
      description: "Bucket width = agg_period x agg_unit.",
    }),
  agg_function: z.enum(AGG_FUNCTIONS).default("avg"),
  transpose: queryBoolean(false, "true: parallel `timestamps` and `values` instead of `data`."),
});

const SignalDataSchema = z
  .object({
    machine_uuid: z.string().openapi({ format: "uuid" }),
    public_id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    agg_unit: z.enum(["s", "m", "h", "d"]),
    agg_period: z.number().int(),
    agg_function: z.enum(AGG_FUNCTIONS),
    data: z
      .array(
        z.object({ timestamp: z.string().openapi({ format: "date-time" }), value: z.number() }),
      )
      .optional()
      .openapi({ description: "Default form: one point per non-empty bucket, ascending." }),
    timestamps: z
      .array(z.string().openapi({ format: "date-time" }))
      .optional()
      .openapi({ description: "With `transpose=true`." }),
    values: z
      .array(z.number())
      .optional()
      .openapi({ description: "With `transpose=true`; `values[i]` belongs to `timestamps[i]`." }),
  })
  .openapi("SignalData");

const signalDataRoute = publicRoute("signals.read", {
  method: "get",
  path: "/v1/machines/{machine_uuid}/signals/{public_id}",
  operationId: "getSignalData",
  tags: ["Signals"],
  summary: "Read aggregated signal data",
  description:
    "Samples with `start_time <= t < end_time`, reduced by `agg_function` in buckets `agg_period x agg_unit` wide, " +
    "aligned to multiples of that width since the Unix epoch (UTC). A point's `timestamp` is its bucket's start; " +
    "buckets without samples are left out; points are in ascending time. Rejected with 422 (never truncated) when " +
    "`end_time <= start_time`, the window exceeds 14 days, or `ceil(window / width)` exceeds 10,000 points.",
  request: {
    params: MachineUuidParam.extend({
      public_id: Uuid.openapi({
        param: { name: "public_id", in: "path" },
        example: EXAMPLE_SIGNAL_ID,
      }),
    }),
    query: SignalDataQuery,
  },
  responses: {
    200: jsonResponse(SignalDataSchema, "Aggregated data."),
    ...NOT_FOUND_RESPONSE,
  },
});

export const signalsRoutes = createRouter()
  .openapi(listSignalsRoute, async (c) => {
    const { machine_uuid } = c.req.valid("param");
    const { language } = c.req.valid("query");
    const { db, principal } = c.var;
    const machine = await findMachineByUuid(db, principal.companyId, machine_uuid);
    if (!machine) throw notFound("Machine not found");
    const rows = await listMachineSignals(db, principal.companyId, machine.id);
    return c.json(
      {
        signals: rows.map((s) => ({
          public_id: s.publicId,
          name: s.name,
          display_name: s.displayName,
          description: describe(s, language),
        })),
      },
      200,
    );
  })
  .openapi(signalDataRoute, async (c) => {
    const { machine_uuid, public_id } = c.req.valid("param");
    const q = c.req.valid("query");
    const width = q.agg_period * AGG_UNIT_MS[q.agg_unit];
    if (q.end_time <= q.start_time) {
      throw unprocessable(["query", "end_time"], "end_time must be later than start_time");
    }
    if (q.end_time - q.start_time > MAX_WINDOW_MS) {
      throw unprocessable(
        ["query", "end_time"],
        "The window between start_time and end_time exceeds 14 days",
      );
    }
    const pointCount = Math.ceil((q.end_time - q.start_time) / width);
    if (pointCount > MAX_POINTS) {
      throw unprocessable(
        ["query", "agg_period"],
        `The query would produce ${pointCount} points; at most ${MAX_POINTS} are allowed: widen the bucket (agg_unit, agg_period) or shorten the window`,
      );
    }
    const { db, principal } = c.var;
    const signal = await findSignalByMachineUuid(db, principal.companyId, machine_uuid, public_id);
    if (!signal) {
      // Only on the error path: tell an unknown machine from an unknown signal.
      const machine = await findMachineByUuid(db, principal.companyId, machine_uuid);
      throw notFound(machine ? "Signal not found" : "Machine not found");
    }
    const series = await signalStore(c.env, principal.companyId, signal.machineId).aggregate(
      signal.id,
      { from: q.start_time, to: q.end_time, bucketWidthMs: width },
      q.agg_function,
    );
    const head = {
      machine_uuid,
      public_id: signal.publicId,
      name: signal.name,
      agg_unit: q.agg_unit,
      agg_period: q.agg_period,
      agg_function: q.agg_function,
    };
    if (q.transpose) {
      return c.json(
        { ...head, timestamps: series.buckets.map(isoInstant), values: series.values },
        200,
      );
    }
    return c.json(
      {
        ...head,
        data: series.buckets.map((bucket, i) => ({
          timestamp: isoInstant(bucket),
          value: series.values[i] ?? 0,
        })),
      },
      200,
    );
  });
