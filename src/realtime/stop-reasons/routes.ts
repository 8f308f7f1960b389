/**
 * Stop reasons from the machine: `POST /v1/realtime/{machine_id}/stop-reason` (a scanner gives
 * the current or a recent stop its reason from the company's catalog) and
 * `GET /v1/realtime/{machine_id}/stops` (the recent stops and the catalog a scanner shows).
 * HTTP only: the rules are in ../stop-reason.ts, the classification in src/stops/classify.ts.
 */
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import { createRouter, ErrorSchema, jsonResponse, NOT_FOUND_RESPONSE } from "../../http/openapi";
import { objectBody } from "../../http/schemas";
import { StopsReportRowSchema } from "../../reports/stops-report";
import { MachineIdParam } from "../schemas";
import { giveStopReason, recentStopsOf } from "../stop-reason";
import { RealtimeStopsSchema, StopReasonBodySchema } from "../stop-reason-schemas";

const stopReasonRoute = publicRoute("realtime.write", {
  method: "post",
  path: "/v1/realtime/{machine_id}/stop-reason",
  operationId: "setRealtimeStopReason",
  tags: ["Realtime"],
  summary: "Give a stop of a machine its reason",
  description:
    "Gives a stop of the machine its reason: one of its recent stops named by `stopId` (begun, " +
    "and open or ended less than 24 hours ago), or by default the one a person at the machine means: " +
    "its open stop (the one that started last), else its last stop (the one that ended last, " +
    "less than 24 hours ago), so a repeated scan goes to the same stop. The reason is made of " +
    "causes of the " +
    "company's catalog, `generalCause` (required), `specificCause` and `component`, each by " +
    "`id` or exact `name` as `GET /v1/realtime/{machine_id}/stops` lists them, and a free " +
    "`description`. The whole classification is replaced: an absent cause or description " +
    "becomes null. A cause the catalog does not have is a 422: a scanner never adds one (the " +
    "operator API fills the catalog).\n\n" +
    "The classification is the one the stops report, the downtime Pareto and the MCP tools " +
    "show, and it fires the same events as every classification: the webhook " +
    "`MachineStopClassificationCreated` for a stop's first reason, `...Updated` for another " +
    "reason, and the stream event `stop.classified`. Giving a stop the reason it already has " +
    "changes nothing and fires nothing, so a repeated scan is never a second event.\n\n" +
    "**Errors in order:** an unknown machine (404), then a `stopId` that is not a stop of this " +
    "machine (404), then no stop to give the reason to when no `stopId` is given, or a stop " +
    "that ended more than 24 hours ago or starts after now (409), then a cause the catalog " +
    "does not have (422).",
  request: { params: MachineIdParam, body: objectBody(StopReasonBodySchema) },
  responses: {
    200: jsonResponse(
      StopsReportRowSchema,
      "The stop with its new classification, as a row of the stops report.",
    ),
    ...NOT_FOUND_RESPONSE,
    409: jsonResponse(
      ErrorSchema,
      "No `stopId`, and the machine has no open stop and no stop in the last 24 hours; or " +
        "the stop ended more than 24 hours ago, or starts after now.",
      {
        detail:
          "Machine 1 has no open stop and no stop in the last 24 hours: there is no stop to " +
          "give a reason to",
      },
    ),
  },
});

const stopsRoute = publicRoute("realtime.read", {
  method: "get",
  path: "/v1/realtime/{machine_id}/stops",
  operationId: "getRealtimeStops",
  tags: ["Realtime"],
  summary: "A machine's recent stops and the causes to give them",
  description:
    "What a scanner shows before it gives a reason: the machine's recent stops (begun by now, " +
    "and open or ended less than 24 hours ago; newest first, at most 100) as rows of the stops report with their " +
    "classification (all null while a stop waits for its reason), `defaultStopId` (the stop a " +
    "`stop-reason` write without `stopId` goes to), and the company's catalog of causes.",
  request: { params: MachineIdParam },
  responses: {
    200: jsonResponse(RealtimeStopsSchema, "The recent stops and the catalog."),
    ...NOT_FOUND_RESPONSE,
  },
});

export const stopReasonRoutes = createRouter()
  .openapi(stopReasonRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    const body = c.req.valid("json");
    // The webhook deliveries of the change are handed over after the answer.
    const afterAnswer = (work: Promise<unknown>) => c.executionCtx.waitUntil(work);
    const row = await giveStopReason(c.env, scopeOf(c), machine_id, body, Date.now(), afterAnswer);
    return c.json(row, 200);
  })
  .openapi(stopsRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    return c.json(await recentStopsOf(scopeOf(c), machine_id, Date.now()), 200);
  });
