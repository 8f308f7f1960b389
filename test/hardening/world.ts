/**
 * A small plant for the hardening suites, built through HTTP: a company whose
 * key holds every scope with a rate limit high enough for hundreds of
 * generated requests, two machines (one with a `count` signal and a 24-hour
 * shift, so that realtime writes reach the machine's object), a SKU with a
 * nominal speed, an operator, a work order, a production log and a stop.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { expect } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { api, operatorJson } from "../fixtures/direct-client";
import type { TestCompany } from "../harness";

/** Requests per minute of the keys made here: the generated runs never meet the limit. */
export const GENEROUS_RATE_LIMIT = { requests: 1_000_000, periodSeconds: 60 };

/** The ids of one company's records, one of each kind. */
export interface World {
  co: TestCompany;
  machineId: number;
  machineUuid: string;
  /** A machine with no shift: realtime calls on it are 409s. */
  idleMachineId: number;
  signalId: string;
  skuId: string;
  skuCode: string;
  operatorId: number;
  workOrderId: string;
  nominalSpeedId: string;
  productionLogId: string;
  stopId: number;
  shiftId: number;
  /** A finished metrics export (Parquet in the own world, CSV in the others: see below). */
  exportId: string;
  /** Its one file's name. */
  exportFile: string;
}

/**
 * Issues a key holding `scopes` whose rate limit no test reaches.
 *
 * @returns the raw key and its id (to revoke it).
 */
export async function generousKey(
  companyId: number,
  scopes: readonly string[] = ALL_SCOPES,
): Promise<{ key: string; id: number }> {
  const [created] = await operatorJson<{ key: string; id: number }[]>(
    "POST",
    `/companies/${companyId}/api-keys`,
    [{ name: "hardening", scopes, rateLimit: GENEROUS_RATE_LIMIT }],
  );
  if (!created) throw new Error("no key created");
  return created;
}

async function created<T>(res: Response, status = 200): Promise<T> {
  expect(res.status, await res.clone().text()).toBe(status);
  return (await res.json()) as T;
}

/**
 * Builds one company's plant.
 *
 * @param label distinguishes the names of two worlds (for example `own`, `foreign`).
 */
