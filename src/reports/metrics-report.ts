/**
 * The metrics report (`POST /v1/reports/metrics`): one row per machine x considered shift
 * instance (./covered-instances.ts: definitions with `isConsidered`, machines and shifts as
 * filtered, started, ending after the machine's first activity; 7 days by default, any window
 * up to `MAX_REPORT_INSTANCES`), ordered by start then machine, with the figures of ./oee.ts.
 * Work follows the page: the total and the page's instances come from calendar arithmetic,
 * only the page's instances are stored (for their ids), and only their logs and stops read
 * (./page-spans.ts). Nothing cached: a change shows in the next call.
 * docs/metrics.md ("The request"), docs/bounded-work.md ("Any range at once").
 */

import type { NamedScope } from "../db/company-scope";
import { emptyPage, type Page, type PageRequest } from "../http/pagination";
import { instanceKey, storedInstances } from "../shifts/materialize";
import { coveredInstances } from "./covered-instances";
import type { MetricsReportFilters, MetricsReportRow } from "./metrics-schemas";
import { computeProductionMetrics } from "./oee";
import { loadPageSpans } from "./page-spans";
import { toReportShift } from "./schemas";
import { computeShiftIndicators } from "./shift-time";

/**
 * One page of the metrics report.
 *
 * @param scope the caller (its company scopes every query and fills `company`).
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms.
 * @param beforeRead awaited with the page's machine ids before their logs and
 *   stops are read (the realtime read barrier, `src/durable/realtime-barrier.ts`).
 */
export async function metricsReport(
  scope: NamedScope,
  filters: MetricsReportFilters,
  page: PageRequest,
  now: number,
  beforeRead: (machineIds: readonly number[]) => Promise<void>,
): Promise<Page<MetricsReportRow>> {
  const companyId = scope.companyId;
  const covered = await coveredInstances(scope, filters, now);
  if (covered === null) return emptyPage(page);
  const { instances, machines } = covered;
  const totals = {
    totalCount: instances.total,
    totalPages: Math.ceil(instances.total / page.limit),
    currentPage: page.page,
  };
  // (page - 1) * limit can exceed 2^53 for absurd pages; any offset that large is past the end.
  const offset = Math.min((page.page - 1) * page.limit, Number.MAX_SAFE_INTEGER);
  const listed = instances.page(offset, page.limit);
  if (listed.length === 0) return { ...totals, rows: [] };
  // Only the page's instances are stored (their ids are the rows' stable ids).
  const planned = listed.map((i) => ({
    definitionId: i.definition.id,
    machineId: i.machineId,
    start: i.start,
    end: i.end,
  }));
  const stored = await storedInstances(scope.db, companyId, planned);
  const pageInstances = planned.map((p, k) => {
    const row = stored.get(instanceKey(p));
    if (!row) throw new Error(`Shift instance ${instanceKey(p)} was not stored`);
    return {
      ...p,
      id: row.id,
      machineName: machines.get(p.machineId)?.name ?? "",
      name: listed[k]?.definition.name ?? "",
    };
  });
  const pageMachines = [...new Set(pageInstances.map((i) => i.machineId))];
  await beforeRead(pageMachines);
  const spans = await loadPageSpans(scope, pageInstances);
  return {
    ...totals,
    rows: pageInstances.map((instance) => {
      const { machineId, start, end } = instance;
      const indicators = computeShiftIndicators(
        { start, end },
        spans.stopsOverlapping(machineId, start, end),
        spans.logsOverlapping(machineId, start, end),
        now,
      );
      // docs/metrics.md: a production log belongs to the instance that contains its start.
      const ownLogs = spans.logsStartingIn(machineId, start, end);
      return {
        company: { id: companyId, name: scope.companyName },
        machine: { id: instance.machineId, name: instance.machineName },
        shift: toReportShift(instance, now),
        shiftIndicators: { indicatorId: instance.id, ...indicators },
        productionMetrics: computeProductionMetrics(indicators, ownLogs),
      };
    }),
  };
}
