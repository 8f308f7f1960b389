/**
 * The D1 statements every operation of the collections sends (SKUs, operators, simple work
 * orders, nominal speeds, production logs; src/resources/crud.ts), as SQL text in order,
 * with the status and, for a refusal, its body: what the request reads and writes, whatever
 * shape the routes are written in. A change that sends one statement more, or another one,
 * shows here (docs/testing.md); the credential's and the shard's directory reads are left
 * out (cached per isolate for a few seconds, they come and go with the test's pace).
 */
import { describe, expect, it } from "vitest";
import { countStatements } from "../fixtures/d1-counter";
import { api, createCompany, createMachines, type TestCompany } from "../harness";

const BASE = "http://api.test";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const DIRECTORY = /FROM companies |FROM api_keys /;

/** The request's status, its SQL, and a refusal's body with its uuids masked. */
async function sqlOf(co: TestCompany, method: string, path: string, body?: unknown) {
  const { response, counter } = await countStatements(
    new Request(`${BASE}${path}`, {
      method,
      headers: {
        "x-api-key": co.key,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const raw = await response.text();
  return {
    status: response.status,
    raw,
    ...(response.status >= 400 && { refusal: raw.replace(UUID, "<uuid>") }),
    sql: counter.sent().filter((q) => !DIRECTORY.test(q)),
  };
}

async function warm(co: TestCompany) {
  expect((await api(co.key, "/v1/machines")).status).toBe(200);
}

describe("the statements of the collections' operations", () => {
  it("are those of the snapshot, operation by operation", async () => {
    const co = await createCompany();
    await warm(co);
    const [m1, m2] = await createMachines(co.id, [{ name: "Press 1" }, { name: "Press 2" }]);
    if (!m1 || !m2) throw new Error("no machines");
    // The machines' integer ids depend on how many machines the runtime made before this
    // test (the worker project's files share one, vitest.config.ts): shown as their names.
    const machineIds = (text: string) =>
      [m1, m2].reduce(
        (t, m) =>
          t
            .replaceAll(`(id ${m.id})`, `(id <${m.name}>)`)
            .replaceAll(`IN (${m.id})`, `IN (<${m.name}>)`),
        text,
      );
    const out: Record<string, unknown> = {};
    const run = async (name: string, method: string, path: string, body?: unknown) => {
      const { raw, ...r } = await sqlOf(co, method, path, body);
      out[name] = JSON.parse(machineIds(JSON.stringify(r)));
      const id = /"id":"([^"]+)"/.exec(raw)?.[1];
      return { ...r, id };
    };
    const none = "00000000-0000-4000-8000-000000000000";
    // SKUs
    const skus = (await (
      await api(co.key, "/v1/skus", {
        method: "POST",
        json: [{ sku: "A" }, { sku: "B", name: "Beta", unit: null, archived: true }],
      })
    ).json()) as { id: string }[];
    const [s1, s2] = skus.map((s) => s.id);
    await run("sku create", "POST", "/v1/skus", [{ sku: "C", description: "d" }]);
    await run("sku search {}", "POST", "/v1/skus/filters", {});
    await run("sku search none", "POST", "/v1/skus/filters");
    await run("sku search all", "POST", "/v1/skus/filters", {
      skus: { search: "a", include: [s1, s2], exclude: [none] },
      names: { search: "b" },
      description: { search: "x" },
      unit: { search: "u" },
      page: 2,
      limit: 5,
    });
    await run("sku search sync", "POST", "/v1/skus/filters", {
      updatedAt: { after: "2020-01-01T00:00:00Z" },
      includeDeleted: true,
      syncAfter: { updatedAt: "2020-01-01T00:00:00Z", id: "a" },
    });
    await run("sku get", "GET", `/v1/skus/${s1}`);
    await run("sku get upper", "GET", `/v1/skus/${s1?.toUpperCase()}`);
    await run("sku get 404", "GET", `/v1/skus/${none}`);
    await run("sku patch", "PATCH", `/v1/skus/${s1}`, {
      sku: "A2",
      name: null,
      description: "x",
      unit: "kg",
      archived: true,
    });
    await run("sku patch {}", "PATCH", `/v1/skus/${s1}`, {});
    await run("sku patch nulls", "PATCH", `/v1/skus/${s1}`, { sku: null, archived: null });
    await run("sku patch 404", "PATCH", `/v1/skus/${none}`, { name: "x" });
    await run("sku patch {} 404", "PATCH", `/v1/skus/${none}`, {});
    await run("sku delete", "DELETE", `/v1/skus/${s2}`);
    await run("sku delete 404", "DELETE", `/v1/skus/${s2}`);
    // Operators
    const ops = (await (
      await api(co.key, "/v1/operators", {
        method: "POST",
        json: [{ firstName: "José" }, { lastName: "Muñoz" }],
      })
    ).json()) as { id: number }[];
    const [o1, o2] = ops.map((o) => o.id);
    await run("op create", "POST", "/v1/operators", [{}, { firstName: "A", lastName: "B" }]);
    await run("op search {}", "POST", "/v1/operators/filters", {});
    await run("op search all", "POST", "/v1/operators/filters", {
      firstName: { search: "jose" },
      lastName: { search: "m" },
      limit: 3,
    });
    await run("op search sync", "POST", "/v1/operators/filters", { includeDeleted: true });
    await run("op get", "GET", `/v1/operators/${o1}`);
    await run("op get 404", "GET", "/v1/operators/999999999");
    await run("op patch", "PATCH", `/v1/operators/${o1}`, { firstName: "Jo", lastName: null });
    await run("op patch {}", "PATCH", `/v1/operators/${o1}`, {});
    await run("op patch 404", "PATCH", "/v1/operators/999999999", { firstName: "x" });
    await run("op delete", "DELETE", `/v1/operators/${o2}`);
    await run("op delete 404", "DELETE", `/v1/operators/${o2}`);
    // Simple work orders
    const wos = (await (
      await api(co.key, "/v1/simple-work-orders", {
        method: "POST",
        json: [{ name: "WO-1" }, { name: "WO-2" }, { name: "WO-3" }],
      })
    ).json()) as { id: string }[];
    const [w1, w2, w3] = wos.map((w) => w.id);
    await run("wo create", "POST", "/v1/simple-work-orders", [
      { name: "WO-1" },
      { name: "WO-4" },
      { name: "WO-4" },
    ]);
    await run("wo search {}", "POST", "/v1/simple-work-orders/filters", {});
    await run("wo search all", "POST", "/v1/simple-work-orders/filters", {
      simpleWorkOrders: { include: [w1, w2], exclude: [w3] },
      names: { search: "WO_%" },
    });
    await run("wo search sync", "POST", "/v1/simple-work-orders/filters", {
      updatedAt: { before: "2100-01-01T00:00:00Z" },
    });
    await run("wo get", "GET", `/v1/simple-work-orders/${w1}`);
    await run("wo get 404", "GET", `/v1/simple-work-orders/${none}`);
    await run("wo patch rename", "PATCH", `/v1/simple-work-orders/${w1}`, { name: "WO-1b" });
    await run("wo patch same", "PATCH", `/v1/simple-work-orders/${w1}`, { name: "WO-1b" });
    await run("wo patch {}", "PATCH", `/v1/simple-work-orders/${w1}`, {});
    await run("wo patch null", "PATCH", `/v1/simple-work-orders/${w1}`, { name: null });
    await run("wo patch 409", "PATCH", `/v1/simple-work-orders/${w1}`, { name: "WO-2" });
    await run("wo patch 404", "PATCH", `/v1/simple-work-orders/${none}`, { name: "z" });
    await run("wo delete", "DELETE", `/v1/simple-work-orders/${w3}`);
    await run("wo delete 404", "DELETE", `/v1/simple-work-orders/${w3}`);
    await run("wo patch 409 deleted", "PATCH", `/v1/simple-work-orders/${w1}`, { name: "WO-3" });
    await run("wo create restores", "POST", "/v1/simple-work-orders", [{ name: "WO-3" }]);
    // Nominal speeds
    const ns = (await (
      await api(co.key, "/v1/nominal-speeds", {
        method: "POST",
        json: [
          { machine: { id: m1?.id }, sku: { id: s1 }, nominalSpeed: 10 },
          { machine: { name: "Press 2" }, sku: { name: "C" }, nominalSpeed: 5, countingFactor: 2 },
        ],
      })
    ).json()) as { id: string }[];
    const [n1, n2] = ns.map((n) => n.id);
    await run("ns create 409", "POST", "/v1/nominal-speeds", [
      { machine: { id: m1?.id }, sku: { id: s1 }, nominalSpeed: 1 },
    ]);
    await run("ns create 422 pair", "POST", "/v1/nominal-speeds", [
      { machine: { id: m2?.id }, sku: { id: s1 }, nominalSpeed: 1 },
      { machine: { id: m2?.id }, sku: { id: s1 }, nominalSpeed: 2 },
    ]);
    await run("ns create 422 ref", "POST", "/v1/nominal-speeds", [
      { machine: { name: "nope" }, sku: { id: s1 }, nominalSpeed: 1 },
    ]);
    await run("ns create", "POST", "/v1/nominal-speeds", [
      { machine: { id: m2?.id }, sku: { id: s1 }, nominalSpeed: 3 },
    ]);
    await run("ns search {}", "POST", "/v1/nominal-speeds/filters", {});
    await run("ns search all", "POST", "/v1/nominal-speeds/filters", {
      machines: { include: [m1?.id, m2?.id], exclude: [0] },
      skus: { include: [s1], exclude: [none] },
      nominalSpeed: { greaterThan: 1, lessThanOrEqual: 100 },
    });
    await run("ns search sync", "POST", "/v1/nominal-speeds/filters", { includeDeleted: true });
    await run("ns get", "GET", `/v1/nominal-speeds/${n1}`);
    await run("ns get 404", "GET", `/v1/nominal-speeds/${none}`);
    await run("ns patch speed", "PATCH", `/v1/nominal-speeds/${n1}`, { nominalSpeed: 11 });
    await run("ns patch {}", "PATCH", `/v1/nominal-speeds/${n1}`, {});
    await run("ns patch pair 409", "PATCH", `/v1/nominal-speeds/${n1}`, {
      machine: { id: m2?.id },
      sku: { name: "C" },
    });
    await run("ns patch pair", "PATCH", `/v1/nominal-speeds/${n1}`, { sku: { id: s2 } });
    await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "D" }] });
    await run("ns patch pair ok", "PATCH", `/v1/nominal-speeds/${n1}`, { sku: { name: "D" } });
    await run("ns patch 404", "PATCH", `/v1/nominal-speeds/${none}`, { nominalSpeed: 1 });
    await run("ns delete", "DELETE", `/v1/nominal-speeds/${n2}`);
    await run("ns delete 404", "DELETE", `/v1/nominal-speeds/${n2}`);
    // Production logs (on the pair m1 / sku D, which has the nominal speed n1)
    const pl = (
      await run("pl create", "POST", "/v1/production-logs", [
        {
          start: "2024-03-04T08:00:00Z",
          end: "2024-03-04T09:00:00Z",
          count: 120,
          machine: { id: m1?.id },
          sku: { name: "D" },
          operator: { firstName: "Ana", lastName: "Ruiz" },
          workOrder: "WO-9",
        },
      ])
    ).id;
    await run("pl search {}", "POST", "/v1/production-logs/filters", {});
    await run("pl search all", "POST", "/v1/production-logs/filters", {
      machines: { search: "press", include: [m1?.id] },
      skus: { search: "d" },
      count: { greaterThan: 1 },
      type: "total",
    });
    await run("pl get", "GET", `/v1/production-logs/${pl}`);
    await run("pl get 404", "GET", `/v1/production-logs/${none}`);
    await run("pl patch", "PATCH", `/v1/production-logs/${pl}`, { count: 60, workOrder: null });
    await run("pl patch 404", "PATCH", `/v1/production-logs/${none}`, { count: 1 });
    await run("pl delete", "DELETE", `/v1/production-logs/${pl}`);
    await run("pl delete 404", "DELETE", `/v1/production-logs/${pl}`);
    // Idempotency on a create
    const idem = { method: "POST", json: [{ sku: "I" }], headers: { "idempotency-key": "k-1" } };
    await api(co.key, "/v1/skus", idem);
    out["sku create replay"] = await (async () => {
      const { response, counter } = await countStatements(
        new Request(`${BASE}/v1/skus`, {
          method: "POST",
          headers: {
            "x-api-key": co.key,
            "content-type": "application/json",
            "idempotency-key": "k-1",
          },
          body: JSON.stringify([{ sku: "I" }]),
        }),
      );
      return {
        status: response.status,
        replayed: response.headers.get("idempotent-replayed"),
        sql: counter.sent().filter((q) => !DIRECTORY.test(q)),
      };
    })();
    expect(out).toMatchSnapshot();
  });
});
