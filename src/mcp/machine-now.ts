/**
 * The `machine_now` tool's answer: what `GET /v1/realtime/{machine_id}` gives, with the
 * running shift's row of the metrics report (the live OEE so far) and the machine's open
 * stop from the stops report: the three REST answers a plant board puts side by side.
 */
import { z } from "@hono/zod-openapi";
import { syncPendingMachines } from "../durable/realtime-barrier";
import { heldWritesOf } from "../realtime/machine-stub";
import { RealtimeStateSchema } from "../realtime/schemas";
import { readRealtimeState } from "../realtime/state";
import { metricsReport } from "../reports/metrics-report";
import { MetricsReportFiltersSchema, MetricsReportRowSchema } from "../reports/metrics-schemas";
import {
  StopsReportFiltersSchema,
  StopsReportRowSchema,
  stopsReport,
} from "../reports/stops-report";
import type { ToolContext } from "./tool";

/** The scope that shows the report figures beside the realtime state. */
const REPORTS_SCOPE = "reports.read";

export const MachineNowSchema = z.object({
  realtime: RealtimeStateSchema.openapi({
    description:
      "As GET /v1/realtime/{machine_id}: the running shift instance, the current SKU segment " +
      "(SKU, work order, quantity), the operators assigned and the production counted so far.",
  }),
  metrics: MetricsReportRowSchema.or(z.null()).openapi({
    description:
      "The running shift instance's row of the metrics report, computed up to now: times in " +
      "minutes, availability, effectiveness, quality and OEE as fractions (0..1). Null when " +
      "the instance is not considered for OEE, or when the credential lacks reports.read.",
  }),
  currentStop: StopsReportRowSchema.or(z.null()).openapi({
    description:
      "The machine's stop in progress (its latest stop, still open: endTime null) as a row of " +
      "the stops report, with its classification (the reason given at the machine or by the " +
      "plant's systems; all null while it waits for one); null when the machine is not " +
      "stopped, or when the credential lacks reports.read.",
  }),
  reportsShown: z.boolean().openapi({
    description:
      "false when the credential lacks reports.read: metrics and currentStop are then null.",
  }),
});

type MachineNow = z.infer<typeof MachineNowSchema>;

/**
 * The realtime state of one machine of the credential's company, with the live OEE of its
 * running shift and its open stop when the credential holds `reports.read`.
 *
 * @param machineId the machine's id (`GET /v1/machines`).
 * @throws ApiError 404 for an unknown machine or another company's; 409 when it runs no shift.
 */
export async function machineNow(ctx: ToolContext, machineId: number): Promise<MachineNow> {
  const { env, scope, principal } = ctx;
  const realtime = await readRealtimeState(env, scope, machineId);
  if (!principal.scopes.has(REPORTS_SCOPE)) {
    return { realtime, metrics: null, currentStop: null, reportsShown: false };
  }
  const now = Date.now();
  // The same filters a partner would send to POST /v1/reports/metrics and /v1/reports/stops.
  const metricsPage = await metricsReport(
    scope,
    MetricsReportFiltersSchema.parse({
      machines: { include: [machineId] },
      startDate: { equal: realtime.shift.start },
    }),
    { page: 1, limit: 10 },
    now,
    (ids) => syncPendingMachines(heldWritesOf(env), scope, ids),
  );
  const metrics =
    metricsPage.rows.find((row) => row.shiftIndicators.indicatorId === realtime.shift.id) ?? null;
  const stopFilters = StopsReportFiltersSchema.parse({ machines: { include: [machineId] } });
  // Ordered by start: the count first, then the last row alone (two bounded queries).
  const counted = await stopsReport(scope, stopFilters, { page: 1, limit: 1 }, now);
  const latest =
    counted.totalCount === 0
      ? undefined
      : (await stopsReport(scope, stopFilters, { page: counted.totalCount, limit: 1 }, now))
          .rows[0];
  const currentStop = latest && latest.stop.endTime === null ? latest : null;
  return { realtime, metrics, currentStop, reportsShown: true };
}
