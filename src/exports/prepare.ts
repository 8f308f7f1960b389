/**
 * Starting an export, in the request: the checks a client should hear about at once (a 422
 * or a 404 now, not a failed export later), and what the export will read, fixed as of now
 * (./sources.ts `ExportSpec`). The paged datasets are counted by their endpoint's first
 * page (one row), which also runs the endpoint's own refusals of the filters.
 */
import type { NamedScope } from "../db/company-scope";
import { syncPendingMachines } from "../durable/realtime-barrier";
import type { Env } from "../env";
import { ApiError, unprocessable, type ValidationIssue } from "../http/errors";
import { heldWritesOf } from "../realtime/machine-stub";
import { metricsReport } from "../reports/metrics-report";
import { stopsReport } from "../reports/stops-report";
import { filterLogs } from "../resources/production-logs/read";
import { listedSignalsOf } from "../resources/signals/queries";
import { AGG_UNIT_MS, bucketsTouched } from "../resources/signals/window";
import {
  type ExportRequest,
  MAX_EXPORT_FILES,
  MAX_EXPORT_ROWS,
  type SignalExportFilters,
} from "./schemas";
import type { ExportSpec, SignalSelection } from "./sources";

/** Most signals one export may read (its selection is kept with it). */
const MAX_EXPORT_SIGNALS = 5_000;

/**
 * Most rows an export may hold: `MAX_EXPORT_ROWS`, and `MAX_EXPORT_FILES` files of its
 * `rowsPerFile`.
 */
function maxExportRows(rowsPerFile: number): number {
  return Math.min(MAX_EXPORT_ROWS, MAX_EXPORT_FILES * rowsPerFile);
}

/** The row count an export may not pass, as a 422 at `loc`. */
function tooManyRows(loc: (string | number)[], rows: string, rowsPerFile: number) {
  return unprocessable(
    loc,
    `The export would hold ${rows} rows; at most ${maxExportRows(rowsPerFile)} are allowed ` +
      `(${MAX_EXPORT_ROWS} in all, ${MAX_EXPORT_FILES} files of rowsPerFile): narrow the ` +
      "filters, split it into several exports or raise rowsPerFile",
    "export_too_large",
  );
}

/**
 * The signals and window of a signal export.
 *
 * @throws ApiError 422 at `["body", "filters", "machines" | "signals", i]` for an id that
 *   names no listed machine or signal of the company; 422 when the window could hold more
 *   than `MAX_EXPORT_ROWS` points or names more than `MAX_EXPORT_SIGNALS` signals.
 */
async function selectSignals(
  scope: NamedScope,
  filters: SignalExportFilters,
  rowsPerFile: number,
): Promise<SignalSelection> {
  const machineUuids = filters.machines ?? [];
  const publicIds = filters.signals ?? [];
  const signals = await listedSignalsOf(scope, machineUuids, publicIds);
  const machinesFound = new Set(signals.map((s) => s.machineUuid));
  const signalsFound = new Set(signals.map((s) => s.publicId));
  const unknown: ValidationIssue[] = [
    ...machineUuids.map((id, i) => [machinesFound.has(id), "machines", i, "machine"] as const),
    ...publicIds.map((id, i) => [signalsFound.has(id), "signals", i, "signal"] as const),
  ]
    .filter(([found]) => !found)
    .map(([, field, i, what]) => ({
      loc: ["body", "filters", field, i],
      msg: `No listed ${what} of the company has this id`,
      type: "not_found",
    }));
  if (unknown.length > 0) throw new ApiError(422, unknown);
  if (signals.length > MAX_EXPORT_SIGNALS) {
    throw unprocessable(
      ["body", "filters", "machines"],
      `The export names ${signals.length} signals; at most ${MAX_EXPORT_SIGNALS} are allowed`,
      "export_too_large",
    );
  }
  const bucketWidthMs = filters.agg_period * AGG_UNIT_MS[filters.agg_unit];
  const points =
    signals.length * bucketsTouched(filters.start_time, filters.end_time, bucketWidthMs);
  if (points > maxExportRows(rowsPerFile)) {
    throw tooManyRows(["body", "filters", "end_time"], `up to ${points}`, rowsPerFile);
  }
  return {
    signals: signals.map(({ id, machineId, machineUuid, publicId, name }) => ({
      id,
      machineId,
      machineUuid,
      publicId,
      name,
    })),
    from: filters.start_time,
    to: filters.end_time,
    bucketWidthMs,
    fn: filters.agg_function,
  };
}

/**
 * What an export will read, and how many rows when that is known in advance.
 *
 * @param scope the caller's company (its name and zone are kept for the report rows).
 * @param request the validated body.
 * @param now the export's instant, ms: the reports are computed as of it.
 * @throws ApiError 422 (the endpoint's own refusals, unknown signal ids, too many rows).
 */
export async function prepareExport(
  env: Env,
  scope: NamedScope,
  request: ExportRequest,
  now: number,
): Promise<{ spec: ExportSpec; totalRows: number | null }> {
  const base = {
    format: request.format,
    rowsPerFile: request.rowsPerFile,
    now,
    company: { id: scope.companyId, name: scope.companyName, timezone: scope.timezone },
  };
  const first = { page: 1, limit: 1 };
  let totalRows: number | null;
  let spec: ExportSpec;
  switch (request.dataset) {
    case "signals":
      return {
        spec: {
          ...base,
          dataset: "signals",
          selection: await selectSignals(scope, request.filters, request.rowsPerFile),
        },
        totalRows: null,
      };
    case "production_logs": {
      const filters = request.filters ?? {};
      totalRows = (await filterLogs(scope, filters, first)).totalCount;
      spec = { ...base, dataset: "production_logs", filters };
      break;
    }
    case "stops": {
      const filters = request.filters ?? {};
      totalRows = (await stopsReport(scope, filters, first, now)).totalCount;
      spec = { ...base, dataset: "stops", filters };
      break;
    }
    case "metrics": {
      const filters = request.filters ?? {};
      const barrier = (ids: readonly number[]) =>
        syncPendingMachines(heldWritesOf(env), scope, ids);
      totalRows = (await metricsReport(scope, filters, first, now, barrier)).totalCount;
      spec = { ...base, dataset: "metrics", filters };
      break;
    }
    case "kpis":
      // Its groups are known only once computed, which is the export's own work.
      return {
        spec: { ...base, dataset: "kpis", filters: request.filters ?? {} },
        totalRows: null,
      };
  }
  if (totalRows > maxExportRows(request.rowsPerFile)) {
    throw tooManyRows(["body", "filters"], String(totalRows), request.rowsPerFile);
  }
  return { spec, totalRows };
}
