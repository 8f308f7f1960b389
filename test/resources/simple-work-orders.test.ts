import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { describeSecurity } from "../fixtures/security";
import { api, createCompany, type TestCompany } from "../harness";

type WorkOrder = Api["SimpleWorkOrder"];

type WorkOrderPage = Api["SimpleWorkOrderPage"];

const BASE = "/v1/simple-work-orders";

async function createWorkOrders(co: TestCompany, names: unknown[]): Promise<WorkOrder[]> {
  const res = await api(co.key, BASE, { method: "POST", json: names.map((name) => ({ name })) });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as WorkOrder[];
}

async function filter(co: TestCompany, body: unknown): Promise<WorkOrderPage> {
  const res = await api(co.key, `${BASE}/filters`, { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as WorkOrderPage;
}

const getWorkOrder = (co: TestCompany, id: string) => api(co.key, `${BASE}/${id}`);
const rename = (co: TestCompany, id: string, body: unknown) =>
  api(co.key, `${BASE}/${id}`, { method: "PATCH", json: body });
const remove = (co: TestCompany, id: string) => api(co.key, `${BASE}/${id}`, { method: "DELETE" });

describe("POST /v1/simple-work-orders", () => {
  it("trims names and creates one work order per distinct name, answering 200", async () => {
    const co = await createCompany();
    const made = await createWorkOrders(co, ["  WO-1 ", "WO-2", "WO-1", "WO-2  "]);
    expect(made.map((w) => w.name)).toEqual(["WO-1", "WO-2"]);
    expect(made[0]?.company).toEqual({ id: co.id, name: co.name });
    expect((await filter(co, {})).totalCount).toBe(2);
    const res = await getWorkOrder(co, made[0]?.id ?? "");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(made[0]);
  });

  it("returns an existing work order unchanged when its name is created again", async () => {
    const co = await createCompany();
    const [first] = await createWorkOrders(co, ["Repeat"]);
    const [again, other] = await createWorkOrders(co, ["Repeat", "New one"]);
    expect(again).toEqual(first);
    expect(other?.name).toBe("New one");
    expect((await filter(co, {})).totalCount).toBe(2);
  });

  it("restores a deleted work order with the same id when its name is created again", async () => {
    const co = await createCompany();
    const [wo] = await createWorkOrders(co, ["Comeback"]);
    const id = wo?.id ?? "";
    expect((await remove(co, id)).status).toBe(204);
    expect((await getWorkOrder(co, id)).status).toBe(404);
    expect((await filter(co, {})).totalCount).toBe(0);
    const [restored] = await createWorkOrders(co, [" Comeback"]);
    expect(restored?.id).toBe(id);
    expect(restored?.createdAt).toBe(wo?.createdAt);
    expect(Date.parse(restored?.updatedAt ?? "")).toBeGreaterThanOrEqual(
      Date.parse(wo?.updatedAt ?? ""),
    );
    expect((await getWorkOrder(co, id)).status).toBe(200);
    expect((await filter(co, {})).simpleWorkOrders.map((w) => w.id)).toEqual([id]);
  });

  it("writes nothing when one item is invalid, locating it by index", async () => {
    const co = await createCompany();
    const res = await api(co.key, BASE, {
      method: "POST",
      json: [{ name: "Fine" }, { name: "   " }, { name: null }, { title: "x" }],
    });
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
    expect(detail.map((d) => d.loc)).toEqual(
      expect.arrayContaining([
        ["body", 1, "name"],
        ["body", 2, "name"],
        ["body", 3, "title"],
      ]),
    );
    expect((await filter(co, {})).totalCount).toBe(0);
    const tooMany = await api(co.key, BASE, {
      method: "POST",
      json: Array.from({ length: 1001 }, (_, i) => ({ name: `W${i}` })),
    });
    expect(tooMany.status).toBe(422);
    expect((await filter(co, {})).totalCount).toBe(0);
  });
});

describe("PATCH /v1/simple-work-orders/{id}", () => {
  it("renames with 204 and an empty body; {} and the same name change nothing", async () => {
    const co = await createCompany();
    const [wo] = await createWorkOrders(co, ["Old name"]);
    const id = wo?.id ?? "";
    const res = await rename(co, id, { name: "  New name " });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect(await (await getWorkOrder(co, id)).json()).toMatchObject({ id, name: "New name" });
    expect((await rename(co, id, {})).status).toBe(204);
    expect((await rename(co, id, { name: "New name" })).status).toBe(204);
    expect(((await (await getWorkOrder(co, id)).json()) as WorkOrder).name).toBe("New name");
    // The old name is free again.
    const [fresh] = await createWorkOrders(co, ["Old name"]);
    expect(fresh?.id).not.toBe(id);
  });

  it("answers 409 naming the holder when the name belongs to another work order, deleted included", async () => {
    const co = await createCompany();
    const [a, b, c] = await createWorkOrders(co, ["Alpha", "Beta", "Gamma"]);
    const live = await rename(co, a?.id ?? "", { name: "Beta" });
    expect(live.status).toBe(409);
    const liveDetail = ((await live.json()) as { detail: string }).detail;
    expect(typeof liveDetail).toBe("string");
    expect(liveDetail).toContain("Beta");
    expect(liveDetail).toContain(b?.id ?? "missing");
    expect((await remove(co, c?.id ?? "")).status).toBe(204);
    const deleted = await rename(co, a?.id ?? "", { name: "Gamma" });
    expect(deleted.status).toBe(409);
    const deletedDetail = ((await deleted.json()) as { detail: string }).detail;
    expect(deletedDetail).toContain(c?.id ?? "missing");
    expect(deletedDetail).toContain("deleted");
    expect(((await (await getWorkOrder(co, a?.id ?? "")).json()) as WorkOrder).name).toBe("Alpha");
  });

  it("reads a null name as unchanged", async () => {
    const co = await createCompany();
    const [wo] = await createWorkOrders(co, ["Kept"]);
    const id = wo?.id ?? "";
    expect((await rename(co, id, { name: null })).status).toBe(204);
    expect(((await (await getWorkOrder(co, id)).json()) as WorkOrder).name).toBe("Kept");
  });

  it("answers 422 to a blank name, an unknown field or a malformed id, and 404 to a deleted one", async () => {
    const co = await createCompany();
    const [wo] = await createWorkOrders(co, ["Target"]);
    const id = wo?.id ?? "";
    for (const [body, loc] of [
      [{ name: 5 }, ["body", "name"]],
      [{ name: " " }, ["body", "name"]],
      [{ name: "x", status: "done" }, ["body", "status"]],
    ] as const) {
      const res = await rename(co, id, body);
      expect(res.status).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail.map((d) => d.loc)).toContainEqual(loc);
    }
    expect((await rename(co, "nope", { name: "x" })).status).toBe(422);
    expect((await remove(co, id)).status).toBe(204);
    expect((await rename(co, id, { name: "Other" })).status).toBe(404);
    expect((await remove(co, id)).status).toBe(404);
  });
});

describe("POST /v1/simple-work-orders/filters", () => {
  it("orders by name, then id, and pages without overlap", async () => {
    const co = await createCompany();
    await createWorkOrders(co, ["delta", "Alpha", "charlie", "Bravo", "echo"]);
    const all = await filter(co, { limit: 100 });
    // SQLite's binary collation: upper case before lower case.
    expect(all.simpleWorkOrders.map((w) => w.name)).toEqual([
      "Alpha",
      "Bravo",
      "charlie",
      "delta",
      "echo",
    ]);
    const p1 = await filter(co, { limit: 2 });
    const p3 = await filter(co, { limit: 2, page: 3 });
    expect(p1).toMatchObject({ totalCount: 5, totalPages: 3, currentPage: 1 });
    expect(p1.simpleWorkOrders.map((w) => w.name)).toEqual(["Alpha", "Bravo"]);
    expect(p3.simpleWorkOrders.map((w) => w.name)).toEqual(["echo"]);
    expect(await filter(co, { limit: 2, page: 4 })).toEqual({
      totalCount: 5,
      totalPages: 3,
      currentPage: 4,
      simpleWorkOrders: [],
    });
  });

  it("matches names as a LIKE pattern where % is the only wildcard", async () => {
    const co = await createCompany();
    await createWorkOrders(co, [
      "WO_2024_001",
      "WO-2024-002",
      "WOX2024",
      "Other 2024",
      "wo_2025_001",
    ]);
    const names = async (search: string | null) =>
      (await filter(co, { names: { search }, limit: 100 })).simpleWorkOrders.map((w) => w.name);
    expect(await names("WO%")).toEqual(["WO-2024-002", "WOX2024", "WO_2024_001", "wo_2025_001"]);
    expect(await names("%2024%")).toEqual(["Other 2024", "WO-2024-002", "WOX2024", "WO_2024_001"]);
    // `_` is a literal underscore, not "any character".
    expect(await names("WO_2024%")).toEqual(["WO_2024_001"]);
    expect(await names("WO_%")).toEqual(["WO_2024_001", "wo_2025_001"]);
    // Without % the pattern is the whole name (ASCII case-insensitive).
    expect(await names("other 2024")).toEqual(["Other 2024"]);
    expect(await names("Other")).toEqual([]);
    expect(await names("")).toHaveLength(5);
    expect(await names(null)).toHaveLength(5);
  });

  it("filters by include/exclude ids, combined with the name pattern", async () => {
    const co = await createCompany();
    const [a, b, c] = await createWorkOrders(co, ["Line A", "Line B", "Cell C"]);
    const ids = async (body: unknown) => (await filter(co, body)).simpleWorkOrders.map((w) => w.id);
    expect(await ids({ simpleWorkOrders: { include: [c?.id, a?.id] } })).toEqual([c?.id, a?.id]);
    expect(await ids({ simpleWorkOrders: { exclude: [a?.id] } })).toEqual([c?.id, b?.id]);
    expect(
      await ids({ simpleWorkOrders: { include: [a?.id, c?.id] }, names: { search: "Line%" } }),
    ).toEqual([a?.id]);
    expect(await ids({ simpleWorkOrders: { include: [] } })).toHaveLength(3);
  });

  it("rejects patterns over 50 bytes with 422, and runs 50-byte ones", async () => {
    const co = await createCompany();
    await createWorkOrders(co, ["x".repeat(50), "é".repeat(25)]);
    const post = (search: string) =>
      api(co.key, `${BASE}/filters`, { method: "POST", json: { names: { search } } });
    for (const search of ["%".repeat(51), "a".repeat(51), "é".repeat(26), "_".repeat(26)]) {
      const res = await post(search);
      expect(res.status, search).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail[0]?.loc).toEqual(["body", "names", "search"]);
    }
    for (const [search, count] of [
      ["x".repeat(50), 1],
      ["é".repeat(25), 1],
      ["%".repeat(50), 2],
      ["_".repeat(25), 0],
      [`${"%x".repeat(24)}%%`, 1],
    ] as const) {
      const res = await post(search);
      expect(res.status, search).toBe(200);
      expect(((await res.json()) as WorkOrderPage).totalCount, search).toBe(count);
    }
  });

  it("never shows another company's work orders, even by id or exact name", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const [theirs] = await createWorkOrders(a, ["Shared"]);
    expect((await filter(b, { simpleWorkOrders: { include: [theirs?.id] } })).totalCount).toBe(0);
    expect((await filter(b, { names: { search: "Shared" } })).totalCount).toBe(0);
    // The same name in another company is another work order.
    const [mine] = await createWorkOrders(b, ["Shared"]);
    expect(mine?.id).not.toBe(theirs?.id);
  });
});

describeSecurity("Simple work orders", {
  routes: [
    { method: "POST", path: BASE, scope: "simple_work_orders.create", body: [{ name: "A" }] },
    { method: "POST", path: `${BASE}/filters`, scope: "simple_work_orders.read", body: {} },
    { method: "GET", path: `${BASE}/{id}`, scope: "simple_work_orders.read" },
    {
      method: "PATCH",
      path: `${BASE}/{id}`,
      scope: "simple_work_orders.update",
      body: { name: "Taken over" },
    },
    { method: "DELETE", path: `${BASE}/{id}`, scope: "simple_work_orders.delete" },
  ],
  placeholderId: "6f1c2d34-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
  createForeignId: async (owner) => {
    const [wo] = await createWorkOrders(owner, ["Owned"]);
    return wo?.id ?? "";
  },
  checkOwnerRecord: async (owner, id) => {
    const res = await getWorkOrder(owner, String(id));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "Owned" });
  },
});
