/**
 * `GET /v1/machines/{machine_uuid}/signals` and
 * `GET /v1/machines/{machine_uuid}/signals/{public_id}` (snake_case bodies, as the spec says).
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import { findMachineByUuid } from "../../db/machines";
import { csvContent, csvResponse, inBatches, wantsCsv } from "../../http/csv";
import { notFound } from "../../http/errors";
import { EXAMPLE_SIGNAL_ID } from "../../http/examples";
import { isoInstant } from "../../http/instants";
import { createRouter, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { signalData } from "./data";
import { describe, listMachineSignals } from "./queries";
import { MachineUuidParam, SignalDataQuery, SignalDataSchema, SignalSchema, Uuid } from "./schemas";
import { jsonText, seriesJson } from "./series-json";

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
    "`end_time <= start_time`, the window exceeds 14 days, or the window touches more than 10,000 buckets (buckets are aligned to multiples of their width since the epoch, so an unaligned window can touch one more than `ceil(window / width)`).",
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
    200: {
      description:
        "Aggregated data. With `Accept: text/csv`: the points as CSV, columns `timestamp` and " +
        "`value` (`transpose` has no effect).",
      content: { "application/json": { schema: SignalDataSchema }, ...csvContent },
    },
    ...NOT_FOUND_RESPONSE,
  },
});

export const signalsRoutes = createRouter()
  .openapi(listSignalsRoute, async (c) => {
    const { machine_uuid } = c.req.valid("param");
    const { language } = c.req.valid("query");
    const machine = await findMachineByUuid(scopeOf(c), machine_uuid);
    if (!machine) throw notFound("Machine not found");
    const rows = await listMachineSignals(scopeOf(c), machine.id);
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
    const { head, series } = await signalData(c.env, scopeOf(c), machine_uuid, public_id, q);
    if (wantsCsv(c)) {
      // At most 10,000 points (the window's rule), so never above the CSV maximum.
      const points = series.buckets.map((t, i) => ({
        timestamp: isoInstant(t),
        value: series.values[i],
      }));
      return csvResponse(["timestamp", "value"], inBatches(points), `signal-${head.public_id}.csv`);
    }
    // The text directly (series-json.ts): the schema above documents it, nothing re-validates it.
    return jsonText<z.output<typeof SignalDataSchema>>(c, seriesJson(head, series, q.transpose));
  });
