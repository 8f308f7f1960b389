/**
 * Operator diagnostics, not part of the public API: `GET /signals/{public_id}/aggregate` runs
 * the public aggregation over the rollups (`strategy=rollups`) or over every raw sample
 * (`strategy=raw`), which must give the same points; `GET /machines/{machine_id}/signal-archive`
 * lists a machine's archive objects on R2 and its hot and archived hours. The signal lookup is
 * in ./queries.ts (docs/operator-api.md, "Machines, signals and samples").
 */
import { z } from "@hono/zod-openapi";
import { notFound } from "../../http/errors";
import { dateTime, isoInstant } from "../../http/instants";
import { createRouter, jsonResponse } from "../../http/openapi";
import { IntId, UuidId } from "../../http/schemas";
import { planWindow, readMode } from "../../resources/signals/aggregate";
import { signalStore } from "../../resources/signals/store";
import { checkWindow, signalWindowQueryShape } from "../../resources/signals/window";
import { requireMachine, scopeOfKey } from "../lookups";
import { operatorRoute } from "../schemas";
import { findSignalOfAnyCompany } from "./queries";

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
          from: dateTime(),
          to: dateTime(),
        }),
      )
      .openapi({ description: "How the window was split (the query plan of the aggregation)." }),
    queryMs: z.number().openapi({ description: "Time spent in the signal store call, ms." }),
    data: z.array(z.object({ timestamp: dateTime(), value: z.number() })),
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

const ArchiveStatusOut = z
  .object({
    objects: z
      .array(
        z.object({
          key: z.string().openapi({ description: "The object's key in the HISTORY bucket." }),
          signalId: z.number().int(),
          kind: z.enum(["hour", "day", "month", "year"]),
          start: dateTime(),
          end: dateTime(),
          samples: z.number().int(),
          bytes: z.number().int(),
        }),
      )
      .openapi({ description: "The machine's archive objects, by signal and start." }),
    hotHours: z.number().int().openapi({ description: "Hours whose samples the store holds." }),
    archivedHours: z
      .number()
      .int()
      .openapi({ description: "Archived hours whose samples are only on R2 (rollups kept)." }),
    dueHours: z.number().int().openapi({
      description: "Hours past the hot window not yet (or no longer exactly) in the archive.",
    }),
    databaseSize: z.number().int().openapi({ description: "The store's SQLite size, bytes." }),
  })
  .openapi("SignalArchiveStatus");

const archiveRoute = operatorRoute({
  method: "get",
  path: "/machines/{machine_id}/signal-archive",
  tags: ["Diagnostics"],
  summary: "Operator diagnostics: a machine's signal archive",
  description:
    "The Parquet objects on R2 that hold the machine's archived samples (docs/signal-storage.md, " +
    '"The archive"), and how many hours its signal store holds hot, archived or due.',
  request: { params: z.object({ machine_id: IntId("machine_id") }) },
  responses: { 200: jsonResponse(ArchiveStatusOut, "The archive of the machine's store.") },
});

export const operatorDiagnosticsRoutes = createRouter()
  .openapi(archiveRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    const machine = await requireMachine(c.env, machine_id);
    const status = await signalStore(c.env, machine.companyId, machine.id).archiveStatus();
    return c.json(
      {
        ...status,
        objects: status.objects.map((o) => ({
          key: o.key,
          signalId: o.signalId,
          kind: o.kind,
          start: isoInstant(o.start),
          end: isoInstant(o.end),
          samples: o.n,
          bytes: o.bytes,
        })),
      },
      200,
    );
  })
  .openapi(aggregateRoute, async (c) => {
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
