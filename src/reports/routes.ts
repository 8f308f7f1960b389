import type { z } from "@hono/zod-openapi";
import { publicRoute } from "../app-chain/public-route";
import { scopeOf } from "../app-env";
import { type FlushHeldWrites, syncPendingMachines } from "../durable/realtime-barrier";
import type { Env } from "../env";
import { checkCsvSize, csvContent, csvResponse, wantsCsv } from "../http/csv";
import { BARRIER_RESPONSE, createRouter } from "../http/openapi";
import { MAX_LIMIT, pagedResponseSchema, pageEnvelope, pageRequest } from "../http/pagination";
import { type CsvExport, downtimeCsv, kpiCsv, metricsCsv, stopsCsv } from "./csv-export";
import { downtimeReport } from "./downtime-report";
import { DowntimeReportFiltersSchema, DowntimeReportRowSchema } from "./downtime-schemas";
import { kpiReport } from "./kpi-report";
import { KpiReportFiltersSchema, KpiReportRowSchema } from "./kpi-schemas";
import { metricsReport } from "./metrics-report";
import { MetricsReportFiltersSchema, MetricsReportRowSchema } from "./metrics-schemas";
import { StopsReportFiltersSchema, StopsReportRowSchema, stopsReport } from "./stops-report";

const optionalBody = <
  T extends
    | typeof MetricsReportFiltersSchema
    | typeof StopsReportFiltersSchema
    | typeof DowntimeReportFiltersSchema
    | typeof KpiReportFiltersSchema,
>(
  schema: T,
) => ({ required: false, content: { "application/json": { schema, example: {} } } });

/** A 200 of a report: one JSON page, or with `Accept: text/csv` every row as CSV. */
const pageOrCsv = <T extends z.ZodType>(schema: T, description: string) => ({
  description: `${description} With \`Accept: text/csv\`: every matching row as CSV.`,
  content: { "application/json": { schema }, ...csvContent },
});

/** The CSV answer of an export, refused with a 422 above the maximum. */
function csvAnswer(exported: CsvExport, filename: string): Response {
  checkCsvSize(exported.count);
  return csvResponse(exported.columns, exported.batches, filename);
}

const metricsRoute = publicRoute("reports.read", {
  method: "post",
  path: "/v1/reports/metrics",
  operationId: "getMetricsReport",
  tags: ["Reports"],
  summary: "Metrics report (OEE per machine and shift)",
  description:
    "One row per machine x shift instance of a definition with `isConsidered = true`, computed as " +
    "the service's metrics definitions say (times in minutes, ratios as fractions, null when a " +
    "denominator is 0). Every body field is optional and they combine with AND:\n\n" +
    "- `machines`: `search` (fuzzy on the machine name), `include`/`exclude` (machine ids);\n" +
    "- `shifts`: `include`/`exclude` (shift definition ids);\n" +
    "- `startDate` on the instance's start, `endDate` on its end, each with `after` (strictly), " +
    "`before` (strictly), `between` (the half-open window `[start, end)`) and `equal`.\n\n" +
    "Only instances that have started are listed. Without any date operator: the instances that " +
    "started in the last 7 days. A filter with no lower bound covers the 7 days before its upper " +
    "bound; a wider window may be given with both bounds (any length). " +
    "Ordered by instance start, then machine id. `shift.id` and `shiftIndicators.indicatorId` " +
    `are the instance id (stable). \`limit\` is 1 to ${MAX_LIMIT}. A change to a stop or a ` +
    "production log shows in the next call.",
  request: { body: optionalBody(MetricsReportFiltersSchema) },
  responses: {
    200: pageOrCsv(
      pagedResponseSchema("metrics", MetricsReportRowSchema, "MetricsReportPage"),
      "One page of report rows.",
    ),
    ...BARRIER_RESPONSE,
  },
});

const stopsRoute = publicRoute("reports.read", {
  method: "post",
  path: "/v1/reports/stops",
  operationId: "getStopsReport",
  tags: ["Reports"],
  summary: "Stops report",
  description:
    "One row per stop, with its classification (every field null when unclassified), machine " +
    "and shift instance (the instance of the machine containing the stop's start, considered or " +
    "not; null when none). Deleted stops and stops with `isIncludedInStops = false` are left out. " +
    "Every body field is optional and they combine with AND: `machines` (`search` fuzzy on the " +
    "name, `include`/`exclude` ids), `stopId` (`include`/`exclude` and numeric comparisons), " +
    "`startDate` on the stop's start and `endDate` on its end (`after` and `before` strictly, " +
    "`between` the half-open window `[start, end)`, `equal`; an open stop matches no `endDate` " +
    "operator). " +
    "`durationInMinutes` runs to now for an open stop. Ordered by `startTime`, then id. " +
    `\`limit\` is 1 to ${MAX_LIMIT}.`,
  request: { body: optionalBody(StopsReportFiltersSchema) },
  responses: {
    200: pageOrCsv(
      pagedResponseSchema("stops", StopsReportRowSchema, "StopsReportPage"),
      "One page of report rows.",
    ),
  },
});

