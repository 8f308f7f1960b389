/**
 * The board's reads: each machine's realtime state (every 15 s or on its events), and the
 * reports behind the cards (every 30 s or on events): the metrics rows of the last two days
 * (the running shift's OEE, the shift instances of the timelines), the stops, and the
 * production logs of the timelines' window.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../../time/units";
import { allPages, answer, api, BoardApiError } from "./board-api";
import { state } from "./board-state";
import { boardStops } from "./board-stops";
import type { Machine, MetricsRow, ProductionLog, StopsFilters, StopsRow } from "./board-types";

/** How long a machine that runs no shift is left alone before it is asked again. */
const NO_SHIFT_RETRY_MS = 10 * MINUTE_MS;
/**
 * How far back the reports are read: shift instances (24 hours at most) that reach into the
 * last 24 hours start in the last 48, and so do the stops the cards show, but for a long one.
 */
const REPORT_WINDOW_MS = 48 * HOUR_MS;

async function inBatches<T>(items: T[], size: number, work: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) {
    await Promise.all(items.slice(i, i + size).map(work));
  }
}

/**
 * The realtime state of each machine. A machine that runs no shift (409) is asked again only
 * after NO_SHIFT_RETRY_MS, or at once when one of its events arrives: a machine without
 * shifts is not polled into an error every round.
 */
export async function refreshRealtime(machines: Machine[] = state.machines): Promise<void> {
  const now = Date.now();
  const due = machines.filter((m) => !((state.noShift.get(m.id) ?? 0) > now));
  await inBatches(due, 6, async (machine) => {
    const result = await api().GET("/v1/realtime/{machine_id}", {
      params: { path: { machine_id: machine.id } },
    });
    if (result.response.status === 409) {
      state.realtime.delete(machine.id);
      state.noShift.set(machine.id, Date.now() + NO_SHIFT_RETRY_MS);
      return;
    }
    state.noShift.delete(machine.id);
    state.realtime.set(machine.id, answer(result));
  });
}

async function metricsRows(ids: number[], after: string): Promise<MetricsRow[]> {
  return allPages(async (page) => {
    const body = { machines: { include: ids }, startDate: { after }, page, limit: 100 };
    const data = answer(await api().POST("/v1/reports/metrics", { body }));
    return { rows: data.metrics, totalPages: data.totalPages };
  });
}

/**
 * The stops the board shows: those that began in the report window, and the longer ones
 * that began before it and ended in the last 24 hours (two reads: the report filters a stop
 * by its start or by its end, and an open stop has no end).
 */
async function stopRows(ids: number[], now: number): Promise<StopsRow[]> {
  const windowStart = new Date(now - REPORT_WINDOW_MS).toISOString();
  const read = (filters: Pick<StopsFilters, "startDate" | "endDate">) =>
    allPages(async (page) => {
      const body = { machines: { include: ids }, ...filters, page, limit: 100 };
      const data = answer(await api().POST("/v1/reports/stops", { body }));
      return { rows: data.stops, totalPages: data.totalPages };
    });
  const [recent, long] = await Promise.all([
    read({ startDate: { after: windowStart } }),
    read({
      startDate: { before: windowStart },
      endDate: { after: new Date(now - DAY_MS).toISOString() },
    }),
  ]);
  return [...recent, ...long];
}

/**
 * The production logs that end in the timelines' window (the last 24 hours, and the running
 * shift), by machine; null when the key cannot read them (403).
 */
async function productionLogs(ids: number[], now: number) {
  try {
    const after = new Date(now - DAY_MS).toISOString();
    const logs = await allPages(async (page) => {
      const body = { machines: { include: ids }, end: { after }, page, limit: 100 };
      const data = answer(await api().POST("/v1/production-logs/filters", { body }));
      return { rows: data.productionLogs, totalPages: data.totalPages };
    });
    const byMachine = new Map<number, ProductionLog[]>();
    for (const log of logs)
      byMachine.set(log.machineId, [...(byMachine.get(log.machineId) ?? []), log]);
    return byMachine;
  } catch (error) {
    if (error instanceof BoardApiError && error.status === 403) return null;
    throw error;
  }
}

/** The reports behind the cards: metrics rows, stops and production logs of every machine. */
export async function refreshReports(): Promise<void> {
  const ids = state.machines.map((m) => m.id);
  if (ids.length === 0) return;
  const requestedAt = Date.now();
  const after = new Date(requestedAt - REPORT_WINDOW_MS).toISOString();
  const [rows, stopsRead, logs] = await Promise.all([
    metricsRows(ids, after),
    stopRows(ids, requestedAt),
    productionLogs(ids, requestedAt),
  ]);
  state.metrics = new Map(rows.map((row) => [`${row.machine.id}:${row.shift.id}`, row]));
  state.logs = logs;
  boardStops.fromReport(stopsRead, requestedAt);
}
