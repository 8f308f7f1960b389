/**
 * Per public operation: a valid request (body and query) in a world, and the
 * state that a refused call must leave unchanged. Keyed `METHOD path` as the
 * OpenAPI document names them; a documented operation missing here fails the
 * suites, so that a new route cannot go untested.
 */
import { api } from "../fixtures/direct-client";
import { totalCount, type World } from "./world";

/** What a valid request to one operation looks like. */
export interface RouteCase {
  /** A valid JSON body (operations with a body). */
  body?: (w: World) => unknown;
  /** Valid values of the documented query parameters. */
  query?: (w: World) => Record<string, string>;
  /** Reads the state that a refused call (any non-2XX answer) must leave as it was. */
  state?: (w: World) => Promise<unknown>;
}

const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

const count = {
  skus: (w: World) => totalCount(w.co.key, "/v1/skus/filters"),
  operators: (w: World) => totalCount(w.co.key, "/v1/operators/filters"),
  workOrders: (w: World) => totalCount(w.co.key, "/v1/simple-work-orders/filters"),
  speeds: (w: World) => totalCount(w.co.key, "/v1/nominal-speeds/filters"),
  logs: (w: World) => totalCount(w.co.key, "/v1/production-logs/filters"),
};

/** The body of `GET path` (or its status when not a 200): a record as a caller sees it. */
async function read(w: World, path: string): Promise<unknown> {
  const res = await api(w.co.key, path);
  return res.status === 200 ? res.json() : res.status;
}

const all = async (w: World, ...reads: ((w: World) => Promise<unknown>)[]) =>
  Promise.all(reads.map((r) => r(w)));

