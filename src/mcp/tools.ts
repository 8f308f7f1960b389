/**
 * The MCP tools: one declaration each, on the REST twin's own schemas and functions. A new
 * read is one more `defineTool({...})` in `MCP_TOOLS` (docs/mcp.md, "Adding a tool").
 *
 * Every description states the units an assistant must not guess: durations in minutes,
 * ratios as fractions (0..1, not percent), instants in ISO 8601 UTC, shifts defined in the
 * company's local time (its time zone is in the server's instructions).
 */
import { z } from "@hono/zod-openapi";
import { listMachines } from "../db/machines";
import { syncPendingMachines } from "../durable/realtime-barrier";
import { pagedResponseSchema, pageEnvelope, pageRequest } from "../http/pagination";
import { heldWritesOf } from "../realtime/machine-stub";
import { MachineIdParam } from "../realtime/schemas";
import { downtimeReport } from "../reports/downtime-report";
import { DowntimeReportFiltersSchema, DowntimeReportRowSchema } from "../reports/downtime-schemas";
import { kpiReport } from "../reports/kpi-report";
import { KpiReportFiltersSchema, KpiReportRowSchema } from "../reports/kpi-schemas";
import { metricsReport } from "../reports/metrics-report";
import { MetricsReportFiltersSchema, MetricsReportRowSchema } from "../reports/metrics-schemas";
import {
  StopsReportFiltersSchema,
  StopsReportRowSchema,
  stopsReport,
} from "../reports/stops-report";
import { MachineSchema } from "../resources/machines/schemas";
import { filterLogs, machinesFilterCanTouch } from "../resources/production-logs/read";
import {
  ProductionLogFiltersSchema,
  ProductionLogSchema,
} from "../resources/production-logs/schemas";
import { signalData } from "../resources/signals/data";
import { SignalDataSchema, Uuid } from "../resources/signals/schemas";
import { seriesJson } from "../resources/signals/series-json";
import { MAX_POINTS, MAX_WINDOW_MS, signalWindowQueryShape } from "../resources/signals/window";
import { DAY_MS } from "../time/units";
import { MachineNowSchema, machineNow } from "./machine-now";
import { defineTool, type McpTool } from "./tool";

const UNITS =
  "Instants are ISO 8601 in UTC; shifts follow the company's local time (its time zone is in " +
  "the server instructions).";

const PAGING =
  "Paged: `page` from 1, `limit` 1 to 100 (default 10); the answer gives totalCount and " +
  "totalPages, so ask for the next page rather than a larger window.";

/** A count with its noun, singular for 1: `1 operator`, `2 operators`, `0 operators`. */
function counted(n: number, [one, many]: readonly [string, string]): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `totalCount` rows, `n` on this page: the words of every paged summary. */
function pageSummary(
  what: readonly [string, string],
  page: { totalCount: number; currentPage: number; totalPages: number },
  n: number,
): string {
  if (page.totalCount === 0) return `No ${what[1]} match.`;
  return `${counted(n, what)} on page ${page.currentPage} of ${page.totalPages} (${page.totalCount} in all).`;
}

