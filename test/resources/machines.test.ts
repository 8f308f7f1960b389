import { describe, expect, it } from "vitest";
import { api, call, createCompany, createKey, createMachines } from "../harness";

describe("GET /v1/machines", () => {
  it("lists the company's machines by id, including those without a uuid", async () => {
    const co = await createCompany();
    const made = await createMachines(co.id, [{ name: "Press 1" }, { name: "Bench", uuid: null }]);
    const res = await api(co.key, "/v1/machines");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: number; uuid: string | null; name: string }[];
    expect(body.map((m) => m.name)).toEqual(["Press 1", "Bench"]);
    expect(body[0]?.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(body[1]?.uuid).toBeNull();
    expect(body.map((m) => m.id)).toEqual(made.map((m) => m.id));
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("never shows another company's machines", async () => {
    const a = await createCompany();
    const b = await createCompany();
    await createMachines(a.id, [{ name: "A only" }]);
    const res = await api(b.key, "/v1/machines");
    expect(await res.json()).toEqual([]);
  });

  it("answers 401 with WWW-Authenticate without a credential or with an unknown one", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { "x-api-key": "pm_nope" },
      { authorization: "Bearer nope" },
    ];
    for (const headers of attempts) {
      const res = await call("/v1/machines", { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ detail: "Not authenticated" });
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
      expect(res.headers.get("x-request-id")).toBeTruthy();
    }
  });

  it("answers 403 naming the scope when the key lacks machines.read", async () => {
    const co = await createCompany();
    const key = await createKey(co.id, ["signals.read"]);
    const res = await api(key, "/v1/machines");
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      detail: "Not enough permissions. Missing scope: machines.read",
    });
  });
});
