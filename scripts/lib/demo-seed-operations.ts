/**
 * Loads the operational part of the demo (./demo-operations.ts) into a running Worker:
 * the catalog and production logs of Demo Plant A through the public API with the demo
 * full-access key (the path a partner integration takes), shifts and stops through the
 * operator API. Called by ./demo-seed.ts once the machines exist.
 */

import { createClient } from "../../clients/typescript/src/index";
import { mapWithConcurrency } from "./concurrency";
import { MANUAL_BENCH } from "./demo-data";
import { DOCS_RECORDS } from "./demo-ids";
import type { DerivedNominalSpeed } from "./demo-nominal-speeds";
import {
  BENCH_SHIFT,
  type DerivedFleetStop,
  FLEET_B_SHIFT,
  IDLE_SHIFT,
  PLANT_A_SHIFTS,
  type PlantAOperations,
  plantAWeekends,
  skuCode,
} from "./demo-operations";
import { ok } from "./http";
import type { Machine, OperatorConnection, StopInput } from "./operator-api";

/** Most items the API takes in one create call (public and operator). */
const MAX_ITEMS_PER_CALL = 1000;

/** Calls in flight at once when many small calls are needed (classifications). */
const CALL_CONCURRENCY = 8;

/** Illustrative operators: the data names nobody (see data/README.md). */
export const DEMO_OPERATORS = [
  { firstName: "Giulia", lastName: "Rossi" },
  { firstName: "Marco", lastName: "Bianchi" },
  { firstName: "José", lastName: "Muñoz" },
] as const;

/** Illustrative simple work orders, one per week of the data. */
export const DEMO_WORK_ORDERS = [
  { name: "WO-2022-W35" },
  { name: "WO-2022-W36" },
  { name: "WO-2022-W37" },
  { name: "WO-2022-W38" },
] as const;

/** One record to move to its fixed id (POST /operator/v1/companies/{id}/record-ids). */
interface RecordIdChange {
  type: "sku" | "simpleWorkOrder" | "nominalSpeed" | "productionLog";
  id: string | undefined;
  newId: string;
}

/** Gives records of the company their fixed ids; throws when a record was not created. */
async function fixRecordIds(
  client: OperatorConnection,
  companyId: number,
  changes: readonly RecordIdChange[],
): Promise<void> {
  const body = changes.map(({ type, id, newId }) => {
    if (!id) throw new Error(`The demo's ${type} for ${newId} was not created`);
    return { type, id, newId };
  });
  ok(
    "POST",
    await client.api.POST("/companies/{company_id}/record-ids", {
      params: { path: { company_id: companyId } },
      body,
    }),
  );
}

/** Progress lines go here. */
export type Log = (line: string) => void;

const iso = (ms: number) => new Date(ms).toISOString();

/** Splits a list into chunks of at most `size` items. */
function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Finds the machine of a demo company by name; throws when the seed did not create it. */
function machineNamed<M extends { id: number; name: string }>(
  machines: readonly M[],
  name: string,
): M {
  const machine = machines.find((m) => m.name === name);
  if (!machine) throw new Error(`The demo has no machine named "${name}"`);
  return machine;
}

/**
 * Loads Demo Plant A's SKUs, operators, simple work orders and nominal speeds (public
 * API), its three shifts (operator API, the three assets only), its production logs
 * (public API, calls of 1,000, one after the other) and its alarm stops (operator API).
 *
 * @param client the operator API of the Worker.
 * @param companyId the company's id.
 * @param machines the company's machines as created ("Asset 0" ..).
 * @param apiKey a key of the company with the create scopes.
 * @param ops the derived records (./demo-operations.ts) and nominal speeds
 *   (./demo-nominal-speeds.ts).
 * @param log where progress lines go.
 * @throws HttpError from the API; Error when a machine of the data is missing.
 */