/** Every tool of the server, in the order `tools/list` shows them. */
export const MCP_TOOLS: readonly McpTool[] = [
  defineTool({
    name: "list_machines",
    title: "List machines",
    scope: "machines.read",
    description:
      "Every machine of the company, by id (as GET /v1/machines). `id` is what the reports, " +
      "machine_now and production logs take; `uuid` is what signal_data takes (null: the " +
      "machine has no signals).",
    input: z.object({}).strict(),
    output: z.object({ machines: z.array(MachineSchema) }),
    run: async (ctx) => ({ machines: await listMachines(ctx.scope) }),
    summary: ({ machines }) =>
      `${counted(machines.length, ["machine", "machines"])}: ${machines.map((m) => `${m.name} (id ${m.id})`).join(", ")}.`,
  }),
  defineTool({
    name: "machine_now",
    title: "What a machine is doing now",
    scope: "realtime.read",
    description:
      "The shift instance a machine is running now, its current SKU and work order, the " +
      "operators assigned, the pieces counted so far (as GET /v1/realtime/{machine_id}); with " +
      "reports.read also the running shift's live OEE row (times in minutes; availability, " +
      "effectiveness, quality, OEE as fractions 0..1, computed up to now) and the stop in " +
      `progress. A machine that runs no shift now is an error (409). ${UNITS}`,
    input: MachineIdParam,
    output: MachineNowSchema,
    run: (ctx, { machine_id }) => machineNow(ctx, machine_id),
    summary: ({ realtime, metrics, currentStop }) => {
      const parts = [
        `${realtime.machine.name} runs shift "${realtime.shift.name}" (${realtime.shift.start} to ${realtime.shift.end})`,
        realtime.current
          ? `SKU ${realtime.current.sku.sku}${realtime.current.simpleWorkOrder ? `, work order ${realtime.current.simpleWorkOrder.name}` : ""}`
          : "no SKU running",
        counted(realtime.operators.length, ["operator", "operators"]),
        `count ${realtime.production.count}`,
      ];
      const oee = metrics?.productionMetrics.oee;
      if (metrics) parts.push(oee == null ? "no OEE yet" : `OEE so far ${oee.toFixed(3)}`);
      if (currentStop) {
        const reason = currentStop.classification.generalCause.name;
        parts.push(
          `stopped since ${currentStop.stop.startTime}, ` +
            (reason ? `reason: ${reason}` : "reason not given"),
        );
      }
      return `${parts.join("; ")}.`;
    },
  }),
  defineTool({
    name: "metrics_report",
    title: "OEE per machine and shift",
    scope: "reports.read",
    description:
      "One row per machine x shift instance considered for OEE (as POST /v1/reports/metrics): " +
      "shiftIndicators (availableTime, downtimes, runTime parts, in minutes) and " +
      "productionMetrics (availability, netAvailability, effectiveness, quality, oee, netOee as " +
      "fractions 0..1, null when a denominator is 0 (no production: no quality); effectiveness " +
      "may exceed 1; minutes lost by " +
      "low speed and low quality). The definitions are in the resource docs://metrics. Without " +
      "a date filter: the instances started in the last 7 days; filters `machines` (ids or " +
      `fuzzy name), \`shifts\`, \`startDate\`/\`endDate\` (after, before, between, equal). ${PAGING} ${UNITS}`,
    input: MetricsReportFiltersSchema,
    output: pagedResponseSchema("metrics", MetricsReportRowSchema, "MetricsReportPage"),
    run: async (ctx, filters) => {
      const { env, scope } = ctx;
      const page = await metricsReport(scope, filters, pageRequest(filters), Date.now(), (ids) =>
        syncPendingMachines(heldWritesOf(env), scope, ids),
      );
      return pageEnvelope("metrics", page);
    },
    summary: (page) =>
      pageSummary(["machine x shift row", "machine x shift rows"], page, page.metrics.length),
  }),
  defineTool({
    name: "stops_report",
    title: "Stops",
    scope: "reports.read",
    description:
      "One row per stop (as POST /v1/reports/stops), ordered by start: startTime, endTime (null " +
      "while open), durationInMinutes (to now when open), isProgrammed, whether it counts in " +
      "availability, origin (detected from the machine's signals, or operatorApi: recorded " +
      "through the operator API; detectedDowntime is the machine's downtime a recorded stop " +
      "took in), its classification (general cause, specific cause, component; null fields " +
      "when unclassified), machine and the shift instance containing its start. Filters " +
      `\`machines\`, \`stopId\`, \`startDate\`/\`endDate\`, \`origin\`. ${PAGING} ${UNITS}`,
    input: StopsReportFiltersSchema,
    output: pagedResponseSchema("stops", StopsReportRowSchema, "StopsReportPage"),
    run: async (ctx, filters) => {
      const page = await stopsReport(ctx.scope, filters, pageRequest(filters), Date.now());
      return pageEnvelope("stops", page);
    },
    summary: (page) => {
      const minutes = page.stops.reduce((sum, row) => sum + row.stop.durationInMinutes, 0);
      return `${pageSummary(["stop", "stops"], page, page.stops.length)} ${minutes.toFixed(1)} minutes of stops on this page.`;
    },
  }),
  defineTool({
    name: "kpis_report",
    title: "KPIs grouped by machine, shift, day, week, month, SKU, operator or work order",
    scope: "reports.read",
    description:
      "As POST /v1/reports/kpis: the metrics report's shift instances grouped by `groupBy` " +
      "(an ordered list of machine, shift, day, week, month, sku, operator, simpleWorkOrder; " +
      "default machine), with times in minutes, counts in the SKU's unit, and availability, " +
      "effectiveness, quality, OEE, TEEP and scrapRatio as fractions 0..1; mtbf and mttr in " +
      "minutes. A group's ratios are ratios of its summed times and counts (defined in " +
      "docs://metrics), never averages of shift ratios; days, weeks and months follow the " +
      `company's local calendar. ${PAGING} ${UNITS}`,
    input: KpiReportFiltersSchema,
    output: pagedResponseSchema("kpis", KpiReportRowSchema, "KpiReportPage"),
    run: async ({ env, scope }, filters) => {
      const page = await kpiReport(scope, filters, pageRequest(filters), Date.now(), (ids) =>
        syncPendingMachines(heldWritesOf(env), scope, ids),
      );
      return pageEnvelope("kpis", page);
    },
    summary: (page) => pageSummary(["KPI group", "KPI groups"], page, page.kpis.length),
  }),
  defineTool({
    name: "downtime_pareto",
    title: "Downtime Pareto: where the stopped minutes went",
    scope: "reports.read",
    description:
      "As POST /v1/reports/downtime: the stops of the stops report grouped by `groupBy` (an " +
      "ordered list of generalCause, specificCause, component, machine, shift, day; default " +
      "generalCause; a null key is unclassified or outside every shift), ranked by minutes, " +
      "largest first, with `stops` (how many), `minutes`, and `share` and `cumulativeShare` of " +
      "all stopped minutes as fractions 0..1; an open stop runs to now. `origin` keeps the " +
      `detected stops or those recorded through the operator API. ${PAGING} ${UNITS}`,
    input: DowntimeReportFiltersSchema,
    output: pagedResponseSchema("downtime", DowntimeReportRowSchema, "DowntimeReportPage"),
    run: async ({ scope }, filters) => {
      const page = await downtimeReport(scope, filters, pageRequest(filters), Date.now());
      return pageEnvelope("downtime", page);
    },
    summary: (page) => {
      const top = page.downtime[0];
      const lead = top
        ? ` The largest group holds ${(top.share * 100).toFixed(1)} % of the minutes.`
        : "";
      return `${pageSummary(["downtime group", "downtime groups"], page, page.downtime.length)}${lead}`;
    },
  }),
  defineTool({
    name: "signal_data",
    title: "Aggregated samples of a signal",
    scope: "signals.read",
    description:
      "The samples of one signal of a machine in [start_time, end_time), reduced by " +
      "agg_function (avg, max, min, sum, count) in buckets agg_period x agg_unit wide (s, m, h, " +
      "d; aligned to the Unix epoch in UTC), as GET /v1/machines/{machine_uuid}/signals/" +
      "{public_id}. Each point's timestamp is its bucket's start; empty buckets are left out. " +
      `The window is at most ${MAX_WINDOW_MS / DAY_MS} days and ${MAX_POINTS.toLocaleString("en")} ` +
      "buckets (an error above, never truncated): widen the bucket for a longer look. The " +
      "machine's uuid comes from list_machines; a signal's public_id from GET " +
      `/v1/machines/{machine_uuid}/signals. Values are in the signal's own unit. ${UNITS}`,
    input: z.object({
      machine_uuid: Uuid.openapi({ description: "The machine's uuid (list_machines)." }),
      public_id: Uuid.openapi({ description: "The signal's public id." }),
      ...signalWindowQueryShape,
    }),
    output: SignalDataSchema,
    run: async (ctx, { machine_uuid, public_id, ...window }) => {
      const { head, series } = await signalData(
        ctx.env,
        ctx.scope,
        machine_uuid,
        public_id,
        window,
      );
      // The REST answer's own text, read back: the same bytes, the same numbers.
      return JSON.parse(seriesJson(head, series, false)) as z.input<typeof SignalDataSchema>;
    },
    summary: (out) => {
      const points = out.data ?? [];
      const first = points[0];
      const last = points[points.length - 1];
      return first && last
        ? `${counted(points.length, [`${out.agg_function} point`, `${out.agg_function} points`])} of ${out.name}, ${first.timestamp} to ${last.timestamp}.`
        : `No samples of ${out.name} in the window.`;
    },
  }),
  defineTool({
    name: "search_production_logs",
    title: "Search production logs",
    scope: "production_logs.read",
    description:
      "Production logs (as POST /v1/production-logs/filters): counts produced by a machine over " +
      "[start, end), with SKU, work order, type (total, correct, defects), nominalSpeed (items " +
      "per minute), countingFactor, sensorCount and whether the log is live (the running shift) " +
      "or reviewed. Filters `machines`, `skus` (ids or fuzzy), `start`/`end`, `count`, `type`, " +
      `\`isReviewed\`. Ordered by start. ${PAGING} ${UNITS}`,
    input: ProductionLogFiltersSchema,
    output: pagedResponseSchema("productionLogs", ProductionLogSchema, "ProductionLogPage"),
    run: async (ctx, filters) => {
      const { env, scope } = ctx;
      await syncPendingMachines(heldWritesOf(env), scope, machinesFilterCanTouch(filters));
      const page = await filterLogs(scope, filters, pageRequest(filters));
      return pageEnvelope("productionLogs", page);
    },
    summary: (page) =>
      pageSummary(["production log", "production logs"], page, page.productionLogs.length),
  }),
];