export async function buildWorld(label = "own"): Promise<World> {
  const name = `Hardening ${label} ${crypto.randomUUID().slice(0, 8)}`;
  const [company] = await operatorJson<{ id: number }[]>("POST", "/companies", [
    { name, timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  const { key } = await generousKey(company.id);
  const co: TestCompany = { id: company.id, name, key };
  const [machine, idle] = await operatorJson<{ id: number; uuid: string | null }[]>(
    "POST",
    `/companies/${co.id}/machines`,
    [{ name: `Press ${label}` }, { name: `Idle ${label}` }],
  );
  if (!machine?.uuid || !idle) throw new Error("no machines");
  const [signal] = await operatorJson<{ publicId: string }[]>(
    "POST",
    `/machines/${machine.id}/signals`,
    [{ name: "count", displayName: "Count", kind: "counter" }],
  );
  if (!signal) throw new Error("no signal");
  const signalId = signal.publicId;
  const now = Date.now();
  await operatorJson("POST", `/signals/${signalId}/samples`, {
    timestamps: [new Date(now - 120_000).toISOString(), new Date(now - 60_000).toISOString()],
    values: [3, 4],
  });
  // startTime == endTime: a 24-hour shift, every day, so one is always running.
  const shifts = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/shifts`, [
    { name: "Day", startTime: "00:00", endTime: "00:00", machineIds: [machine.id] },
  ]);
  const [sku] = await created<{ id: string; sku: string }[]>(
    await api(key, "/v1/skus", {
      method: "POST",
      json: [{ sku: `P-${label}`, name: `Product ${label}` }],
    }),
  );
  const [operator] = await created<{ id: number }[]>(
    await api(key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "Ada", lastName: label }],
    }),
  );
  const [workOrder] = await created<{ id: string }[]>(
    await api(key, "/v1/simple-work-orders", {
      method: "POST",
      json: [{ name: `WO-${label}` }],
    }),
  );
  if (!sku || !operator || !workOrder) throw new Error("no catalog");
  const [speed] = await created<{ id: string }[]>(
    await api(key, "/v1/nominal-speeds", {
      method: "POST",
      json: [{ machine: { id: machine.id }, sku: { id: sku.id }, nominalSpeed: 30 }],
    }),
  );
  const [log] = await created<{ id: string }[]>(
    await api(key, "/v1/production-logs", {
      method: "POST",
      json: [
        {
          start: new Date(now - 7_200_000).toISOString(),
          end: new Date(now - 3_600_000).toISOString(),
          count: 100,
          machine: { id: idle.id },
          sku: { id: sku.id },
          nominalSpeed: 30,
        },
      ],
    }),
  );
  const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${machine.id}/stops`, [
    {
      startTime: new Date(now - 600_000).toISOString(),
      endTime: new Date(now - 300_000).toISOString(),
      isProgrammed: false,
    },
  ]);
  // The catalog of causes a scanner gives a stop's reason from.
  await operatorJson("POST", `/companies/${co.id}/stop-causes`, [
    { kind: "generalCause", name: "Jam" },
  ]);
  const shift = shifts[0];
  if (!speed || !log || !stop || !shift) throw new Error("no plant data");
  // A metrics export, run to its end. Worlds other than "own" export CSV, so that the file
  // name of one (`part-00001.csv`) is not a file of the other's export either.
  const started = await created<{ id: string }>(
    await api(key, "/v1/exports", {
      method: "POST",
      json: { dataset: "metrics", format: label === "own" ? "parquet" : "csv" },
    }),
    202,
  );
  const exportFile = await finishedFile(key, co.id, started.id);
  return {
    co,
    machineId: machine.id,
    machineUuid: machine.uuid,
    idleMachineId: idle.id,
    signalId,
    skuId: sku.id,
    skuCode: sku.sku,
    operatorId: operator.id,
    workOrderId: workOrder.id,
    nominalSpeedId: speed.id,
    productionLogId: log.id,
    stopId: stop.id,
    shiftId: shift.id,
    exportId: started.id,
    exportFile,
  };
}

/** Runs a company's export to its end (its object's alarm) and names its first file. */
async function finishedFile(key: string, companyId: number, id: string): Promise<string> {
  for (let step = 0; step < 100; step++) {
    const answer = (await (await api(key, `/v1/exports/${id}`)).json()) as {
      state: string;
      files: { name: string }[];
    };
    if (answer.state === "succeeded" && answer.files[0]) return answer.files[0].name;
    await runDurableObjectAlarm(
      env.COMPANY_EXPORTS.get(env.COMPANY_EXPORTS.idFromName(String(companyId))),
    );
  }
  throw new Error(`export ${id} did not end`);
}

/**
 * The value of each path parameter of the public routes in a world.
 *
 * @returns a map from parameter name to a valid id of that world.
 */
export function pathIds(world: World): Record<string, string> {
  return {
    machine_uuid: world.machineUuid,
    public_id: world.signalId,
    machine_id: String(world.machineId),
    sku_id: world.skuId,
    operator_id: String(world.operatorId),
    simple_work_order_id: world.workOrderId,
    nominal_speed_id: world.nominalSpeedId,
    production_log_id: world.productionLogId,
    export_id: world.exportId,
    file_name: world.exportFile,
  };
}

/** Fills a templated path (`/v1/skus/{sku_id}`) with already-encoded segments. */
export function fillPath(path: string, segments: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = segments[name];
    if (value === undefined) throw new Error(`no value for {${name}}`);
    return value;
  });
}

/** `totalCount` of a `/filters` search with `body`, through the public API. */
export async function totalCount(key: string, path: string, body: unknown = {}): Promise<number> {
  const res = await api(key, path, { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { totalCount: number }).totalCount;
}
