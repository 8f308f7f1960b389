/**
 * A plant for the realtime tests, built through HTTP: a company, machines, a
 * 24-hour shift running now on every machine, SKUs with nominal speeds, an
 * operator and a `count` signal per machine.
 */
import { expect } from "vitest";
import type { Api } from "../fixtures/api-types";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  operatorJson,
  type TestCompany,
  type TestMachine,
} from "../harness";

export interface Plant {
  co: TestCompany;
  machines: TestMachine[];
  /** SKU A (counting factor 12, 15 units/min) and B (factor 1, 30 units/min) on every machine; C has no nominal speed. */
  a: Api["Sku"];
  b: Api["Sku"];
  c: Api["Sku"];
  operators: Api["Operator"][];
  /** The `count` signal of each machine (public id), in machine order. */
  countSignals: string[];
}

/**
 * Builds a plant whose machines all run a 24-hour shift now.
 *
 * @param machineCount machines to create (default 1).
 * @param options.shift false = no shift at all (the machines run nothing).
 */
export async function plant(
  machineCount = 1,
  options: { shift?: boolean; timezone?: string } = {},
): Promise<Plant> {
  const co = await createCompany({ timezone: options.timezone ?? "UTC" });
  const machines = await createMachines(
    co.id,
    Array.from({ length: machineCount }, (_, i) => ({ name: `M${i + 1}` })),
  );
  if (options.shift !== false) {
    // startTime == endTime: a 24-hour shift, every day, so one is always running.
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);
  }
  const skuRes = await api(co.key, "/v1/skus", {
    method: "POST",
    json: [
      { sku: "A-100", name: "Apple juice" },
      { sku: "B-200", name: "Berry juice" },
      { sku: "C-300", name: "Cherry juice" },
    ],
  });
  expect(skuRes.status, await skuRes.clone().text()).toBe(200);
  const [a, b, c] = (await skuRes.json()) as Api["Sku"][];
  if (!a || !b || !c) throw new Error("no SKUs");
  const speeds = await api(co.key, "/v1/nominal-speeds", {
    method: "POST",
    json: machines.flatMap((m) => [
      { machine: { id: m.id }, sku: { id: a.id }, nominalSpeed: 15, countingFactor: 12 },
      { machine: { id: m.id }, sku: { id: b.id }, nominalSpeed: 30 },
    ]),
  });
  expect(speeds.status, await speeds.clone().text()).toBe(200);
  const opRes = await api(co.key, "/v1/operators", {
    method: "POST",
    json: [
      { firstName: "Ada", lastName: "Lovelace" },
      { firstName: "Grace", lastName: "Hopper" },
    ],
  });
  expect(opRes.status, await opRes.clone().text()).toBeLessThan(300);
  const operators = (await opRes.json()) as Api["Operator"][];
  const countSignals: string[] = [];
  for (const m of machines) countSignals.push(await createSignal(m.id, { name: "count" }));
  return { co, machines, a, b, c, operators, countSignals };
}

/** POST /v1/realtime/{machine}/sku. */
export function postSku(
  co: TestCompany,
  machineId: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return api(co.key, `/v1/realtime/${machineId}/sku`, { method: "POST", json: body, headers });
}

/** POST /v1/realtime/{machine}/operator. */
export function postOperator(
  co: TestCompany,
  machineId: number,
  body: Record<string, unknown>,
): Promise<Response> {
  return api(co.key, `/v1/realtime/${machineId}/operator`, { method: "POST", json: body });
}

/** GET /v1/realtime/{machine}, expecting a 200. */
export async function getState(co: TestCompany, machineId: number): Promise<Api["RealtimeState"]> {
  const res = await api(co.key, `/v1/realtime/${machineId}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Api["RealtimeState"];
}

/**
 * An instant inside the machine's running shift, `lookbackMs` before now, or the
 * shift's start when it began later: where a test lays out segments that have
 * already begun (a segment that has not begun has no log yet).
 *
 * @returns epoch milliseconds.
 */
export async function recentStartInShift(
  co: TestCompany,
  machineId: number,
  lookbackMs: number,
): Promise<number> {
  const { shift } = await getState(co, machineId);
  return Math.max(Date.parse(shift.start), Date.now() - lookbackMs);
}

/** Every production log of a machine, through the public filters (by start). */
export async function machineLogs(
  co: TestCompany,
  machineId: number,
): Promise<Api["ProductionLog"][]> {
  const out: Api["ProductionLog"][] = [];
  for (let page = 1; ; page += 1) {
    const res = await api(co.key, "/v1/production-logs/filters", {
      method: "POST",
      json: { machines: { include: [machineId] }, page, limit: 100 },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as Api["ProductionLogPage"];
    out.push(...body.productionLogs);
    if (page >= body.totalPages) return out;
  }
}
