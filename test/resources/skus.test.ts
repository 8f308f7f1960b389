import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { describeSecurity } from "../fixtures/security";
import { api, createCompany, type TestCompany } from "../harness";

type Sku = Api["Sku"];

type SkuPage = Api["SkuPage"];

async function createSkus(co: TestCompany, items: unknown[]): Promise<Sku[]> {
  const res = await api(co.key, "/v1/skus", { method: "POST", json: items });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Sku[];
}

async function filter(co: TestCompany, body: unknown): Promise<SkuPage> {
  const res = await api(co.key, "/v1/skus/filters", { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as SkuPage;
}

async function getSku(co: TestCompany, id: string): Promise<Response> {
  return api(co.key, `/v1/skus/${id}`);
}

async function patchSku(co: TestCompany, id: string, body: unknown): Promise<Response> {
  return api(co.key, `/v1/skus/${id}`, { method: "PATCH", json: body });
}

describe("POST /v1/skus", () => {
  it("creates SKUs with defaults and returns them with 200, readable by GET", async () => {
    const co = await createCompany();
    const before = Date.now();
    const [a, b] = await createSkus(co, [
      { sku: "  P-0001 ", name: "Widget", description: "A widget", unit: "boxes", archived: true },
      { sku: "P-0002" },
    ]);
    expect(a).toMatchObject({
      company: { id: co.id, name: co.name },
      sku: "P-0001",
      name: "Widget",
      description: "A widget",
      unit: "boxes",
      archived: true,
      deletedAt: null,
    });
    expect(a?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Date.parse(a?.createdAt ?? "")).toBeGreaterThanOrEqual(before - 1000);
    expect(b).toMatchObject({
      sku: "P-0002",
      name: null,
      description: null,
      unit: "units",
      archived: false,
    });
    const res = await getSku(co, b?.id ?? "");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(b);
  });

  it("keeps an explicit null unit", async () => {
    const co = await createCompany();
    const [s] = await createSkus(co, [{ sku: "X", unit: null }]);
    expect(s?.unit).toBeNull();
  });

  it("writes nothing when one item is invalid, and locates it by index", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/skus", {
      method: "POST",
      json: [{ sku: "OK-1" }, { sku: "OK-2" }, { sku: "OK-3" }, { name: "no code" }],
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; type: string }[] };
    expect(body.detail).toContainEqual(
      expect.objectContaining({ loc: ["body", 3, "sku"], type: "missing" }),
    );
    expect((await filter(co, {})).totalCount).toBe(0);
  });

  it("rejects unknown fields, a blank code and a wrong type with 422", async () => {
    const co = await createCompany();
    for (const [item, loc] of [
      [{ sku: "A", colour: "red" }, ["body", 0, "colour"]],
      [{ sku: "   " }, ["body", 0, "sku"]],
      [{ sku: "A", archived: "yes" }, ["body", 0, "archived"]],
    ] as const) {
      const res = await api(co.key, "/v1/skus", { method: "POST", json: [item] });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
    }
  });

  it("accepts 1,000 items and rejects 1,001 or a non-array body", async () => {
    const co = await createCompany();
    const many = Array.from({ length: 1000 }, (_, i) => ({
      sku: `S-${String(i).padStart(4, "0")}`,
    }));
    const ok = await api(co.key, "/v1/skus", { method: "POST", json: many });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as Sku[]).length).toBe(1000);
    const tooMany = await api(co.key, "/v1/skus", {
      method: "POST",
      json: [...many, { sku: "one more" }],
    });
    expect(tooMany.status).toBe(422);
    const notArray = await api(co.key, "/v1/skus", { method: "POST", json: { sku: "A" } });
    expect(notArray.status).toBe(422);
    expect((await filter(co, {})).totalCount).toBe(1000);
  });
});

