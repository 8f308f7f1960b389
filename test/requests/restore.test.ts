/**
 * `npm run requests` leaves the demo as it found it, and says so only when the data shows it
 * (scripts/lib/requests-restore.ts): after the collection's realtime SKU write (a correction
 * of the running segment, with its `start`, naming a new work order) and a record left
 * behind, the machine's segment is as it was (same SKU, no work order, the same live log, no
 * second segment), what the run created is gone, the records that were there stay, and the
 * comparison finds nothing; a difference it cannot undo is reported.
 */
import { describe, expect, it } from "vitest";
import { compareWith, restore, takeSnapshot } from "../../scripts/lib/requests-restore";
import { getState, plant, postSku } from "../fixtures/plant";
import { api, call } from "../harness";

/** The live logs of a machine (its segments in the running shift). */
async function liveLogs(key: string, machineId: number): Promise<string[]> {
  const res = await api(key, "/v1/production-logs/filters", {
    method: "POST",
    json: { machines: { include: [machineId] }, limit: 100 },
  });
  const body = (await res.json()) as { productionLogs: { id: string; live: boolean }[] };
  return body.productionLogs.filter((log) => log.live).map((log) => log.id);
}

async function setUp() {
  const { co, machines, a } = await plant(1);
  const machine = machines[0];
  if (!machine) throw new Error("no machine");
  const started = await getState(co, machine.id);
  const write = { sku: a.sku, start: started.shift.start, quantity: 40, custom: { lot: "L-7" } };
  expect((await postSku(co, machine.id, write)).status).toBe(204);
  const target = {
    baseUrl: "http://worker",
    key: co.key,
    fetch: (url: string, init: RequestInit) => {
      const { pathname, search } = new URL(url);
      return call(`${pathname}${search}`, init);
    },
  };
  return { co, machine, a, target, start: started.shift.start };
}

describe("npm run requests: the demo as it was", () => {
  it("puts the machine's segment back, deletes what the run left, and finds nothing changed", async () => {
    const { co, machine, a, target, start } = await setUp();
    const before = await takeSnapshot(target, machine.id);
    const logsBefore = await liveLogs(co.key, machine.id);
    expect(logsBefore).toHaveLength(1);

    // What the collection does: a correction of the running segment naming a new work order,
    // and a record it leaves.
    const correction = { sku: "B-200", simpleWorkOrderName: "WO-REQ-LIVE", start };
    expect((await postSku(co, machine.id, correction)).status).toBe(204);
    expect(
      (await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "REQ-LEFT" }] })).status,
    ).toBe(200);
    expect((await getState(co, machine.id)).current?.simpleWorkOrder?.name).toBe("WO-REQ-LIVE");

    const said = await restore(target, before);
    const after = await getState(co, machine.id);
    expect(after.current).toMatchObject({
      sku: { sku: a.sku },
      simpleWorkOrder: null,
      quantity: 40,
      custom: { lot: "L-7" },
      start,
    });
    expect(await liveLogs(co.key, machine.id)).toEqual(logsBefore);
    expect(said).toBe(
      `machine ${machine.id} back on ${a.sku} without a work order; deleted 1 SKU it left; deleted 1 work order it left`,
    );
    const { differences, checked } = await compareWith(target, before);
    expect(differences).toEqual([]);
    expect(checked).toBe(
      `1 production logs, 2 nominal speeds, 2 operators, 3 SKUs, 0 work orders and machine ${machine.id}'s running shift`,
    );
  });

  it("reports what it cannot undo, for example a record the run changed", async () => {
    const { co, machine, target } = await setUp();
    const before = await takeSnapshot(target, machine.id);
    const skus = await api(co.key, "/v1/skus/filters", { method: "POST", json: { limit: 100 } });
    const first = ((await skus.json()) as { skus: { id: string; name: string | null }[] }).skus[0];
    if (!first) throw new Error("no SKU");
    const patched = await api(co.key, `/v1/skus/${first.id}`, {
      method: "PATCH",
      json: { name: "Renamed by the run" },
    });
    expect(patched.status).toBe(204);
    const { differences } = await compareWith(target, before);
    expect(differences).toEqual([`SKUs changed: ${first.id}`]);
  });
});
