/**
 * Operator diagnostics: compare rollups with a raw scan.
 *
 * `GET /operator/v1/signals/{public_id}/aggregate` runs the public signal-data
 * aggregation with the rollups (`strategy=rollups`, what the public route
 * does) or by decoding every raw sample of the window (`strategy=raw`, the
 * naive design). Both must give the same points; the benchmark times them
 * side by side. Not part of the public API.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, isNull } from "drizzle-orm";
import type { AppEnv } from "../app-env";
import { signals } from "../db/schema";
import { notFound, unprocessable } from "../http/errors";
import { isoInstant } from "../http/instants";
import { jsonResponse } from "../http/openapi";
import { validationHook } from "../http/validation";
import { AGG_FUNCTIONS, planWindow, readMode } from "../resources/signals/aggregate";
import { AGG_UNIT_MS, MAX_POINTS, MAX_WINDOW_MS } from "../resources/signals/routes";
import { signalStore } from "../resources/signals/store";
import { operatorRoute, UuidId } from "./schemas";

const instant = z.iso
  .datetime({ offset: true })
  .openapi({ format: "date-time", example: "2022-09-05T00:00:00Z" })
  .transform((s, ctx) => {
    const ms = Date.parse(s);
    if (!Number.isFinite(ms) || ms < 0) {
      ctx.addIssue({
        code: "custom",
        message: "Must be a date-time on or after 1970-01-01T00:00:00Z",
      });
      return z.NEVER;
    }
    return ms;
  });

const AggregateQuery = z.object({
  start_time: instant.openapi({ description: "Window start (inclusive), with an offset." }),
  end_time: instant.openapi({ description: "Window end (exclusive), with an offset." }),
  agg_unit: z.enum(["s", "m", "h", "d"]).default("s"),
  agg_period: z.coerce
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(1)
    .openapi({ type: "integer", minimum: 1, maximum: 1_000_000, default: 1 }),
  agg_function: z.enum(AGG_FUNCTIONS).default("avg"),
  strategy: z
    .enum(["rollups", "raw"])
    .default("rollups")
    .openapi({
      description:
        "`rollups`: what the public route does (hour or minute rollups of whole hours, samples at the edges); " +
        "`raw`: every sample of the window decoded.",
    }),
});

const AggregateOut = z
  .object({
    strategy: z.enum(["rollups", "raw"]),
    parts: z
      .array(
        z.object({
          source: z.string().openapi({ description: "`raw`, or a rollup width in seconds." }),
          from: z.string().openapi({ format: "date-time" }),
          to: z.string().openapi({ format: "date-time" }),
        }),
      )
      .openapi({ description: "How the window was split (the query plan of the aggregation)." }),
    queryMs: z.number().openapi({ description: "Time spent in the signal store call, ms." }),
    data: z.array(
      z.object({ timestamp: z.string().openapi({ format: "date-time" }), value: z.number() }),
    ),
  })
  .openapi("AggregateDiagnostics");

const aggregateRoute = operatorRoute({
  method: "get",
  path: "/signals/{public_id}/aggregate",
  tags: ["Diagnostics"],
  summary: "Operator diagnostics: compare rollups with a raw scan",
  description:
    "Aggregates one signal exactly like `GET /v1/machines/{machine_uuid}/signals/{public_id}` " +
    "(same window rules and limits), with the rollups or by decoding every raw " +
    "sample. Both strategies return the same points; use it to check the rollups or to time them.",
  request: {
    params: z.object({ public_id: UuidId("public_id") }),
    query: AggregateQuery,
  },
  responses: { 200: jsonResponse(AggregateOut, "The points and how they were computed.") },
});

export const operatorDiagnosticsRoutes = new OpenAPIHono<AppEnv>({
  defaultHook: validationHook,
}).openapi(aggregateRoute, async (c) => {
  const { public_id } = c.req.valid("param");
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
      `The query would produce ${pointCount} points; at most ${MAX_POINTS} are allowed`,
    );
  }
  const signal = await c.var.db
    .select({ id: signals.id, companyId: signals.companyId, machineId: signals.machineId })
    .from(signals)
    .where(and(eq(signals.publicId, public_id.toLowerCase()), isNull(signals.deletedAt)))
    .get();
  if (!signal) throw notFound("Signal not found");
  const useRollups = q.strategy === "rollups";
  const parts = planWindow(q.start_time, q.end_time, readMode(width, useRollups));
  const started = Date.now();
  const series = await signalStore(c.env, signal.companyId, signal.machineId).aggregate(
    signal.id,
    { from: q.start_time, to: q.end_time, bucketWidthMs: width },
    q.agg_function,
    useRollups,
  );
  const queryMs = Date.now() - started;
  return c.json(
    {
      strategy: q.strategy,
      parts: parts.map((p) => ({
        source: String(p.source),
        from: new Date(p.from).toISOString(),
        to: new Date(p.to).toISOString(),
      })),
      queryMs,
      data: series.buckets.map((bucket, i) => ({
        timestamp: isoInstant(bucket),
        value: series.values[i] ?? 0,
      })),
    },
    200,
  );
});