export async function loadPlantAOperations(
  client: OperatorConnection,
  companyId: number,
  machines: readonly Machine[],
  apiKey: string,
  ops: PlantAOperations & { nominalSpeeds: readonly DerivedNominalSpeed[] },
  log: Log,
): Promise<void> {
  // Only the connection's retries (of what says nothing was done): a failure shows at once,
  // and every call runs exactly once.
  const api = createClient({
    baseUrl: client.baseUrl,
    apiKey,
    maxRetries: 0,
    ...(client.fetch ? { fetch: client.fetch } : {}),
  });
  const assetMachine = (asset: number) => machineNamed(machines, `Asset ${asset}`);
  const assetIds = [...new Set(ops.productionLogs.map((l) => l.asset))]
    .sort((a, b) => a - b)
    .map((asset) => assetMachine(asset).id);

  const created = ok(
    "POST",
    await api.POST("/v1/skus", {
      body: [
        ...ops.products.map((product) => ({
          sku: skuCode(product),
          name: `Product ${product}`,
          description: `Product id ${product} of the SME data set (column \`product\`)`,
          unit: "pieces",
        })),
      ],
    }),
  );
  // The examples of /docs name P00 (Asset 0 has a nominal speed for it). Nothing is made for
  // their DELETE examples: the /docs page deletes what its create examples made.
  const skuIdOf = (code: string) => created.find((sku) => sku.sku === code)?.id;
  await fixRecordIds(client, companyId, [
    { type: "sku", id: skuIdOf(skuCode(0)), newId: DOCS_RECORDS.sku },
  ]);
  const skus = created;
  const skuId = new Map(skus.map((sku) => [sku.sku, sku.id]));
  skuId.set(skuCode(0), DOCS_RECORDS.sku);
  const skuOf = (product: number) => {
    const id = skuId.get(skuCode(product));
    if (!id) throw new Error(`SKU ${skuCode(product)} was not created`);
    return id;
  };
  ok("POST", await api.POST("/v1/operators", { body: [...DEMO_OPERATORS] }));
  const orders = ok(
    "POST",
    await api.POST("/v1/simple-work-orders", {
      body: [...DEMO_WORK_ORDERS],
    }),
  );
  const orderIdOf = (name: string) => orders.find((order) => order.name === name)?.id;
  await fixRecordIds(client, companyId, [
    {
      type: "simpleWorkOrder",
      id: orderIdOf(DEMO_WORK_ORDERS[0].name),
      newId: DOCS_RECORDS.simpleWorkOrder,
    },
  ]);
  const speeds = ok(
    "POST",
    await api.POST("/v1/nominal-speeds", {
      body: [
        ...ops.nominalSpeeds.map((speed) => ({
          nominalSpeed: speed.nominalSpeed,
          countingFactor: 1,
          machine: { id: assetMachine(speed.asset).id },
          sku: { id: skuOf(speed.product) },
        })),
      ],
    }),
  );
  const speedOf = (machineId: number) =>
    speeds.find((s) => s.machine.id === machineId && s.sku.id === DOCS_RECORDS.sku)?.id;
  await fixRecordIds(client, companyId, [
    { type: "nominalSpeed", id: speedOf(assetMachine(0).id), newId: DOCS_RECORDS.nominalSpeed },
  ]);
  log(
    `  Demo Plant A: ${skus.length} SKUs, ${DEMO_OPERATORS.length} operators, ` +
      `${DEMO_WORK_ORDERS.length} work orders, ${ops.nominalSpeeds.length} nominal speeds`,
  );

  // The recorded stops before the shifts: when the shifts come, stop detection evaluates the
  // samples' history once, the recorded stops already known.
  const stopsByMachine = new Map<number, StopInput[]>();
  for (const stop of ops.stops) {
    const id = assetMachine(stop.asset).id;
    const list = stopsByMachine.get(id) ?? [];
    // Recorded by the plant (its alarm rows): manual stops, which replace the time the
    // machine's count signal would make a detected stop of (docs/machine-state.md).
    list.push({
      startTime: iso(stop.start),
      endTime: iso(stop.end),
      isProgrammed: false,
      isManual: true,
    });
    stopsByMachine.set(id, list);
  }
  for (const [machineId, stops] of stopsByMachine) {
    for (const chunk of chunks(stops, MAX_ITEMS_PER_CALL)) {
      ok(
        "POST",
        await client.api.POST("/machines/{machine_id}/stops", {
          params: { path: { machine_id: machineId } },
          body: chunk,
        }),
      );
    }
  }
  // The plant calendar before the shifts too: the recorded plant stood still on Saturdays
  // and Sundays, so their shifts are not scheduled and their idle rows make no stop.
  const weekends = plantAWeekends(
    Math.min(...ops.productionLogs.map((l) => l.start)),
    Math.max(...ops.productionLogs.map((l) => l.end)),
  );
  ok(
    "POST",
    await client.api.POST("/companies/{company_id}/closures", {
      params: { path: { company_id: companyId } },
      body: [
        ...weekends,
        ...ops.idleShifts.map((idle) => ({
          name: IDLE_SHIFT,
          start: iso(idle.start),
          end: iso(idle.end),
          machineId: assetMachine(idle.asset).id,
        })),
      ],
    }),
  );
  ok(
    "POST",
    await client.api.POST("/companies/{company_id}/shifts", {
      params: { path: { company_id: companyId } },
      body: [
        ...PLANT_A_SHIFTS.map((shift) => ({ ...shift, machineIds: assetIds })),
        { ...BENCH_SHIFT, machineIds: [machineNamed(machines, MANUAL_BENCH.name).id] },
      ],
    }),
  );

  const logs = ops.productionLogs.map((entry, i) => ({
    start: iso(entry.start),
    end: iso(entry.end),
    count: entry.count,
    type: "total" as const,
    machine: { id: assetMachine(entry.asset).id },
    sku: { id: skuOf(entry.product) },
    // The first log is the one the PATCH example of /docs marks reviewed: already so, the
    // example changes nothing.
    isReviewed: i === 0,
  }));
  const [firstLog] = ops.productionLogs;
  if (firstLog?.asset !== 0 || firstLog.product !== 0) {
    throw new Error(
      "The demo's first production log is no longer Asset 0's P00 (docs/demo-data.md)",
    );
  }
  const logIds: (string | undefined)[] = [];
  for (const chunk of chunks(logs, MAX_ITEMS_PER_CALL)) {
    const rows = ok("POST", await api.POST("/v1/production-logs", { body: chunk }));
    logIds.push(...rows.map((row) => row.id));
  }
  await fixRecordIds(client, companyId, [
    { type: "productionLog", id: logIds[0], newId: DOCS_RECORDS.productionLog },
  ]);

  log(
    `  Demo Plant A: ${PLANT_A_SHIFTS.length} shifts, ${weekends.length} weekends and ` +
      `${ops.idleShifts.length} machine shifts not run closed, ` +
      `${logs.length} production logs, ` +
      `${ops.stops.length} unplanned stops`,
  );
}