describe("PATCH /v1/skus/{sku_id}", () => {
  it("archives and unarchives; archived SKUs stay in GET and in searches", async () => {
    const co = await createCompany();
    const [s] = await createSkus(co, [{ sku: "ARCH-1", name: "Archivable" }]);
    const id = s?.id ?? "";
    expect((await patchSku(co, id, { archived: true })).status).toBe(204);
    const archived = (await (await getSku(co, id)).json()) as Sku;
    expect(archived.archived).toBe(true);
    expect(Date.parse(archived.updatedAt)).toBeGreaterThanOrEqual(Date.parse(s?.updatedAt ?? ""));
    const found = await filter(co, { names: { search: "archiv" } });
    expect(found.skus.map((x) => x.id)).toEqual([id]);
    expect((await patchSku(co, id, { archived: false })).status).toBe(204);
    expect(((await (await getSku(co, id)).json()) as Sku).archived).toBe(false);
  });

  it("changes only the fields sent, accepts null for nullable ones, and {} changes nothing", async () => {
    const co = await createCompany();
    const [s] = await createSkus(co, [
      { sku: "P-1", name: "Old", description: "Desc", unit: "kg" },
    ]);
    const id = s?.id ?? "";
    expect((await patchSku(co, id, {})).status).toBe(204);
    expect(await (await getSku(co, id)).json()).toEqual(s);
    expect((await patchSku(co, id, { name: "Néw", description: null })).status).toBe(204);
    const after = (await (await getSku(co, id)).json()) as Sku;
    expect(after).toMatchObject({
      sku: "P-1",
      name: "Néw",
      description: null,
      unit: "kg",
      archived: false,
    });
    // The search column follows the rename.
    expect((await filter(co, { names: { search: "new" } })).totalCount).toBe(1);
    expect((await filter(co, { names: { search: "old" } })).totalCount).toBe(0);
    // Changing the unit converts nothing: it is just the new label.
    expect((await patchSku(co, id, { unit: "boxes" })).status).toBe(204);
    expect(((await (await getSku(co, id)).json()) as Sku).unit).toBe("boxes");
  });

  it("reads null for sku/archived (never null) as unchanged, and null for name as a clear", async () => {
    const co = await createCompany();
    const [s] = await createSkus(co, [{ sku: "P-1", name: "Named", archived: true }]);
    const id = s?.id ?? "";
    expect((await patchSku(co, id, { sku: null, archived: null })).status).toBe(204);
    expect(await (await getSku(co, id)).json()).toMatchObject({ sku: "P-1", archived: true });
    expect((await patchSku(co, id, { sku: null, name: null, archived: false })).status).toBe(204);
    expect(await (await getSku(co, id)).json()).toMatchObject({
      sku: "P-1",
      name: null,
      archived: false,
    });
  });

  it("answers 422 to an unknown field or a blank sku, changing nothing", async () => {
    const co = await createCompany();
    const [s] = await createSkus(co, [{ sku: "P-1" }]);
    const id = s?.id ?? "";
    for (const [body, loc] of [
      [{ colour: "red" }, ["body", "colour"]],
      [{ sku: " " }, ["body", "sku"]],
      [{ archived: "yes" }, ["body", "archived"]],
      [{ name: "x", sku: "" }, ["body", "sku"]],
    ] as const) {
      const res = await patchSku(co, id, body);
      expect(res.status).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail.map((d) => d.loc)).toContainEqual(loc);
    }
    expect(await (await getSku(co, id)).json()).toEqual(s);
  });

  it("answers 404 to an unknown id and 422 to a malformed one", async () => {
    const co = await createCompany();
    expect((await patchSku(co, crypto.randomUUID(), { name: "x" })).status).toBe(404);
    expect((await patchSku(co, "not-a-uuid", { name: "x" })).status).toBe(422);
    expect((await getSku(co, "not-a-uuid")).status).toBe(422);
  });
});

