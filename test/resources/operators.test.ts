import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { describeSecurity } from "../fixtures/security";
import { api, createCompany, type TestCompany } from "../harness";

type Operator = Api["Operator"];

type OperatorPage = Api["OperatorPage"];

async function createOperators(co: TestCompany, items: unknown[]): Promise<Operator[]> {
  const res = await api(co.key, "/v1/operators", { method: "POST", json: items });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Operator[];
}

async function filter(co: TestCompany, body: unknown): Promise<OperatorPage> {
  const res = await api(co.key, "/v1/operators/filters", { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as OperatorPage;
}

const getOperator = (co: TestCompany, id: number | string) => api(co.key, `/v1/operators/${id}`);
const patchOperator = (co: TestCompany, id: number | string, body: unknown) =>
  api(co.key, `/v1/operators/${id}`, { method: "PATCH", json: body });

describe("POST /v1/operators", () => {
  it("creates operators with integer ids and optional names, answering 200", async () => {
    const co = await createCompany();
    const made = await createOperators(co, [
      { firstName: " José ", lastName: "Muñoz" },
      { firstName: "Ana" },
      {},
      { firstName: null, lastName: null },
    ]);
    expect(made.map((o) => [o.firstName, o.lastName])).toEqual([
      ["José", "Muñoz"],
      ["Ana", null],
      [null, null],
      [null, null],
    ]);
    for (const o of made) {
      expect(Number.isInteger(o.id)).toBe(true);
      expect(o.company).toEqual({ id: co.id, name: co.name });
    }
    expect(new Set(made.map((o) => o.id)).size).toBe(4);
    const res = await getOperator(co, made[0]?.id ?? 0);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(made[0]);
  });

  it("writes nothing when one item is invalid, locating it by index", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "A" }, { firstName: "B" }, { firstName: 7 }, { nickname: "x" }],
    });
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
    expect(detail.map((d) => d.loc)).toEqual(
      expect.arrayContaining([
        ["body", 2, "firstName"],
        ["body", 3, "nickname"],
      ]),
    );
    expect((await filter(co, {})).totalCount).toBe(0);
  });

  it("rejects more than 1,000 operators", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/operators", {
      method: "POST",
      json: Array.from({ length: 1001 }, () => ({ firstName: "X" })),
    });
    expect(res.status).toBe(422);
    expect((await filter(co, {})).totalCount).toBe(0);
  });
});

describe("PATCH /v1/operators/{operator_id}", () => {
  it("completes an operator with only the fields sent; null clears; {} changes nothing", async () => {
    const co = await createCompany();
    const [op] = await createOperators(co, [{ firstName: "Ana" }]);
    const id = op?.id ?? 0;
    expect((await patchOperator(co, id, {})).status).toBe(204);
    expect(await (await getOperator(co, id)).json()).toEqual(op);
    expect((await patchOperator(co, id, { lastName: "Pérez" })).status).toBe(204);
    expect(await (await getOperator(co, id)).json()).toMatchObject({
      firstName: "Ana",
      lastName: "Pérez",
    });
    expect(
      (await filter(co, { lastName: { search: "perez" } })).operators.map((o) => o.id),
    ).toEqual([id]);
    expect((await patchOperator(co, id, { firstName: "Anaïs", lastName: null })).status).toBe(204);
    expect(await (await getOperator(co, id)).json()).toMatchObject({
      firstName: "Anaïs",
      lastName: null,
    });
    expect((await filter(co, { lastName: { search: "perez" } })).totalCount).toBe(0);
    expect((await filter(co, { firstName: { search: "ANAIS" } })).totalCount).toBe(1);
  });

  it("answers 422 to unknown fields or a non-integer id, and 404 to an unknown id", async () => {
    const co = await createCompany();
    const [op] = await createOperators(co, [{ firstName: "Ana" }]);
    const res = await patchOperator(co, op?.id ?? 0, { email: "a@b.c" });
    expect(res.status).toBe(422);
    const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
    expect(detail[0]?.loc).toEqual(["body", "email"]);
    expect((await patchOperator(co, "abc", { firstName: "x" })).status).toBe(422);
    expect((await getOperator(co, "1.5")).status).toBe(422);
    expect((await patchOperator(co, 999_999_999, { firstName: "x" })).status).toBe(404);
  });
});