const downtimeRoute = publicRoute("reports.read", {
  method: "post",
  path: "/v1/reports/downtime",
  operationId: "getDowntimeReport",
  tags: ["Reports"],
  summary: "Downtime report (a Pareto of stops by cause, machine, shift or day)",
  description:
    "The stops that `POST /v1/reports/stops` returns for the same `machines`, `startDate` and " +
    "`endDate` (plus an optional `isProgrammed`), grouped by `groupBy`, an ordered list of " +
    "`generalCause`, `specificCause`, `component`, `machine`, `shift` (the definition name of the " +
    "instance containing the stop's start) and `day` (its local date in the company's zone); " +
    'default `["generalCause"]`. Each row has its keys (`{id, name}` for causes and machines, ' +
    "null when unclassified or outside every shift), `stops`, `minutes` (the sum of their " +
    "`durationInMinutes`; an open stop runs to now), `share` of all minutes and " +
    "`cumulativeShare`, ranked by minutes, largest first (ties: more stops, then keys). " +
    `\`limit\` is 1 to ${MAX_LIMIT}.`,
  request: { body: optionalBody(DowntimeReportFiltersSchema) },
  responses: {
    200: pageOrCsv(
      pagedResponseSchema("downtime", DowntimeReportRowSchema, "DowntimeReportPage"),
      "One page of ranked groups.",
    ),
  },
});

const kpisRoute = publicRoute("reports.read", {
  method: "post",
  path: "/v1/reports/kpis",
  operationId: "getKpiReport",
  tags: ["Reports"],
  summary: "KPI report (OEE and its factors grouped by any dimension)",
  description:
    "The shift instances that `POST /v1/reports/metrics` covers for the same filters, grouped " +
    "by `groupBy`, an ordered list of `machine`, `shift` (name), `day`, `week` (ISO), `month` " +
    "(of the instance's start, local), `sku`, `operator` and `simpleWorkOrder`; default " +
    '`["machine"]`. Each row carries its keys, summed `minutes` and `counts`, and availability, ' +
    "effectiveness, quality, OEE, their net forms, TEEP, MTBF, MTTR and the scrap ratio, each " +
    "computed from the group's sums, never as an average of per-shift ratios. Time is attributed " +
    "to a SKU, operator or work order by the production log covering it (null where none does), " +
    "so the groups of one machine add up to the machine's row. Rows are ordered by their keys " +
    `(nulls last). \`limit\` is 1 to ${MAX_LIMIT}.`,
  request: { body: optionalBody(KpiReportFiltersSchema) },
  responses: {
    200: pageOrCsv(
      pagedResponseSchema("kpis", KpiReportRowSchema, "KpiReportPage"),
      "One page of groups.",
    ),
    ...BARRIER_RESPONSE,
  },
});

/**
 * The report routes, whose read barrier reaches the machines' realtime objects through
 * `heldWrites` (src/app.ts passes `heldWritesOf` of src/realtime/machine-stub.ts), so that
 * nothing below src/realtime/ names the object.
 */
export const reportsRoutes = (heldWrites: (env: Env) => FlushHeldWrites) =>
  createRouter()
    .openapi(metricsRoute, async (c) => {
      const filters = c.req.valid("json");
      const scope = scopeOf(c);
      if (wantsCsv(c)) {
        const barrier = (ids: readonly number[]) =>
          syncPendingMachines(heldWrites(c.env), scope, ids);
        return csvAnswer(await metricsCsv(scope, filters, Date.now(), barrier), "metrics.csv");
      }
      // The realtime barrier asks only the page's machines (see metricsReport).
      const page = await metricsReport(scope, filters, pageRequest(filters), Date.now(), (ids) =>
        syncPendingMachines(heldWrites(c.env), scope, ids),
      );
      return c.json(pageEnvelope("metrics", page), 200);
    })
    .openapi(stopsRoute, async (c) => {
      const filters = c.req.valid("json");
      const scope = scopeOf(c);
      if (wantsCsv(c)) {
        return csvAnswer(await stopsCsv(scope, filters, Date.now()), "stops.csv");
      }
      const page = await stopsReport(scope, filters, pageRequest(filters), Date.now());
      return c.json(pageEnvelope("stops", page), 200);
    })
    .openapi(downtimeRoute, async (c) => {
      const filters = c.req.valid("json");
      if (wantsCsv(c)) {
        return csvAnswer(await downtimeCsv(scopeOf(c), filters, Date.now()), "downtime.csv");
      }
      const page = await downtimeReport(scopeOf(c), filters, pageRequest(filters), Date.now());
      return c.json(pageEnvelope("downtime", page), 200);
    })
    .openapi(kpisRoute, async (c) => {
      const filters = c.req.valid("json");
      const scope = scopeOf(c);
      if (wantsCsv(c)) {
        const barrier = (ids: readonly number[]) =>
          syncPendingMachines(heldWrites(c.env), scope, ids);
        return csvAnswer(await kpiCsv(scope, filters, Date.now(), barrier), "kpis.csv");
      }
      const page = await kpiReport(scope, filters, pageRequest(filters), Date.now(), (ids) =>
        syncPendingMachines(heldWrites(c.env), scope, ids),
      );
      return c.json(pageEnvelope("kpis", page), 200);
    });
