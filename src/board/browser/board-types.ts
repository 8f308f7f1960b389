/**
 * The shapes the board reads, from the public API's generated types (clients/typescript,
 * made from `/openapi.json`): a field the API renames or drops fails `npm run typecheck`
 * here rather than in a browser. And what the board derives from them.
 */
import type { components } from "@production-monitoring/client";

type Schemas = components["schemas"];

export type Machine = Schemas["Machine"];
export type RealtimeState = Schemas["RealtimeState"];
export type MetricsRow = Schemas["MetricsReportRow"];
export type StopsRow = Schemas["StopsReportRow"];
export type StopsFilters = Schemas["StopsReportFilters"];
export type Stop = Schemas["Stop"];
export type StopClassification = Schemas["StopClassification"];
export type StopCauseCatalog = Schemas["StopCauseCatalog"];
export type StopReasonWrite = Schemas["RealtimeStopReason"];
export type ProductionLog = Schemas["ProductionLog"];
export type LiveEvent = Schemas["StreamEvent"];
export type StopEventData = Schemas["StopEvent"];
export type StopClassifiedEventData = Schemas["StopClassifiedEvent"];
export type StopUnclassifiedEventData = Schemas["StopUnclassifiedEvent"];

/**
 * Whether a metrics row's machine ran above its nominal speed: the row's
 * `productionMetrics.aboveNominalSpeed` (effectiveness above 1; the API keeps the true
 * ratio, docs/metrics.md), which says the nominal speed is set too low, not that the
 * machine did better than possible.
 */
export function aboveNominalSpeed(row: MetricsRow | undefined): boolean {
  return row?.productionMetrics.aboveNominalSpeed === true;
}