describe("DELETE /v1/operators/{operator_id}", () => {
  it("removes the operator from the roster: 204, then 404 and gone from searches", async () => {
    const co = await createCompany();
    const [stay, leave] = await createOperators(co, [
      { firstName: "Stay" },
      { firstName: "Leave" },
    ]);
    const id = leave?.id ?? 0;
    expect((await api(co.key, `/v1/operators/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await getOperator(co, id)).status).toBe(404);
    expect((await patchOperator(co, id, { firstName: "Back" })).status).toBe(404);
    expect((await api(co.key, `/v1/operators/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await filter(co, {})).operators.map((o) => o.id)).toEqual([stay?.id]);
  });
});

describe("POST /v1/operators/filters", () => {
  it("searches first and last names fuzzily, alone and combined (AND)", async () => {
    const co = await createCompany();
    const [jose, josefa, maria, nobody] = await createOperators(co, [
      { firstName: "José", lastName: "Muñoz" },
      { firstName: "Josefa", lastName: "García" },
      { firstName: "MARÍA JOSÉ", lastName: "Núñez" },
      {},
    ]);
    const ids = async (body: unknown) => (await filter(co, body)).operators.map((o) => o.id);
    expect(await ids({ firstName: { search: "jose" } })).toEqual([jose?.id, josefa?.id, maria?.id]);
    expect(await ids({ lastName: { search: "NUNEZ" } })).toEqual([maria?.id]);
    expect(await ids({ lastName: { search: "munoz" } })).toEqual([jose?.id]);
    expect(await ids({ firstName: { search: "josé" }, lastName: { search: "garcia" } })).toEqual([
      josefa?.id,
    ]);
    expect(await ids({ firstName: { search: "jose" }, lastName: { search: "perez" } })).toEqual([]);
    // No filter, or a blank one: everybody, missing names last.
    expect(await ids({ firstName: { search: " " } })).toEqual([
      jose?.id,
      josefa?.id,
      maria?.id,
      nobody?.id,
    ]);
    expect(await ids({ firstName: null, lastName: { search: null } })).toHaveLength(4);
  });

  it("pages with ceil(total/limit) pages, never overlapping, and empty past the last", async () => {
    const co = await createCompany();
    const made = await createOperators(
      co,
      Array.from({ length: 5 }, () => ({ firstName: "Same", lastName: "Name" })),
    );
    const first = await filter(co, { limit: 2 });
    expect(first).toMatchObject({ totalCount: 5, totalPages: 3, currentPage: 1 });
    const second = await filter(co, { limit: 2, page: 2 });
    const third = await filter(co, { limit: 2, page: 3 });
    const all = [...first.operators, ...second.operators, ...third.operators].map((o) => o.id);
    expect(all).toEqual(made.map((o) => o.id));
    expect(await filter(co, { limit: 2, page: 9 })).toEqual({
      totalCount: 5,
      totalPages: 3,
      currentPage: 9,
      operators: [],
    });
  });

  it("rejects long terms, bad pages and unknown filters with 422", async () => {
    const co = await createCompany();
    for (const body of [
      { firstName: { search: "a".repeat(51) } },
      { firstName: { query: "a" } },
      { page: -1 },
      { limit: 1000 },
      { email: { search: "a" } },
    ]) {
      const res = await api(co.key, "/v1/operators/filters", { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("never shows another company's operators", async () => {
    const a = await createCompany();
    const b = await createCompany();
    await createOperators(a, [{ firstName: "Zoë" }]);
    expect((await filter(b, { firstName: { search: "zoe" } })).totalCount).toBe(0);
    expect((await filter(b, {})).totalCount).toBe(0);
  });
});

describeSecurity("Operators", {
  routes: [
    {
      method: "POST",
      path: "/v1/operators",
      scope: "operators.create",
      body: [{ firstName: "A" }],
    },
    { method: "POST", path: "/v1/operators/filters", scope: "operators.read", body: {} },
    { method: "GET", path: "/v1/operators/{id}", scope: "operators.read" },
    {
      method: "PATCH",
      path: "/v1/operators/{id}",
      scope: "operators.update",
      body: { firstName: "X" },
    },
    { method: "DELETE", path: "/v1/operators/{id}", scope: "operators.delete" },
  ],
  placeholderId: 1,
  createForeignId: async (owner) => {
    const [op] = await createOperators(owner, [{ firstName: "Owned" }]);
    return op?.id ?? 0;
  },
  checkOwnerRecord: async (owner, id) => {
    const res = await getOperator(owner, id);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ firstName: "Owned", lastName: null });
  },
});
