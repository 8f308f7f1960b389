/**
 * Where an export's rows come from: each dataset read batch by batch, from a cursor that
 * can be stored and resumed, by its endpoint's own query function (the production-log
 * search, the stops, metrics and KPI reports, the signal store's reads), so that a file
 * holds exactly the rows the JSON endpoint gives for the same filters (docs/exports.md).
 *
 * A batch is columnar (one array per column, in the order of `exportColumns`): a signal
 * export moves millions of points, and one object per point would cost more than the read.
 */
import { z } from "@hono/zod-openapi";
import type { NamedScope } from "../db/company-scope";
import { syncPendingMachines } from "../durable/realtime-barrier";
import type { Env } from "../env";
import type { Page } from "../http/pagination";
import { heldWritesOf } from "../realtime/machine-stub";
import { CSV_BATCH_ROWS } from "../reports/csv-export";
import { kpiGroups } from "../reports/kpi-report";
import { KPI_KEYS, type KpiReportFilters, KpiReportRowSchema } from "../reports/kpi-schemas";
import { metricsReport } from "../reports/metrics-report";
import { type MetricsReportFilters, MetricsReportRowSchema } from "../reports/metrics-schemas";
import {
  type StopsReportFilters,
  StopsReportRowSchema,
  stopsReport,
} from "../reports/stops-report";
import { filterLogs, machinesFilterCanTouch } from "../resources/production-logs/read";
import type { ProductionLogFilters } from "../resources/production-logs/schemas";
import { ProductionLogSchema } from "../resources/production-logs/schemas";
import type { AggFunction } from "../resources/signals/aggregate";
import { readSeries } from "../resources/signals/data";
import { isSignalListed, type ListedSignal } from "../resources/signals/queries";
import { type Column, flatColumns, valueAt } from "./columns";
import type { ExportFormat } from "./schemas";

/**
 * Points one signal batch holds at most: its window spans this many buckets. Its read is one
 * call of the signal store, which aggregates the batch at once (and the exports object then
 * receives it at once): 25,000 rather than 100,000 keeps those pieces, and a Parquet step's
 * memory, a quarter as large (docs/benchmarks.md, "Bulk exports").
 */
const SIGNAL_BATCH_POINTS = 25_000;

/** The rows of one signal-export point, as the signal-data answer names its fields. */
const SignalPointSchema = z.object({
  machine_uuid: z.string(),
  public_id: z.string(),
  name: z.string(),
  timestamp: z.string().openapi({ format: "date-time" }),
  value: z.number(),
});

/** The signals and window of a signal export, resolved when it was started. */
export interface SignalSelection {
  signals: Pick<ListedSignal, "id" | "machineId" | "machineUuid" | "publicId" | "name">[];
  from: number;
  to: number;
  bucketWidthMs: number;
  fn: AggFunction;
}

/** What an export reads, fixed when it starts: stored with it, in JSON. */
export type ExportSpec = {
  format: ExportFormat;
  /** Most rows one file holds. */
  rowsPerFile: number;
  /** The instant the rows are read as of (reports: `now`), ms. */
  now: number;
  /** The company, as the report rows show it. */
  company: { id: number; name: string; timezone: string };
} & (
  | { dataset: "signals"; selection: SignalSelection }
  | { dataset: "production_logs"; filters: ProductionLogFilters }
  | { dataset: "stops"; filters: StopsReportFilters }
  | { dataset: "metrics"; filters: MetricsReportFilters }
  | { dataset: "kpis"; filters: KpiReportFilters }
);

/** Where the next batch starts: a page of a paged dataset, or a signal and an instant. */
export type Cursor = { page: number } | { signal: number; from: number };

/**
 * A signal a signal export stopped reading because it was deleted (or its machine was) after
 * the export started: its index in the selection, and the start of the first batch not read
 * (the files hold its points before it).
 */
interface LeftOut {
  signal: number;
  from: number;
}

/** Rows as columns, in the order of the dataset's columns. */
export interface ColumnBatch {
  length: number;
  columns: unknown[][];
}

/** The columns of a dataset's files (a KPI export: the keys of its `groupBy`, then the figures). */
export function exportColumns(spec: ExportSpec): Column[] {
  switch (spec.dataset) {
    case "signals":
      return flatColumns(SignalPointSchema);
    case "production_logs":
      return flatColumns(ProductionLogSchema);
    case "stops":
      return flatColumns(StopsReportRowSchema);
    case "metrics":
      return flatColumns(MetricsReportRowSchema);
    case "kpis": {
      const keys = new Set<string>(spec.filters.groupBy ?? ["machine"]);
      const all: readonly string[] = KPI_KEYS;
      return flatColumns(KpiReportRowSchema, (f) => !all.includes(f) || keys.has(f));
    }
  }
}

/** The cursor of an export's first batch. */
export function firstCursor(spec: ExportSpec): Cursor {
  return spec.dataset === "signals" ? { signal: 0, from: spec.selection.from } : { page: 1 };
}

/** Nested rows (the JSON answers' shape) as columns. */
function toColumns(rows: readonly unknown[], columns: readonly Column[]): ColumnBatch {
  return {
    length: rows.length,
    columns: columns.map((c) => rows.map((row) => valueAt(row, c.path))),
  };
}