describe("DELETE /v1/skus/{sku_id}", () => {
  it("soft-deletes: 204, then 404 on GET, PATCH and DELETE, and gone from searches", async () => {
    const co = await createCompany();
    const [keep, gone] = await createSkus(co, [{ sku: "KEEP" }, { sku: "GONE" }]);
    const id = gone?.id ?? "";
    expect((await api(co.key, `/v1/skus/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await getSku(co, id)).status).toBe(404);
    expect((await patchSku(co, id, { name: "x" })).status).toBe(404);
    expect((await api(co.key, `/v1/skus/${id}`, { method: "DELETE" })).status).toBe(404);
    const page = await filter(co, {});
    expect(page.skus.map((s) => s.id)).toEqual([keep?.id]);
    expect((await filter(co, { skus: { include: [id] } })).totalCount).toBe(0);
  });
});

describe("POST /v1/skus/filters", () => {
  it("pages in a stable order with ceil(total/limit) pages; past the last page is empty", async () => {
    const co = await createCompany();
    // Same code twice: the id breaks the tie so that pages never overlap.
    const made = await createSkus(
      co,
      ["C", "A", "B", "A", "E", "D", "F"].map((sku) => ({ sku })),
    );
    const seen: string[] = [];
    for (let page = 1; page <= 3; page += 1) {
      const res = await filter(co, { page, limit: 3 });
      expect(res).toMatchObject({ totalCount: 7, totalPages: 3, currentPage: page });
      seen.push(...res.skus.map((s) => s.id));
      expect(res.skus.length).toBe(page < 3 ? 3 : 1);
    }
    expect(new Set(seen).size).toBe(7);
    expect(new Set(seen)).toEqual(new Set(made.map((s) => s.id)));
    const codes = (await filter(co, { limit: 100 })).skus.map((s) => s.sku);
    expect(codes).toEqual(["A", "A", "B", "C", "D", "E", "F"]);
    const past = await filter(co, { page: 4, limit: 3 });
    expect(past).toEqual({ totalCount: 7, totalPages: 3, currentPage: 4, skus: [] });
  });

  it("uses page 1 and limit 10 for {}, null, or no body at all", async () => {
    const co = await createCompany();
    await createSkus(
      co,
      Array.from({ length: 12 }, (_, i) => ({ sku: `S${i}` })),
    );
    for (const body of [{}, { page: null, limit: null, skus: null, names: null }]) {
      const res = await filter(co, body);
      expect(res).toMatchObject({ totalCount: 12, totalPages: 2, currentPage: 1 });
      expect(res.skus.length).toBe(10);
    }
    const noBody = await api(co.key, "/v1/skus/filters", { method: "POST" });
    expect(noBody.status).toBe(200);
    expect(((await noBody.json()) as SkuPage).skus.length).toBe(10);
  });

  it("rejects page < 1, limit outside 1..100, unknown filters and long terms with 422", async () => {
    const co = await createCompany();
    for (const [body, loc] of [
      [{ page: 0 }, ["body", "page"]],
      [{ limit: 0 }, ["body", "limit"]],
      [{ limit: 101 }, ["body", "limit"]],
      [{ page: 1.5 }, ["body", "page"]],
      [{ colour: {} }, ["body", "colour"]],
      [{ names: { search: "x".repeat(51) } }, ["body", "names", "search"]],
      // 26 two-byte letters: 52 bytes.
      [{ description: { search: "é".repeat(26) } }, ["body", "description", "search"]],
      [{ skus: { include: "abc" } }, ["body", "skus", "include"]],
    ] as const) {
      const res = await api(co.key, "/v1/skus/filters", { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail.map((d) => d.loc)).toContainEqual(loc);
    }
    expect((await filter(co, { limit: 100, names: { search: "x".repeat(50) } })).totalCount).toBe(
      0,
    );
  });

  it("filters by each field fuzzily (case and accents), alone and combined", async () => {
    const co = await createCompany();
    const [jose, crema, acero, plain] = await createSkus(co, [
      { sku: "JOSÉ-01", name: "Café José", description: "Tostado oscuro", unit: "Kilogramos" },
      { sku: "crm-02", name: "Crème brûlée", description: "Postre CLÁSICO", unit: "units" },
      { sku: "ACR-03", name: "Acero", description: "Barra de acero", unit: "kilos" },
      { sku: "PLN-04" },
    ]);
    const ids = async (body: unknown) => (await filter(co, body)).skus.map((s) => s.id).sort();
    const sorted = (...xs: (Sku | undefined)[]) => xs.map((x) => x?.id).sort();
    expect(await ids({ names: { search: "jose" } })).toEqual(sorted(jose));
    expect(await ids({ names: { search: "CREME BRULEE" } })).toEqual(sorted(crema));
    expect(await ids({ names: { search: "  brûl " } })).toEqual(sorted(crema));
    expect(await ids({ skus: { search: "josé" } })).toEqual(sorted(jose));
    expect(await ids({ skus: { search: "-0" } })).toEqual(sorted(jose, crema, acero, plain));
    expect(await ids({ description: { search: "clasico" } })).toEqual(sorted(crema));
    expect(await ids({ unit: { search: "KILO" } })).toEqual(sorted(jose, acero));
    expect(await ids({ names: { search: "" } })).toEqual(sorted(jose, crema, acero, plain));
    // Combined with AND.
    expect(await ids({ unit: { search: "kilo" }, description: { search: "acero" } })).toEqual(
      sorted(acero),
    );
    expect(await ids({ unit: { search: "kilo" }, names: { search: "creme" } })).toEqual([]);
    // include / exclude by id.
    expect(await ids({ skus: { include: [jose?.id, crema?.id] } })).toEqual(sorted(jose, crema));
    expect(await ids({ skus: { exclude: [jose?.id] } })).toEqual(sorted(crema, acero, plain));
    expect(await ids({ skus: { include: [jose?.id, crema?.id], exclude: [crema?.id] } })).toEqual(
      sorted(jose),
    );
    expect(await ids({ skus: { include: [jose?.id], search: "crm" } })).toEqual([]);
    // A SQL wildcard is a plain character in a fuzzy search.
    expect(await ids({ names: { search: "%" } })).toEqual([]);
  });

  it("never shows another company's SKUs, even by id", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const [theirs] = await createSkus(a, [{ sku: "SHARED", name: "Shared name" }]);
    await createSkus(b, [{ sku: "MINE" }]);
    const all = await filter(b, {});
    expect(all.skus.map((s) => s.sku)).toEqual(["MINE"]);
    expect((await filter(b, { skus: { include: [theirs?.id] } })).totalCount).toBe(0);
    expect((await filter(b, { names: { search: "shared" } })).totalCount).toBe(0);
  });
});

describeSecurity("SKUs", {
  routes: [
    { method: "POST", path: "/v1/skus", scope: "skus.create", body: [{ sku: "A" }] },
    { method: "POST", path: "/v1/skus/filters", scope: "skus.read", body: {} },
    { method: "GET", path: "/v1/skus/{id}", scope: "skus.read" },
    { method: "PATCH", path: "/v1/skus/{id}", scope: "skus.update", body: { name: "hijacked" } },
    { method: "DELETE", path: "/v1/skus/{id}", scope: "skus.delete" },
  ],
  placeholderId: "6f1c2d34-5b6a-4c7d-8e9f-0a1b2c3d4e5f",
  createForeignId: async (owner) => {
    const [s] = await createSkus(owner, [{ sku: "FOREIGN" }]);
    return s?.id ?? "";
  },
  checkOwnerRecord: async (owner, id) => {
    const res = await getSku(owner, String(id));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ sku: "FOREIGN", name: null, deletedAt: null });
  },
});
