/**
 * `npm run requests` leaves the demo as it found it (scripts/lib/requests-restore.ts): after
 * the collection's realtime SKU write (a SKU and a new work order on a running machine) and a
 * record left behind, the machine makes its SKU again without the work order, and what the
 * run created is gone, while the records that were there before stay.
 */
import { describe, expect, it } from "vitest";
import { restore, takeSnapshot } from "../../scripts/lib/requests-restore";
import { api, call } from "../harness";
import { getState, plant, postSku } from "../realtime/plant";

describe("npm run requests: the demo as it was", () => {
  it("puts the machine back on its SKU and deletes what the run left", async () => {
    const { co, machines, a } = await plant(1);
    const machine = machines[0];
    if (!machine) throw new Error("no machine");
    const started = await getState(co, machine.id);
    expect((await postSku(co, machine.id, { sku: a.sku, start: started.shift.start })).status).toBe(
      204,
    );
    const target = {
      baseUrl: "http://worker",
      key: co.key,
      fetch: (url: string, init: RequestInit) => {
        const { pathname, search } = new URL(url);
        return call(`${pathname}${search}`, init);
      },
    };
    const before = await takeSnapshot(target, machine.id);

    // What the collection does: a SKU write naming a new work order, and a record it leaves.
    expect(
      (await postSku(co, machine.id, { sku: "B-200", simpleWorkOrderName: "WO-REQ-LIVE" })).status,
    ).toBe(204);
    expect(
      (await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "REQ-LEFT" }] })).status,
    ).toBe(200);
    const during = await getState(co, machine.id);
    expect(during.current?.simpleWorkOrder?.name).toBe("WO-REQ-LIVE");

    const said = await restore(target, before);
    const after = await getState(co, machine.id);
    expect(after.current?.sku.sku).toBe(a.sku);
    expect(after.current?.simpleWorkOrder).toBeNull();
    const orders = await api(co.key, "/v1/simple-work-orders/filters", {
      method: "POST",
      json: {},
    });
    const names = ((await orders.json()) as { simpleWorkOrders: { name: string }[] })
      .simpleWorkOrders;
    expect(names.map((o) => o.name)).not.toContain("WO-REQ-LIVE");
    const skus = await api(co.key, "/v1/skus/filters", { method: "POST", json: { limit: 100 } });
    const codes = ((await skus.json()) as { skus: { sku: string }[] }).skus.map((s) => s.sku);
    expect(codes.sort()).toEqual(["A-100", "B-200", "C-300"]);
    expect(said).toBe(
      `machine ${machine.id} back on A-100 without a work order; deleted 1 SKU it left; deleted 1 work order it left`,
    );
  });
});
