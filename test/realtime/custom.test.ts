/**
 * Realtime `custom` values are kept exactly as given, whatever their keys.
 */
import { describe, expect, it } from "vitest";
import { plant } from "../fixtures/plant";
import { api } from "../harness";

describe("realtime custom", () => {
  it("keeps a __proto__ key exactly, as an own key, with every other key", async () => {
    const p = await plant(1);
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const custom = '{"__proto__":{"admin":true},"lot":"L-1","nested":{"__proto__":1}}';
    const res = await api(p.co.key, `/v1/realtime/${m.id}/sku`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"sku": "Apple juice", "custom": ${custom}}`,
    });
    expect(res.status, await res.clone().text()).toBe(204);
    const state = await api(p.co.key, `/v1/realtime/${m.id}`);
    // Compared as JSON text: an object literal's `__proto__` would set a prototype instead.
    const current = (JSON.parse(await state.text()) as { current: { custom: object } }).current;
    expect(Object.keys(current.custom)).toEqual(["__proto__", "lot", "nested"]);
    expect(JSON.stringify(current.custom)).toBe(custom);
    expect(Object.getPrototypeOf(current.custom)).toBe(Object.prototype);
  });

  it("refuses a custom that is not an object with 422 naming it", async () => {
    const p = await plant(1);
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    for (const custom of [[1, 2], "text", 3]) {
      const res = await api(p.co.key, `/v1/realtime/${m.id}/sku`, {
        method: "POST",
        json: { sku: "Apple juice", custom },
      });
      expect(res.status, JSON.stringify(custom)).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail.map((d) => d.loc)).toContainEqual(["body", "custom"]);
    }
  });
});