/** Every public operation, by `METHOD path`. */
export const ROUTE_CASES: Record<string, RouteCase> = {
  "GET /v1/machines": {},
  "GET /v1/machines/{machine_uuid}/signals": { query: () => ({ language: "es" }) },
  "GET /v1/machines/{machine_uuid}/signals/{public_id}": {
    query: () => ({
      start_time: iso(Date.now() - HOUR),
      end_time: iso(Date.now()),
      agg_unit: "m",
      agg_period: "5",
      agg_function: "max",
      transpose: "true",
    }),
  },

  "POST /v1/skus": {
    body: () => [
      { sku: "P-NEW", name: "New", description: "A product", unit: "boxes", archived: false },
    ],
    state: (w) => all(w, count.skus),
  },
  "POST /v1/skus/filters": {
    body: (w) => ({
      page: 1,
      limit: 10,
      skus: { search: "p-", include: [w.skuId], exclude: [] },
      names: { search: "prod" },
      description: { search: "x" },
      unit: { search: "unit" },
    }),
  },
  "GET /v1/skus/{sku_id}": {},
  "PATCH /v1/skus/{sku_id}": {
    body: () => ({ sku: "P-2", name: "Renamed", description: "d", unit: "kg", archived: true }),
    state: (w) => all(w, (x) => read(x, `/v1/skus/${x.skuId}`)),
  },
  "DELETE /v1/skus/{sku_id}": {
    state: (w) => all(w, count.skus, (x) => read(x, `/v1/skus/${x.skuId}`)),
  },

  "POST /v1/operators": {
    body: () => [{ firstName: "Grace", lastName: "Hopper" }],
    state: (w) => all(w, count.operators),
  },
  "POST /v1/operators/filters": {
    body: () => ({ page: 1, limit: 10, firstName: { search: "ada" }, lastName: { search: "" } }),
  },
  "GET /v1/operators/{operator_id}": {},
  "PATCH /v1/operators/{operator_id}": {
    body: () => ({ firstName: "Augusta", lastName: null }),
    state: (w) => all(w, (x) => read(x, `/v1/operators/${x.operatorId}`)),
  },
  "DELETE /v1/operators/{operator_id}": {
    state: (w) => all(w, count.operators, (x) => read(x, `/v1/operators/${x.operatorId}`)),
  },

  "POST /v1/simple-work-orders": {
    body: () => [{ name: "WO-NEW" }],
    state: (w) => all(w, count.workOrders),
  },
  "POST /v1/simple-work-orders/filters": {
    body: (w) => ({
      page: 1,
      limit: 10,
      simpleWorkOrders: { include: [w.workOrderId], exclude: [] },
      names: { search: "WO-%" },
    }),
  },
  "GET /v1/simple-work-orders/{simple_work_order_id}": {},
  "PATCH /v1/simple-work-orders/{simple_work_order_id}": {
    body: () => ({ name: "WO-RENAMED" }),
    state: (w) => all(w, (x) => read(x, `/v1/simple-work-orders/${x.workOrderId}`)),
  },
  "DELETE /v1/simple-work-orders/{simple_work_order_id}": {
    state: (w) =>
      all(w, count.workOrders, (x) => read(x, `/v1/simple-work-orders/${x.workOrderId}`)),
  },

  "POST /v1/nominal-speeds": {
    body: (w) => [
      {
        nominalSpeed: 12.5,
        countingFactor: 2,
        machine: { id: w.idleMachineId },
        sku: { name: w.skuCode },
      },
    ],
    state: (w) => all(w, count.speeds),
  },
  "POST /v1/nominal-speeds/filters": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { include: [w.machineId], exclude: [] },
      skus: { include: [w.skuId] },
      nominalSpeed: { greaterThan: 1, lessThanOrEqual: 100 },
    }),
  },
  "GET /v1/nominal-speeds/{nominal_speed_id}": {},
  "PATCH /v1/nominal-speeds/{nominal_speed_id}": {
    body: () => ({ nominalSpeed: 45, countingFactor: 6 }),
    state: (w) => all(w, (x) => read(x, `/v1/nominal-speeds/${x.nominalSpeedId}`)),
  },
  "DELETE /v1/nominal-speeds/{nominal_speed_id}": {
    state: (w) => all(w, count.speeds, (x) => read(x, `/v1/nominal-speeds/${x.nominalSpeedId}`)),
  },

  "POST /v1/production-logs": {
    body: (w) => [
      {
        start: iso(Date.now() - 5 * HOUR),
        end: iso(Date.now() - 4 * HOUR),
        count: 120,
        type: "total",
        nominalSpeed: 30,
        countingFactor: 1,
        sensorCount: 120,
        machine: { id: w.idleMachineId },
        sku: { id: w.skuId },
        operator: { firstName: "New", lastName: "Operator" },
        workOrder: "WO-FROM-LOG",
        isReviewed: false,
      },
    ],
    state: (w) => all(w, count.logs, count.operators, count.workOrders),
  },
  "POST /v1/production-logs/filters": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { search: "idle", include: [w.idleMachineId] },
      skus: { search: "p-" },
      start: { after: iso(Date.now() - 24 * HOUR) },
      end: { between: { start: iso(Date.now() - 24 * HOUR), end: iso(Date.now()) } },
      count: { greaterThan: 0 },
      isReviewed: false,
      type: "total",
    }),
  },
  "GET /v1/production-logs/{production_log_id}": {},
  "PATCH /v1/production-logs/{production_log_id}": {
    body: () => ({
      count: 90,
      isReviewed: true,
      operator: { firstName: "Patch", lastName: "Operator" },
      workOrder: "WO-FROM-PATCH",
    }),
    state: (w) =>
      all(
        w,
        (x) => read(x, `/v1/production-logs/${x.productionLogId}`),
        count.operators,
        count.workOrders,
      ),
  },
  "DELETE /v1/production-logs/{production_log_id}": {
    state: (w) => all(w, count.logs, (x) => read(x, `/v1/production-logs/${x.productionLogId}`)),
  },

  "POST /v1/reports/metrics": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { search: "press", include: [w.machineId] },
      shifts: { include: [w.shiftId] },
      startDate: { after: iso(Date.now() - 48 * HOUR) },
      endDate: { before: iso(Date.now() + 48 * HOUR) },
    }),
  },
  "POST /v1/reports/stops": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { include: [w.machineId] },
      stopId: { greaterThanOrEqual: w.stopId, include: [w.stopId] },
      startDate: { between: { start: iso(Date.now() - 24 * HOUR), end: iso(Date.now()) } },
      endDate: { before: iso(Date.now()) },
    }),
  },

  "POST /v1/reports/downtime": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { include: [w.machineId] },
      startDate: { between: { start: iso(Date.now() - 24 * HOUR), end: iso(Date.now()) } },
      endDate: { before: iso(Date.now()) },
      isProgrammed: false,
      groupBy: ["generalCause", "machine", "shift", "day"],
    }),
  },
  "POST /v1/reports/kpis": {
    body: (w) => ({
      page: 1,
      limit: 10,
      machines: { search: "press", include: [w.machineId] },
      shifts: { include: [w.shiftId] },
      startDate: { after: iso(Date.now() - 48 * HOUR) },
      endDate: { before: iso(Date.now() + 48 * HOUR) },
      groupBy: ["machine", "day", "sku", "operator", "simpleWorkOrder"],
    }),
  },

  "POST /v1/exports": {
    body: (w) => ({
      dataset: "metrics",
      format: "csv",
      rowsPerFile: 10_000,
      filters: {
        machines: { search: "press", include: [w.machineId] },
        shifts: { include: [w.shiftId] },
        startDate: { after: iso(Date.now() - 48 * HOUR) },
      },
    }),
  },
  "GET /v1/exports/{export_id}": {},
  "GET /v1/exports/{export_id}/files/{file_name}": {},

  "POST /v1/realtime/{machine_id}/sku": {
    body: (w) => ({
      skuId: w.skuId,
      simpleWorkOrderName: "WO-REALTIME",
      quantity: 500,
      custom: { color: "red" },
    }),
    state: (w) => all(w, count.workOrders),
  },
  "POST /v1/realtime/{machine_id}/operator": {
    body: (w) => ({ operatorId: w.operatorId, start: iso(Date.now() - 60_000) }),
  },
  "GET /v1/realtime/{machine_id}": {},
  "POST /v1/realtime/{machine_id}/stop-reason": {
    body: (w) => ({ stopId: w.stopId, generalCause: { name: "Jam" }, description: "belt" }),
    state: (w) =>
      all(w, (x) =>
        api(x.co.key, "/v1/reports/stops", {
          method: "POST",
          json: { stopId: { include: [x.stopId] } },
        }).then((res) => res.json()),
      ),
  },
  "GET /v1/realtime/{machine_id}/stops": {},
  "GET /v1/realtime/{machine_id}/events": { query: () => ({ since: "0" }) },
  "GET /v1/realtime/events": { query: () => ({ since: "0" }) },
  "POST /v1/realtime/tickets": {},
};

/** The case of an operation; throws for one that has none (a route added without tests). */
export function routeCase(method: string, path: string): RouteCase {
  const found = ROUTE_CASES[`${method} ${path}`];
  if (!found) throw new Error(`no hardening case for ${method} ${path}: add one to ROUTE_CASES`);
  return found;
}