/**
 * Loads Fleet B's 24-hour shift (not considered in the metrics report) and its
 * failure and maintenance stops, each classified with its component and general cause.
 * Idempotent, so that a load cut short (npm start stopped while it ran after the banner) is
 * completed by the next one: the shift is created when the company has none, a stop only when
 * none of its machine starts at the same instant (the stops report), and a classification is
 * written for every stop that has none.
 *
 * @param client the operator API of the Worker.
 * @param companyId the company's id.
 * @param machines the company's machines as created ("Machine 1" ..).
 * @param stops the derived stops (./demo-operations.ts).
 * @param apiKey a key of Fleet B with `reports.read` (the stops it already has).
 * @param log where progress lines go.
 * @throws HttpError from the API; Error when a machine of the data is missing.
 */
export async function loadFleetBOperations(
  client: OperatorConnection,
  companyId: number,
  machines: readonly { id: number; name: string }[],
  stops: readonly DerivedFleetStop[],
  apiKey: string,
  log: Log,
): Promise<void> {
  const shifts = ok(
    "GET",
    await client.api.GET("/companies/{company_id}/shifts", {
      params: { path: { company_id: companyId } },
    }),
  );
  if (shifts.length === 0) {
    ok(
      "POST",
      await client.api.POST("/companies/{company_id}/shifts", {
        params: { path: { company_id: companyId } },
        body: [FLEET_B_SHIFT],
      }),
    );
  }
  const existing = await existingStops(client, apiKey, stops);
  const byMachine = new Map<number, DerivedFleetStop[]>();
  const toClassify: { id: number; stop: DerivedFleetStop }[] = [];
  for (const stop of stops) {
    const id = machineNamed(machines, `Machine ${stop.machine}`).id;
    const found = existing.get(`${id}:${stop.start}`);
    if (found) {
      if (!found.classified) toClassify.push({ id: found.id, stop });
      continue;
    }
    const list = byMachine.get(id) ?? [];
    list.push(stop);
    byMachine.set(id, list);
  }
  const created = await mapWithConcurrency([...byMachine], 4, async ([machineId, list]) => {
    const out: { id: number; stop: DerivedFleetStop }[] = [];
    for (const chunk of chunks(list, MAX_ITEMS_PER_CALL)) {
      const rows = ok(
        "POST",
        await client.api.POST("/machines/{machine_id}/stops", {
          params: { path: { machine_id: machineId } },
          body: chunk.map((stop) => ({
            startTime: iso(stop.start),
            endTime: iso(stop.end),
            isProgrammed: stop.isProgrammed,
          })),
        }),
      );
      rows.forEach((row, i) => {
        const stop = chunk[i];
        if (stop) out.push({ id: row.id, stop });
      });
    }
    return out;
  });
  await mapWithConcurrency(
    [...toClassify, ...created.flat()],
    CALL_CONCURRENCY,
    async ({ id, stop }) =>
      ok(
        "PUT",
        await client.api.PUT("/stops/{stop_id}/classification", {
          params: { path: { stop_id: id } },
          body: { component: { name: stop.component }, generalCause: { name: stop.generalCause } },
        }),
      ),
  );
  const programmed = stops.filter((stop) => stop.isProgrammed).length;
  log(
    `  Fleet B: 1 shift (not considered), ${stops.length - programmed} failure stops, ` +
      `${programmed} maintenance stops, all classified` +
      (existing.size > 0 ? ` (${existing.size} were there already)` : ""),
  );
}

/**
 * The stops Fleet B already has in the period of `stops`, by `machineId:startMs`, with whether
 * each is classified (the stops report, with a key of the company).
 */
async function existingStops(
  client: OperatorConnection,
  apiKey: string,
  stops: readonly DerivedFleetStop[],
): Promise<Map<string, { id: number; classified: boolean }>> {
  const found = new Map<string, { id: number; classified: boolean }>();
  if (stops.length === 0) return found;
  const api = createClient({
    baseUrl: client.baseUrl,
    apiKey,
    maxRetries: 0,
    ...(client.fetch ? { fetch: client.fetch } : {}),
  });
  const from = Math.min(...stops.map((stop) => stop.start));
  const until = Math.max(...stops.map((stop) => stop.start)) + 1;
  for (let page = 1; ; page++) {
    const body = ok(
      "POST",
      await api.POST("/v1/reports/stops", {
        body: { startDate: { between: { start: iso(from), end: iso(until) } }, limit: 100, page },
      }),
    );
    for (const row of body.stops) {
      found.set(`${row.machine.id}:${Date.parse(row.stop.startTime)}`, {
        id: row.stop.id,
        classified: row.classification !== null,
      });
    }
    if (page >= body.totalPages) break;
  }
  return found;
}
