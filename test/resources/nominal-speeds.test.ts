import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { describeSecurity } from "../fixtures/security";
import { api, createCompany, createMachines, type TestCompany, type TestMachine } from "../harness";

type NominalSpeed = Api["NominalSpeed"];

type NominalSpeedPage = Api["NominalSpeedPage"];

type Sku = Api["Sku"];

type ValidationBody = Api["ValidationError"];

const BASE = "/v1/nominal-speeds";

async function createSkus(co: TestCompany, items: unknown[]): Promise<Sku[]> {
  const res = await api(co.key, "/v1/skus", { method: "POST", json: items });
  expect(res.status).toBe(200);
  return (await res.json()) as Sku[];
}

const post = (co: TestCompany, items: unknown[]) =>
  api(co.key, BASE, { method: "POST", json: items });

async function createSpeeds(co: TestCompany, items: unknown[]): Promise<NominalSpeed[]> {
  const res = await post(co, items);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as NominalSpeed[];
}

async function filter(co: TestCompany, body: unknown): Promise<NominalSpeedPage> {
  const res = await api(co.key, `${BASE}/filters`, { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as NominalSpeedPage;
}

const getSpeed = (co: TestCompany, id: string) => api(co.key, `${BASE}/${id}`);
const patchSpeed = (co: TestCompany, id: string, body: unknown) =>
  api(co.key, `${BASE}/${id}`, { method: "PATCH", json: body });
const deleteSpeed = (co: TestCompany, id: string) =>
  api(co.key, `${BASE}/${id}`, { method: "DELETE" });

interface Plant {
  co: TestCompany;
  m1: TestMachine;
  m2: TestMachine;
  a: Sku;
  b: Sku;
}

async function plant(): Promise<Plant> {
  const co = await createCompany();
  const [m1, m2] = await createMachines(co.id, [{ name: "Press 1" }, { name: "Press 2" }]);
  const [a, b] = await createSkus(co, [
    { sku: "P-A", name: "Alpha", description: "First", unit: "boxes" },
    { sku: "P-B", name: "Beta" },
  ]);
  if (!m1 || !m2 || !a || !b) throw new Error("plant not created");
  return { co, m1, m2, a, b };
}

describe("POST /v1/nominal-speeds", () => {
  it("creates by id or by name, expands machine and SKU, defaults countingFactor to 1 (200)", async () => {
    const { co, m1, m2, a, b } = await plant();
    const [byId, byName, byCode] = await createSpeeds(co, [
      { nominalSpeed: 120, machine: { id: m1.id }, sku: { id: a.id }, countingFactor: 12 },
      { nominalSpeed: 60.5, machine: { name: "Press 2" }, sku: { name: "Beta" } },
      { nominalSpeed: 30, machine: { id: m2.id, name: "Press 2" }, sku: { name: "P-A" } },
    ]);
    expect(byId).toMatchObject({
      machine: { id: m1.id, name: "Press 1" },
      sku: { id: a.id, sku: "P-A", name: "Alpha", description: "First", unit: "boxes" },
      nominalSpeed: 120,
      countingFactor: 12,
      deletedAt: null,
    });
    expect(byName).toMatchObject({
      machine: { id: m2.id },
      sku: { id: b.id, name: "Beta", description: null, unit: "units" },
      nominalSpeed: 60.5,
      countingFactor: 1,
    });
    expect(byCode).toMatchObject({ machine: { id: m2.id }, sku: { id: a.id } });
    const res = await getSpeed(co, byId?.id ?? "");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(byId);
  });

  it("answers 422 at the item's machine/sku for a missing, unknown or ambiguous reference, writing nothing", async () => {
    const { co, m1, a } = await plant();
    await createMachines(co.id, [{ name: "Twin" }, { name: "Twin" }]);
    await createSkus(co, [
      { sku: "DUP", name: "Dup" },
      { sku: "Other", name: "DUP" },
    ]);
    const other = await createCompany();
    const [foreignMachine] = await createMachines(other.id, [{ name: "Press 1" }]);
    const good = { nominalSpeed: 1, machine: { id: m1.id }, sku: { id: a.id } };
    // A reference with neither id nor name is refused by validation, before any lookup.
    const empty = await post(co, [good, { nominalSpeed: 1, machine: {}, sku: { id: a.id } }]);
    expect(empty.status).toBe(422);
    expect(((await empty.json()) as ValidationBody).detail.map((d) => d.loc)).toEqual([
      ["body", 1, "machine"],
    ]);
    const res = await post(co, [
      good,
      { nominalSpeed: 1, machine: { id: m1.id, name: "Press 2" }, sku: { id: a.id } },
      { nominalSpeed: 1, machine: { name: "Nope" }, sku: { id: a.id } },
      { nominalSpeed: 1, machine: { name: "Twin" }, sku: { id: a.id } },
      { nominalSpeed: 1, machine: { id: foreignMachine?.id }, sku: { id: a.id } },
      { nominalSpeed: 1, machine: { id: m1.id }, sku: { name: "DUP" } },
      { nominalSpeed: 1, machine: { id: m1.id }, sku: { id: crypto.randomUUID() } },
    ]);
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as ValidationBody).detail;
    expect(detail.map((d) => d.loc)).toEqual([
      ["body", 1, "machine"],
      ["body", 2, "machine"],
      ["body", 3, "machine"],
      ["body", 4, "machine"],
      ["body", 5, "sku"],
      ["body", 6, "sku"],
    ]);
    expect(detail[2]?.type).toBe("ambiguous");
    expect(detail[4]?.msg).toContain("2 SKUs");
    expect((await filter(co, {})).totalCount).toBe(0);
  });

  it("answers 422 for nominalSpeed or countingFactor <= 0, missing fields and unknown fields", async () => {
    const { co, m1, a } = await plant();
    const ref = { machine: { id: m1.id }, sku: { id: a.id } };
    for (const [item, loc] of [
      [{ ...ref, nominalSpeed: 0 }, ["body", 0, "nominalSpeed"]],
      [{ ...ref, nominalSpeed: -5 }, ["body", 0, "nominalSpeed"]],
      [{ ...ref, nominalSpeed: 5, countingFactor: 0 }, ["body", 0, "countingFactor"]],
      [{ ...ref }, ["body", 0, "nominalSpeed"]],
      [{ nominalSpeed: 5, sku: { id: a.id } }, ["body", 0, "machine"]],
      [{ ...ref, nominalSpeed: 5, speed: 3 }, ["body", 0, "speed"]],
      [{ ...ref, nominalSpeed: "fast" }, ["body", 0, "nominalSpeed"]],
    ] as const) {
      const res = await post(co, [item]);
      expect(res.status, JSON.stringify(item)).toBe(422);
      expect(((await res.json()) as ValidationBody).detail.map((d) => d.loc)).toContainEqual(loc);
    }
    expect((await filter(co, {})).totalCount).toBe(0);
  });

  it("keeps one active nominal speed per machine/SKU pair: 409 naming the existing id", async () => {
    const { co, m1, m2, a } = await plant();
    const [existing] = await createSpeeds(co, [
      { nominalSpeed: 10, machine: { id: m1.id }, sku: { id: a.id } },
    ]);
    const res = await post(co, [
      { nominalSpeed: 20, machine: { id: m2.id }, sku: { id: a.id } },
      { nominalSpeed: 30, machine: { name: "Press 1" }, sku: { name: "Alpha" } },
    ]);
    expect(res.status).toBe(409);
    const { detail } = (await res.json()) as { detail: string };
    expect(detail).toContain(existing?.id ?? "missing");
    // All or nothing: the valid first item was not created either.
    expect((await filter(co, {})).nominalSpeeds.map((n) => n.id)).toEqual([existing?.id]);
    // The same pair twice in one array is a 422 on the second item.
    const twice = await post(co, [
      { nominalSpeed: 20, machine: { id: m2.id }, sku: { id: a.id } },
      { nominalSpeed: 25, machine: { name: "Press 2" }, sku: { name: "P-A" } },
    ]);
    expect(twice.status).toBe(422);
    expect(((await twice.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", 1]);
    // Once deleted, the pair is free again.
    expect((await deleteSpeed(co, existing?.id ?? "")).status).toBe(204);
    const [again] = await createSpeeds(co, [
      { nominalSpeed: 11, machine: { id: m1.id }, sku: { id: a.id } },
    ]);
    expect(again?.id).not.toBe(existing?.id);
  });

  it("accepts archived SKUs but not deleted ones", async () => {
    const { co, m1, a, b } = await plant();
    expect(
      (await api(co.key, `/v1/skus/${a.id}`, { method: "PATCH", json: { archived: true } })).status,
    ).toBe(204);
    expect((await api(co.key, `/v1/skus/${b.id}`, { method: "DELETE" })).status).toBe(204);
    await createSpeeds(co, [{ nominalSpeed: 1, machine: { id: m1.id }, sku: { id: a.id } }]);
    const res = await post(co, [{ nominalSpeed: 1, machine: { id: m1.id }, sku: { id: b.id } }]);
    expect(res.status).toBe(422);
    expect(((await res.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", 0, "sku"]);
  });
});

describe("PATCH /v1/nominal-speeds/{id}", () => {
  it("changes only the fields sent, including the machine or SKU, with 204", async () => {
    const { co, m1, m2, a, b } = await plant();
    const [ns] = await createSpeeds(co, [
      { nominalSpeed: 10, machine: { id: m1.id }, sku: { id: a.id }, countingFactor: 6 },
    ]);
    const id = ns?.id ?? "";
    expect((await patchSpeed(co, id, {})).status).toBe(204);
    expect(await (await getSpeed(co, id)).json()).toEqual(ns);
    expect((await patchSpeed(co, id, { nominalSpeed: 12.5 })).status).toBe(204);
    expect(await (await getSpeed(co, id)).json()).toMatchObject({
      nominalSpeed: 12.5,
      countingFactor: 6,
    });
    expect(
      (await patchSpeed(co, id, { machine: { name: "Press 2" }, sku: { id: b.id } })).status,
    ).toBe(204);
    expect(await (await getSpeed(co, id)).json()).toMatchObject({
      machine: { id: m2.id, name: "Press 2" },
      sku: { id: b.id, name: "Beta" },
      nominalSpeed: 12.5,
    });
  });

  it("reads null for a field that cannot be null as unchanged", async () => {
    const { co, m1, a } = await plant();
    const [one] = await createSpeeds(co, [
      { nominalSpeed: 10, countingFactor: 6, machine: { id: m1.id }, sku: { id: a.id } },
    ]);
    const id = one?.id ?? "";
    const body = { nominalSpeed: null, countingFactor: null, machine: null, sku: null };
    expect((await patchSpeed(co, id, body)).status).toBe(204);
    expect(await (await getSpeed(co, id)).json()).toMatchObject({
      nominalSpeed: 10,
      countingFactor: 6,
      machine: { id: m1.id },
      sku: { id: a.id },
    });
    expect((await patchSpeed(co, id, { nominalSpeed: 12, machine: null })).status).toBe(204);
    expect(await (await getSpeed(co, id)).json()).toMatchObject({
      nominalSpeed: 12,
      countingFactor: 6,
      machine: { id: m1.id },
    });
  });

  it("answers 422 to <= 0, unknown fields and bad references; 409 when the new pair is taken", async () => {
    const { co, m1, m2, a } = await plant();
    const [one, two] = await createSpeeds(co, [
      { nominalSpeed: 10, machine: { id: m1.id }, sku: { id: a.id } },
      { nominalSpeed: 20, machine: { id: m2.id }, sku: { id: a.id } },
    ]);
    const id = one?.id ?? "";
    for (const [body, loc] of [
      [{ nominalSpeed: "fast" }, ["body", "nominalSpeed"]],
      [{ countingFactor: -1 }, ["body", "countingFactor"]],
      [{ nominalSpeed: 0 }, ["body", "nominalSpeed"]],
      [{ machine: 3 }, ["body", "machine"]],
      [{ machine: { name: "Ghost" } }, ["body", "machine"]],
      [{ sku: {} }, ["body", "sku"]],
      [{ colour: "red" }, ["body", "colour"]],
    ] as const) {
      const res = await patchSpeed(co, id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(((await res.json()) as ValidationBody).detail.map((d) => d.loc)).toContainEqual(loc);
    }
    const conflict = await patchSpeed(co, id, { machine: { id: m2.id } });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { detail: string }).detail).toContain(two?.id ?? "missing");
    expect(await (await getSpeed(co, id)).json()).toEqual(one);
  });
});

describe("DELETE /v1/nominal-speeds/{id}", () => {
  it("soft-deletes: 204, then 404 everywhere and gone from searches", async () => {
    const { co, m1, a } = await plant();
    const [ns] = await createSpeeds(co, [
      { nominalSpeed: 10, machine: { id: m1.id }, sku: { id: a.id } },
    ]);
    const id = ns?.id ?? "";
    expect((await deleteSpeed(co, id)).status).toBe(204);
    expect((await getSpeed(co, id)).status).toBe(404);
    expect((await patchSpeed(co, id, { nominalSpeed: 3 })).status).toBe(404);
    expect((await deleteSpeed(co, id)).status).toBe(404);
    expect((await filter(co, {})).totalCount).toBe(0);
  });
});

describe("POST /v1/nominal-speeds/filters", () => {
  it("filters by machines, SKUs and nominalSpeed comparisons, alone and combined", async () => {
    const { co, m1, m2, a, b } = await plant();
    const [m1a, m1b, m2a, m2b] = await createSpeeds(co, [
      { nominalSpeed: 10, machine: { id: m1.id }, sku: { id: a.id } },
      { nominalSpeed: 20, machine: { id: m1.id }, sku: { id: b.id } },
      { nominalSpeed: 30, machine: { id: m2.id }, sku: { id: a.id } },
      { nominalSpeed: 40, machine: { id: m2.id }, sku: { id: b.id } },
    ]);
    const ids = async (body: unknown) => (await filter(co, body)).nominalSpeeds.map((n) => n.id);
    // Ordered by machine name, then SKU code.
    expect(await ids({})).toEqual([m1a?.id, m1b?.id, m2a?.id, m2b?.id]);
    expect(await ids({ machines: { include: [m2.id] } })).toEqual([m2a?.id, m2b?.id]);
    expect(await ids({ machines: { exclude: [m2.id] } })).toEqual([m1a?.id, m1b?.id]);
    expect(await ids({ skus: { include: [b.id] } })).toEqual([m1b?.id, m2b?.id]);
    expect(await ids({ skus: { exclude: [b.id] } })).toEqual([m1a?.id, m2a?.id]);
    expect(await ids({ nominalSpeed: { greaterThan: 20 } })).toEqual([m2a?.id, m2b?.id]);
    expect(await ids({ nominalSpeed: { greaterThanOrEqual: 20 } })).toEqual([
      m1b?.id,
      m2a?.id,
      m2b?.id,
    ]);
    expect(await ids({ nominalSpeed: { lessThan: 20 } })).toEqual([m1a?.id]);
    expect(await ids({ nominalSpeed: { lessThanOrEqual: 20 } })).toEqual([m1a?.id, m1b?.id]);
    expect(await ids({ nominalSpeed: { equal: 30 } })).toEqual([m2a?.id]);
    expect(await ids({ nominalSpeed: { notEqual: 30 } })).toEqual([m1a?.id, m1b?.id, m2b?.id]);
    expect(await ids({ nominalSpeed: { greaterThan: 10, lessThan: 40 } })).toEqual([
      m1b?.id,
      m2a?.id,
    ]);
    expect(
      await ids({
        machines: { include: [m1.id, m2.id] },
        skus: { include: [a.id] },
        nominalSpeed: { greaterThan: 15 },
      }),
    ).toEqual([m2a?.id]);
    expect(await ids({ nominalSpeed: { greaterThan: 100 } })).toEqual([]);
  });

  it("pages with ceil(total/limit) pages and an empty page past the last", async () => {
    const { co, m1, m2, a, b } = await plant();
    await createSpeeds(co, [
      { nominalSpeed: 1, machine: { id: m1.id }, sku: { id: a.id } },
      { nominalSpeed: 2, machine: { id: m1.id }, sku: { id: b.id } },
      { nominalSpeed: 3, machine: { id: m2.id }, sku: { id: a.id } },
    ]);
    const first = await filter(co, { limit: 2 });
    expect(first).toMatchObject({ totalCount: 3, totalPages: 2, currentPage: 1 });
    const second = await filter(co, { limit: 2, page: 2 });
    expect([...first.nominalSpeeds, ...second.nominalSpeeds].map((n) => n.nominalSpeed)).toEqual([
      1, 2, 3,
    ]);
    expect(await filter(co, { limit: 2, page: 3 })).toEqual({
      totalCount: 3,
      totalPages: 2,
      currentPage: 3,
      nominalSpeeds: [],
    });
  });

  it("rejects malformed filters with 422", async () => {
    const co = await createCompany();
    for (const body of [
      { nominalSpeed: { greaterThan: "10" } },
      { nominalSpeed: { between: [1, 2] } },
      { machines: { include: ["x"] } },
      { skus: { include: [1] } },
      { limit: 101 },
    ]) {
      const res = await api(co.key, `${BASE}/filters`, { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("never shows another company's nominal speeds, even by machine or SKU id", async () => {
    const owner = await plant();
    await createSpeeds(owner.co, [
      { nominalSpeed: 5, machine: { id: owner.m1.id }, sku: { id: owner.a.id } },
    ]);
    const other = await createCompany();
    expect((await filter(other, {})).totalCount).toBe(0);
    expect((await filter(other, { machines: { include: [owner.m1.id] } })).totalCount).toBe(0);
    expect((await filter(other, { skus: { include: [owner.a.id] } })).totalCount).toBe(0);
  });
});

describeSecurity("Nominal speeds", {
  routes: [
    {
      method: "POST",
      path: BASE,
      scope: "nominal_speeds.create",
      body: [{ nominalSpeed: 1, machine: { id: 1 }, sku: { name: "A" } }],
    },
    { method: "POST", path: `${BASE}/filters`, scope: "nominal_speeds.read", body: {} },
    { method: "GET", path: `${BASE}/{id}`, scope: "nominal_speeds.read" },
    {
      method: "PATCH",
      path: `${BASE}/{id}`,
      scope: "nominal_speeds.update",
      body: { nominalSpeed: 999 },
    },
    { method: "DELETE", path: `${BASE}/{id}`, scope: "nominal_speeds.delete" },
  ],
  placeholderId: "6f1c2d34-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
  createForeignId: async (owner) => {
    const [m] = await createMachines(owner.id, [{ name: "Owner press" }]);
    const [s] = await createSkus(owner, [{ sku: "OWN" }]);
    const [ns] = await createSpeeds(owner, [
      { nominalSpeed: 7, machine: { id: m?.id }, sku: { id: s?.id } },
    ]);
    return ns?.id ?? "";
  },
  checkOwnerRecord: async (owner, id) => {
    const res = await getSpeed(owner, String(id));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ nominalSpeed: 7, deletedAt: null });
  },
});