/** What reading a batch needs: the bindings and the company's scope (its D1 session). */
export interface SourceContext {
  env: Env;
  scope: NamedScope;
}

/**
 * Reads the batch at `cursor`.
 *
 * @returns the batch and the cursor of the next one (null after the last); for a signal
 *   no longer listed, an empty batch, the next signal's cursor and what was left out.
 * @throws whatever the endpoint's query throws (an ApiError 503 of the realtime barrier:
 *   the caller retries the batch later).
 */
export async function readBatch(
  ctx: SourceContext,
  spec: ExportSpec,
  cursor: Cursor,
  columns: readonly Column[],
): Promise<{ batch: ColumnBatch; next: Cursor | null; leftOut?: LeftOut }> {
  if (spec.dataset === "signals") {
    if (!("signal" in cursor)) throw new Error("a signal export resumes at a signal cursor");
    return readSignalBatch(ctx, spec.selection, cursor);
  }
  if (!("page" in cursor)) throw new Error("a paged export resumes at a page cursor");
  const { env, scope } = ctx;
  const request = { page: cursor.page, limit: CSV_BATCH_ROWS };
  const barrier = (ids: readonly number[]) => syncPendingMachines(heldWritesOf(env), scope, ids);
  let page: Page<unknown>;
  switch (spec.dataset) {
    case "production_logs":
      await syncPendingMachines(heldWritesOf(env), scope, machinesFilterCanTouch(spec.filters));
      page = await filterLogs(scope, spec.filters, request);
      break;
    case "stops":
      page = await stopsReport(scope, spec.filters, request, spec.now);
      break;
    case "metrics":
      page = await metricsReport(scope, spec.filters, request, spec.now, barrier);
      break;
    case "kpis": {
      // Every group at once, as the KPI CSV: the report holds its groups anyway.
      const rows = await kpiGroups(scope, spec.filters, spec.now, barrier);
      return { batch: toColumns(rows, columns), next: null };
    }
  }
  const next = cursor.page < page.totalPages ? { page: cursor.page + 1 } : null;
  return { batch: toColumns(page.rows, columns), next };
}

/** The end of the batch that starts at `from`: at most `SIGNAL_BATCH_POINTS` buckets on. */
function batchEnd(selection: SignalSelection, from: number): number {
  const width = selection.bucketWidthMs;
  // Batches end on bucket boundaries, so that no bucket is split between two reads.
  const end = (Math.floor(from / width) + SIGNAL_BATCH_POINTS) * width;
  return Math.min(selection.to, end);
}

/** The cursor after the signal at `cursor.signal` ends at `to` (null after the last). */
function afterSignalWindow(
  selection: SignalSelection,
  cursor: { signal: number },
  to: number,
): Cursor | null {
  if (to < selection.to) return { signal: cursor.signal, from: to };
  return cursor.signal + 1 < selection.signals.length
    ? { signal: cursor.signal + 1, from: selection.from }
    : null;
}

/** An empty batch of a signal export's five columns. */
const noPoints = (): ColumnBatch => ({ length: 0, columns: [[], [], [], [], []] });

async function readSignalBatch(
  ctx: SourceContext,
  selection: SignalSelection,
  cursor: { signal: number; from: number },
): Promise<{ batch: ColumnBatch; next: Cursor | null; leftOut?: LeftOut }> {
  const signal = selection.signals[cursor.signal];
  const { from } = cursor;
  if (!signal) return { batch: noPoints(), next: null };
  if (!(await isSignalListed(ctx.scope, signal.id))) {
    // Deleted meanwhile: none of its points from here on; the export goes on with the next.
    const next = afterSignalWindow(selection, cursor, selection.to);
    return { batch: noPoints(), next, leftOut: { signal: cursor.signal, from } };
  }
  const to = batchEnd(selection, from);
  const series = await readSeries(
    ctx.env,
    { companyId: ctx.scope.companyId, machineId: signal.machineId, signalId: signal.id },
    { from, to, bucketWidthMs: selection.bucketWidthMs },
    selection.fn,
  );
  const n = series.buckets.length;
  const next = afterSignalWindow(selection, cursor, to);
  return {
    batch: {
      length: n,
      columns: [
        new Array(n).fill(signal.machineUuid),
        new Array(n).fill(signal.publicId),
        new Array(n).fill(signal.name),
        series.buckets,
        series.values,
      ],
    },
    next,
  };
}

/**
 * The share of an export done once the rows before `cursor` are written, 0 to 1: rows over
 * the total when it is known, else (signals) signals done plus the part of the window read.
 */
export function progressAt(
  spec: ExportSpec,
  cursor: Cursor | null,
  rowsDone: number,
  totalRows: number | null,
): number {
  if (cursor === null) return 1;
  if (spec.dataset === "signals" && "signal" in cursor) {
    const { signals, from, to } = spec.selection;
    if (signals.length === 0) return 1;
    return Math.min(1, (cursor.signal + (cursor.from - from) / (to - from)) / signals.length);
  }
  if (totalRows === null || totalRows === 0) return 0;
  return Math.min(1, rowsDone / totalRows);
}
