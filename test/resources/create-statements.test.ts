/**
 * Every create endpoint sends a constant number of D1 statements, whatever
 * the number of items (issue 19): D1 counts each statement against its
 * per-invocation limit (1,000 on the paid plan, 50 on the free plan), and
 * Miniflare does not enforce it, so the count is asserted here.
 */
import { describe, expect, it } from "vitest";
import { countStatements } from "../fixtures/d1-counter";
import { api, createCompany, createMachines, type TestCompany } from "../harness";

const BASE = "http://api.test";
const MAX_STATEMENTS = 20;

function createRequest(co: TestCompany, path: string, items: unknown[]): Request {
  return new Request(`${BASE}${path}`, {
    method: "POST",
    headers: { "x-api-key": co.key, "content-type": "application/json" },
    body: JSON.stringify(items),
  });
}

/**
 * One authenticated call first: the credential is looked up once and then
 * remembered by the isolate, which would otherwise count against the first
 * create only.
 */
async function warmUp(co: TestCompany): Promise<void> {
  const res = await api(co.key, "/v1/machines");
  expect(res.status).toBe(200);
}

/** Statements of a 1-item and of a 1,000-item create (each must succeed). */
async function statementsOf(
  co: TestCompany,
  path: string,
  items: (i: number) => unknown,
): Promise<{ one: number; thousand: number }> {
  await warmUp(co);
  const counts: number[] = [];
  for (const n of [1, 1000]) {
    const { response, statements } = await countStatements(
      createRequest(
        co,
        path,
        Array.from({ length: n }, (_, i) => items(i + counts.length * 10_000)),
      ),
    );
    expect(response.ok, await response.clone().text()).toBe(true);
    expect(((await response.json()) as unknown[]).length).toBe(n);
    counts.push(statements);
  }
  const [one = 0, thousand = 0] = counts;
  return { one, thousand };
}

describe("creates of up to 1,000 items", () => {
  it("SKUs: the same statements for 1 and 1,000 items", async () => {
    const co = await createCompany();
    const { one, thousand } = await statementsOf(co, "/v1/skus", (i) => ({
      sku: `S-${i}`,
      name: `Sku ${i}`,
      description: "a product",
    }));
    expect(thousand).toBe(one);
    expect(one).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("operators: the same statements for 1 and 1,000 items", async () => {
    const co = await createCompany();
    const { one, thousand } = await statementsOf(co, "/v1/operators", (i) => ({
      firstName: `First ${i}`,
      lastName: `Last ${i}`,
    }));
    expect(thousand).toBe(one);
    expect(one).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("simple work orders: the same statements for 1 and 1,000 items", async () => {
    const co = await createCompany();
    const { one, thousand } = await statementsOf(co, "/v1/simple-work-orders", (i) => ({
      name: `WO ${i}`,
    }));
    expect(thousand).toBe(one);
    expect(one).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("nominal speeds: the same statements for 1 and 1,000 items", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine) throw new Error("no machine");
    const skuIds: string[] = [];
    for (const batch of [0, 1]) {
      const skus = await api(co.key, "/v1/skus", {
        method: "POST",
        json: Array.from({ length: batch === 0 ? 1 : 1000 }, (_, i) => ({
          sku: `NS-${batch}-${i}`,
        })),
      });
      skuIds.push(...((await skus.json()) as { id: string }[]).map((s) => s.id));
    }
    const counts: number[] = [];
    for (const [from, n] of [
      [0, 1],
      [1, 1000],
    ] as const) {
      const { response, statements } = await countStatements(
        createRequest(
          co,
          "/v1/nominal-speeds",
          skuIds.slice(from, from + n).map((id) => ({
            machine: { id: machine.id },
            sku: { id },
            nominalSpeed: 10,
          })),
        ),
      );
      expect(response.ok, await response.clone().text()).toBe(true);
      counts.push(statements);
    }
    expect(counts[1]).toBe(counts[0]);
    expect(counts[0]).toBeLessThanOrEqual(MAX_STATEMENTS);
  });

  it("production logs naming operators and work orders: the same statements for 1 and 1,000 items", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Filler" }]);
    if (!machine) throw new Error("no machine");
    const skus = await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "P-1" }] });
    const [sku] = (await skus.json()) as { id: string }[];
    if (!sku) throw new Error("no sku");
    const base = Date.UTC(2025, 0, 1);
    const { one, thousand } = await statementsOf(co, "/v1/production-logs", (i) => ({
      start: new Date(base + i * 60_000).toISOString(),
      end: new Date(base + (i + 1) * 60_000).toISOString(),
      count: i,
      nominalSpeed: 10,
      machine: { id: machine.id },
      sku: { id: sku.id },
      // A new operator and a new work order for every item: the most find-or-create work.
      operator: { firstName: "Op", lastName: String(i) },
      workOrder: `WO-${i}`,
    }));
    expect(thousand).toBe(one);
    expect(one).toBeLessThanOrEqual(MAX_STATEMENTS);
  });
});
