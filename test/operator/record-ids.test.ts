/**
 * `POST /operator/v1/companies/{company_id}/record-ids` (src/operator/record-ids/routes.ts): a
 * record takes the id the operator gives it, before anything refers to it, all or none.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { shardOf } from "../../src/db/shards";
import { getState, plant, postSku } from "../fixtures/plant";
import { api, createCompany, createMachines, operator } from "../harness";

async function json<T>(res: Response | Promise<Response>): Promise<T> {
  const answer = await res;
  if (!answer.ok) throw new Error(`${answer.status}: ${await answer.text()}`);
  return (await answer.json()) as T;
}

describe("fixed record ids", () => {
  it("moves a SKU, a work order, a nominal speed and a log to the ids given", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    const [sku] = await json<{ id: string }[]>(
      api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "P-1" }] }),
    );
    const [order] = await json<{ id: string }[]>(
      api(co.key, "/v1/simple-work-orders", { method: "POST", json: [{ name: "WO-1" }] }),
    );
    const skuId = crypto.randomUUID();
    const orderId = crypto.randomUUID();
    const changed = await operator("POST", `/companies/${co.id}/record-ids`, [
      { type: "sku", id: sku?.id, newId: skuId.toUpperCase() },
      { type: "simpleWorkOrder", id: order?.id, newId: orderId },
    ]);
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual([
      { type: "sku", id: skuId },
      { type: "simpleWorkOrder", id: orderId },
    ]);
    expect((await api(co.key, `/v1/skus/${skuId}`)).status).toBe(200);
    expect((await api(co.key, `/v1/skus/${sku?.id}`)).status).toBe(404);
    expect((await api(co.key, `/v1/simple-work-orders/${orderId}`)).status).toBe(200);

    // The SKU under its new id carries its nominal speed and log.
    const [speed] = await json<{ id: string }[]>(
      api(co.key, "/v1/nominal-speeds", {
        method: "POST",
        json: [{ nominalSpeed: 10, machine: { id: machine?.id }, sku: { id: skuId } }],
      }),
    );
    const [log] = await json<{ id: string }[]>(
      api(co.key, "/v1/production-logs", {
        method: "POST",
        json: [
          {
            start: "2026-03-02T08:00:00Z",
            end: "2026-03-02T09:00:00Z",
            count: 500,
            machine: { id: machine?.id },
            sku: { id: skuId },
          },
        ],
      }),
    );
    const speedId = crypto.randomUUID();
    const logId = crypto.randomUUID();
    expect(
      (
        await operator("POST", `/companies/${co.id}/record-ids`, [
          { type: "nominalSpeed", id: speed?.id, newId: speedId },
          { type: "productionLog", id: log?.id, newId: logId },
        ])
      ).status,
    ).toBe(200);
    const read = await json<{ sku: { id: string }; count: number }>(
      api(co.key, `/v1/production-logs/${logId}`),
    );
    expect(read).toMatchObject({ sku: { id: skuId }, count: 500 });
    expect((await api(co.key, `/v1/nominal-speeds/${speedId}`)).status).toBe(200);

    // Referred to now: refused, and nothing of the call is applied.
    const refused = await operator("POST", `/companies/${co.id}/record-ids`, [
      { type: "simpleWorkOrder", id: orderId, newId: crypto.randomUUID() },
      { type: "sku", id: skuId, newId: crypto.randomUUID() },
    ]);
    expect(refused.status).toBe(409);
    expect((await api(co.key, `/v1/simple-work-orders/${orderId}`)).status).toBe(200);
  });

  it("refuses unknown records, records of another company and ids in use, with a 422", async () => {
    const co = await createCompany();
    // On the same shard: record ids are unique within a shard (docs/scaling.md), and another
    // company's record must be refused there as unknown, its id as in use.
    const other = await createCompany({ shard: (await shardOf(env, co.id)) ?? undefined });
    const [mine, second] = await json<{ id: string }[]>(
      api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "A" }, { sku: "B" }] }),
    );
    const [theirs] = await json<{ id: string }[]>(
      api(other.key, "/v1/skus", { method: "POST", json: [{ sku: "C" }] }),
    );
    const cases = [
      [{ type: "sku", id: crypto.randomUUID(), newId: crypto.randomUUID() }, ["body", 0, "id"]],
      [{ type: "sku", id: theirs?.id, newId: crypto.randomUUID() }, ["body", 0, "id"]],
      [{ type: "sku", id: mine?.id, newId: second?.id }, ["body", 0, "newId"]],
      [{ type: "sku", id: mine?.id, newId: theirs?.id }, ["body", 0, "newId"]],
      [{ type: "operator", id: mine?.id, newId: crypto.randomUUID() }, ["body", 0, "type"]],
    ] as const;
    for (const [change, loc] of cases) {
      const res = await operator("POST", `/companies/${co.id}/record-ids`, [change]);
      expect(res.status, JSON.stringify(change)).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail[0]?.loc).toEqual(loc);
    }
    expect((await operator("POST", "/companies/999999/record-ids", [cases[0][0]])).status).toBe(
      404,
    );
    expect((await api(co.key, `/v1/skus/${mine?.id}`)).status).toBe(200);
  });
});

describe("fixed record ids and a running machine", () => {
  it("refuses (409) a work order that a realtime write gave the machine, while the object still holds it", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    // The first write after a quiet spell is written to D1 at once; the next is held.
    expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
    const [held, unused] = await json<{ id: string }[]>(
      api(p.co.key, "/v1/simple-work-orders", {
        method: "POST",
        json: [{ name: "WO-held" }, { name: "WO-unused" }],
      }),
    );
    if (!held || !unused) throw new Error("no work orders");
    expect((await postSku(p.co, m.id, { simpleWorkOrderId: held.id })).status).toBe(204);

    const refused = await operator("POST", `/companies/${p.co.id}/record-ids`, [
      { type: "simpleWorkOrder", id: held.id, newId: crypto.randomUUID() },
    ]);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { detail: string }).detail).toContain(held.id);
    // The machine's live log still names a work order that exists.
    const state = await getState(p.co, m.id);
    expect(state.current?.simpleWorkOrder?.id).toBe(held.id);
    expect((await api(p.co.key, `/v1/simple-work-orders/${held.id}`)).status).toBe(200);
    // A work order no machine holds still moves.
    const moved = await operator("POST", `/companies/${p.co.id}/record-ids`, [
      { type: "simpleWorkOrder", id: unused.id, newId: crypto.randomUUID() },
    ]);
    expect(moved.status).toBe(200);
  });
});
