/**
 * The reports as CSV exports (`Accept: text/csv`, src/http/csv.ts): every row
 * that matches the filters, in the JSON answer's order, produced batch by batch
 * by the same report functions as the JSON pages, so the two never differ.
 *
 * The metrics and stops reports are read a page of `CSV_BATCH_ROWS` at a time
 * (the first page also gives the count, checked against the maximum before any
 * row is sent); the grouped reports (downtime, KPIs) hold their groups anyway
 * and are cut into batches.
 */

import type { CompanyScope, NamedScope } from "../db/company-scope";
import { csvColumns, inBatches } from "../http/csv";
import type { Page } from "../http/pagination";
import { downtimeGroups } from "./downtime-report";
import {
  DOWNTIME_KEYS,
  type DowntimeReportFilters,
  DowntimeReportRowSchema,
} from "./downtime-schemas";
import { kpiGroups } from "./kpi-report";
import { KPI_KEYS, type KpiReportFilters, KpiReportRowSchema } from "./kpi-schemas";
import { metricsReport } from "./metrics-report";
import { type MetricsReportFilters, MetricsReportRowSchema } from "./metrics-schemas";
import { type StopsReportFilters, StopsReportRowSchema, stopsReport } from "./stops-report";

/** Rows computed and sent together (a page of the report functions). */
export const CSV_BATCH_ROWS = 500;

/** What a CSV answer is made of: its columns, its row count and its rows by batch. */
export interface CsvExport {
  columns: string[];
  count: number;
  batches: AsyncIterable<readonly unknown[]>;
}

/** Pages 1, 2, ... of a paged report: the first is read now (for the count), the rest as read. */
async function pagedExport<Row>(
  columns: string[],
  pageAt: (page: number) => Promise<Page<Row>>,
): Promise<CsvExport> {
  const first = await pageAt(1);
  async function* batches(): AsyncGenerator<readonly Row[]> {
    yield first.rows;
    for (let page = 2; page <= first.totalPages; page += 1) yield (await pageAt(page)).rows;
  }
  return { columns, count: first.totalCount, batches: batches() };
}

/**
 * Every row of the metrics report for `filters` (`page` and `limit` ignored).
 *
 * @param beforeRead the realtime read barrier (as for a JSON page).
 */
export function metricsCsv(
  scope: NamedScope,
  filters: MetricsReportFilters,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<CsvExport> {
  return pagedExport(csvColumns(MetricsReportRowSchema), (page) =>
    metricsReport(scope, filters, { page, limit: CSV_BATCH_ROWS }, now, beforeRead),
  );
}

/** Every row of the stops report for `filters` (`page` and `limit` ignored). */
export function stopsCsv(
  scope: NamedScope,
  filters: StopsReportFilters,
  now: number,
): Promise<CsvExport> {
  return pagedExport(csvColumns(StopsReportRowSchema), (page) =>
    stopsReport(scope, filters, { page, limit: CSV_BATCH_ROWS }, now),
  );
}

/** Every group of the downtime report; columns: the `groupBy` keys, then the figures. */
export async function downtimeCsv(
  scope: CompanyScope,
  filters: DowntimeReportFilters,
  now: number,
): Promise<CsvExport> {
  const keys = new Set<string>(filters.groupBy ?? ["generalCause"]);
  const all: readonly string[] = DOWNTIME_KEYS;
  const rows = await downtimeGroups(scope, filters, now);
  return {
    columns: csvColumns(DowntimeReportRowSchema, (f) => !all.includes(f) || keys.has(f)),
    count: rows.length,
    batches: inBatches(rows),
  };
}

/** Every group of the KPI report; columns: the `groupBy` keys, then the figures. */
export async function kpiCsv(
  scope: CompanyScope,
  filters: KpiReportFilters,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<CsvExport> {
  const keys = new Set<string>(filters.groupBy ?? ["machine"]);
  const all: readonly string[] = KPI_KEYS;
  const rows = await kpiGroups(scope, filters, now, beforeRead);
  return {
    columns: csvColumns(KpiReportRowSchema, (f) => !all.includes(f) || keys.has(f)),
    count: rows.length,
    batches: inBatches(rows),
  };
}
