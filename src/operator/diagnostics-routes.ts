/**
 * Operator diagnostics: compare rollups with a raw scan.
 *
 * `GET /operator/v1/signals/{public_id}/aggregate` runs the public signal-data
 * aggregation with the rollups (`strategy=rollups`, what the public route
 * does) or by decoding every raw sample of the window (`strategy=raw`, the
 * naive design). Both must give the same points; the benchmark times them
 * side by side. Not part of the public API. Its signal lookup is in ./diagnostics-queries.ts.
 */
import { z } from "@hono/zod-openapi";
import { notFound } from "../http/errors";
import { isoInstant } from "../http/instants";
import { createRouter, jsonResponse } from "../http/openapi";
import { UuidId } from "../http/schemas";
import { planWindow, readMode } from "../resources/signals/aggregate";
import { signalStore } from "../resources/signals/store";
import { checkWindow, signalWindowQueryShape } from "../resources/signals/window";
import { findSignalOfAnyCompany } from "./diagnostics-queries";
import { scopeOfKey } from "./lookups";
import { operatorRoute } from "./schemas";

const AggregateQuery = z.object({
  ...signalWindowQueryShape,
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

export const operatorDiagnosticsRoutes = createRouter().openapi(aggregateRoute, async (c) => {
  const { public_id } = c.req.valid("param");
  const q = c.req.valid("query");
  const window = checkWindow(q);
  const scope = await scopeOfKey(c.env, "signal", public_id.toLowerCase());
  const signal = scope ? await findSignalOfAnyCompany(scope.db, public_id) : undefined;
  if (!signal) throw notFound("Signal not found");
  const useRollups = q.strategy === "rollups";
  const parts = planWindow(window.from, window.to, readMode(window.bucketWidthMs, useRollups));
  const started = Date.now();
  const series = await signalStore(c.env, signal.companyId, signal.machineId).aggregate(
    signal.id,
    window,
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
