/**
 * The security suite, run over every public operation of `/openapi.json` (and
 * every operator route for the cross-credential checks): no credential, a
 * revoked key, a wrong scope, another company's ids (404, never 403, never
 * their data), the operator token on a public route, a public key on an
 * operator route, and mass assignment (fields a caller must not set are
 * refused with a 422 naming them, and nothing is stored).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { call, operator } from "../fixtures/direct-client";
import { FORBIDDEN_KEYS } from "../fixtures/hostile-arbitraries";
import { expectMissingScope, expectUnauthenticated, type SecuredRoute } from "../fixtures/security";
import { OPERATOR_TOKEN } from "../harness";
import { expectErrorBody, type Operation, publicOperations } from "./contract";
import { ROUTE_CASES, routeCase } from "./routes";
import { buildWorld, fillPath, generousKey, pathIds, type World } from "./world";

let own: World;
let foreign: World;
let operations: Operation[];

beforeAll(async () => {
  [own, foreign] = await Promise.all([buildWorld("own"), buildWorld("foreign")]);
  operations = await publicOperations();
});

let address = 0;
/**
 * A fresh client address per failing request: failed authentications are
 * limited per address, and this suite fails on purpose many times.
 */
function freshAddress(): string {
  address += 1;
  return `198.51.${Math.floor(address / 250)}.${(address % 250) + 1}`;
}

const encode = (ids: Record<string, string>) =>
  Object.fromEntries(Object.entries(ids).map(([k, v]) => [k, encodeURIComponent(v)]));

/** `op`'s path filled with `world`'s ids. */
function urlOf(op: Operation, world: World): string {
  return fillPath(op.path, encode(pathIds(world)));
}

/** A request to `op` with a valid body of `world` and the given headers. */
function send(op: Operation, url: string, world: World, headers: Record<string, string>) {
  const body = routeCase(op.method, op.path).body?.(world);
  return call(url, {
    method: op.method,
    headers: {
      ...headers,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expect401(res: Response, where: string): Promise<void> {
  expect(res.status, `${where}: ${await res.clone().text()}`).toBe(401);
  expect(await res.json()).toEqual({ detail: "Not authenticated" });
  expect(res.headers.get("www-authenticate"), where).toBeTruthy();
}

describe("credentials on every public operation", () => {
  it("answers 401 without a credential", async () => {
    const routes: SecuredRoute[] = operations.map((op) => ({
      method: op.method,
      path: urlOf(op, own),
      scope: op.scope,
      body: routeCase(op.method, op.path).body?.(own),
    }));
    await expectUnauthenticated(routes, "unused");
  });

  it("answers 401 to a revoked key, an unknown key and a malformed one", async () => {
    const revoked = await generousKey(own.co.id);
    const res = await operator("DELETE", `/api-keys/${revoked.id}`);
    expect(res.status).toBe(204);
    const unknown = `${revoked.key.slice(0, -4)}0000`;
    for (const op of operations) {
      for (const key of [revoked.key, unknown, "x", "k".repeat(5000)]) {
        const where = `${op.method} ${op.path} with key ${key.slice(0, 12)}`;
        await expect401(
          await send(op, urlOf(op, own), own, {
            "x-api-key": key,
            "cf-connecting-ip": freshAddress(),
          }),
          where,
        );
      }
    }
  });

  it("answers 401 to the operator token, and to two credentials at once", async () => {
    for (const op of operations) {
      const url = urlOf(op, own);
      await expect401(
        await send(op, url, own, {
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          "cf-connecting-ip": freshAddress(),
        }),
        `${op.method} ${op.path} with the operator token`,
      );
      await expect401(
        await send(op, url, own, {
          "x-api-key": own.co.key,
          authorization: `Bearer ${OPERATOR_TOKEN}`,
          "cf-connecting-ip": freshAddress(),
        }),
        `${op.method} ${op.path} with a key and a token`,
      );
    }
  });

  it("answers 403 naming the scope to a key holding every scope but the route's", async () => {
    const routes: SecuredRoute[] = operations.map((op) => ({
      method: op.method,
      path: urlOf(op, own),
      scope: op.scope,
      body: routeCase(op.method, op.path).body?.(own),
    }));
    for (const route of routes) expect(ALL_SCOPES).toContain(route.scope);
    await expectMissingScope(own.co, routes, "unused");
  });
});

describe("the operator API refuses public credentials", () => {
  interface OperatorDoc {
    paths: Record<string, Record<string, unknown>>;
  }

  it("answers 401 on every operator route to a public key, as x-api-key or as a Bearer token", async () => {
    const res = await operator("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OperatorDoc;
    const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })),
    );
    expect(routes.length).toBeGreaterThan(10);
    for (const { method, path } of routes) {
      // Ids of the public key's own company: the key is refused before any lookup.
      const url = `/operator/v1${path.replace(/\{company_id\}/, String(own.co.id)).replace(/\{\w+\}/g, "1")}`;
      const credentials: Record<string, string>[] = [
        { "x-api-key": own.co.key },
        { authorization: `Bearer ${own.co.key}` },
      ];
      for (const headers of credentials) {
        const answer = await call(url, {
          method,
          headers: { ...headers, "content-type": "application/json" },
          body: method === "GET" || method === "DELETE" ? undefined : "[]",
        });
        expect(answer.status, `${method} ${url}`).toBe(401);
        expect(await answer.json()).toEqual({ detail: "Not authenticated" });
      }
    }
  });
});

/** Everything the foreign company has, as its own key reads it. */
async function foreignSnapshot(): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const op of operations.filter((o) => o.method === "GET")) {
    const res = await call(urlOf(op, foreign), { headers: { "x-api-key": foreign.co.key } });
    out.push(op.path.includes("realtime") ? res.status : [res.status, await res.text()]);
  }
  for (const path of [
    "/v1/skus/filters",
    "/v1/operators/filters",
    "/v1/simple-work-orders/filters",
    "/v1/nominal-speeds/filters",
    "/v1/production-logs/filters",
  ]) {
    const res = await call(path, { method: "POST", headers: { "x-api-key": foreign.co.key } });
    out.push(await res.json());
  }
  return out;
}

describe("another company's ids", () => {
  it("are a 404 on every route that takes an id (never a 403, never their data), and change nothing", async () => {
    const before = await foreignSnapshot();
    const secrets = [foreign.co.name, foreign.skuCode, "foreign"];
    const queryOf = (op: Operation) => {
      const query = routeCase(op.method, op.path).query?.(own);
      return query ? `?${new URLSearchParams(query).toString()}` : "";
    };
    const withIds = operations.filter((op) => op.pathParams.length > 0);
    expect(withIds.length).toBeGreaterThan(10);
    for (const op of withIds) {
      // Every id of the other company, then each one alone among the caller's own ids.
      const variants = [pathIds(foreign)];
      if (op.pathParams.length > 1) {
        for (const name of op.pathParams) {
          variants.push({ ...pathIds(own), [name]: pathIds(foreign)[name] ?? "" });
        }
      }
      for (const ids of variants) {
        const url = `${fillPath(op.path, encode(ids))}${queryOf(op)}`;
        const res = await send(op, url, own, { "x-api-key": own.co.key });
        const text = await res.text();
        expect(res.status, `${op.method} ${url}: ${text}`).toBe(404);
        expectErrorBody("Error", JSON.parse(text), url);
        for (const secret of secrets) expect(text).not.toContain(secret);
      }
    }
    expect(await foreignSnapshot()).toEqual(before);
  });

  it("in bodies are refused (422 naming the field) or match nothing, never another company's rows", async () => {
    const key = own.co.key;
    const post = async (path: string, body: unknown) => {
      const res = await call(path, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      // What the caller did not send: the other company's name and its records' names.
      for (const secret of [foreign.co.name, "Product foreign", "Press foreign", "Idle foreign"]) {
        expect(text, `${path}: ${text}`).not.toContain(secret);
      }
      return { status: res.status, body: JSON.parse(text) as Record<string, unknown> };
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    const notFoundAt = (answer: { status: number; body: Record<string, unknown> }) => {
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      return (answer.body.detail as { loc: unknown[]; type: string }[]).map((d) => d.type);
    };
    expect(
      notFoundAt(
        await post("/v1/nominal-speeds", [
          { nominalSpeed: 1, machine: { id: foreign.machineId }, sku: { id: own.skuId } },
        ]),
      ),
    ).toContain("not_found");
    expect(
      notFoundAt(
        await post("/v1/nominal-speeds", [
          { nominalSpeed: 1, machine: { id: own.machineId }, sku: { id: foreign.skuId } },
        ]),
      ),
    ).toContain("not_found");
    expect(
      notFoundAt(
        await post("/v1/production-logs", [
          {
            start: iso(Date.now() - 7_200_000),
            end: iso(Date.now() - 3_600_000),
            count: 1,
            nominalSpeed: 1,
            machine: { id: foreign.idleMachineId },
            sku: { name: foreign.skuCode },
          },
        ]),
      ),
    ).toContain("not_found");
    expect(
      notFoundAt(await post(`/v1/realtime/${own.machineId}/sku`, { skuId: foreign.skuId })),
    ).toContain("not_found");
    expect(
      notFoundAt(
        await post(`/v1/realtime/${own.machineId}/operator`, {
          operatorId: foreign.operatorId,
          start: iso(Date.now()),
        }),
      ),
    ).toContain("not_found");

    // The stop a reason is given to is the write's own record, as a path id is: a 404.
    const foreignStop = await post(`/v1/realtime/${own.machineId}/stop-reason`, {
      stopId: foreign.stopId,
      generalCause: { name: "Jam" },
    });
    expect(foreignStop).toEqual({
      status: 404,
      body: { detail: `Stop ${foreign.stopId} not found on machine ${own.machineId}` },
    });

    const empty = async (path: string, body: unknown, list: string) => {
      const answer = await post(path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body.totalCount).toBe(0);
      expect(answer.body[list]).toEqual([]);
    };
    await empty("/v1/skus/filters", { skus: { include: [foreign.skuId] } }, "skus");
    await empty(
      "/v1/simple-work-orders/filters",
      { simpleWorkOrders: { include: [foreign.workOrderId] } },
      "simpleWorkOrders",
    );
    await empty(
      "/v1/nominal-speeds/filters",
      { machines: { include: [foreign.machineId] } },
      "nominalSpeeds",
    );
    await empty(
      "/v1/production-logs/filters",
      { machines: { include: [foreign.idleMachineId] } },
      "productionLogs",
    );
    await empty("/v1/reports/stops", { stopId: { include: [foreign.stopId] } }, "stops");
    await empty("/v1/reports/metrics", { machines: { include: [foreign.machineId] } }, "metrics");
    await empty("/v1/reports/kpis", { machines: { include: [foreign.machineId] } }, "kpis");
    await empty("/v1/reports/downtime", { machines: { include: [foreign.machineId] } }, "downtime");
  });
});

/** The valid body of a create or PATCH with `field` added (at the top level, or in each item). */
function withField(body: unknown, field: string, value: unknown): unknown {
  if (Array.isArray(body)) return body.map((item) => ({ ...item, [field]: value }));
  return { ...(body as Record<string, unknown>), [field]: value };
}

const VALUES: Record<string, unknown> = {
  id: "00000000-0000-4000-8000-000000000000",
  company: { id: 1, name: "Someone else" },
  companyId: 1,
  company_id: 1,
  createdAt: "2000-01-01T00:00:00Z",
  updatedAt: "2000-01-01T00:00:00Z",
  deletedAt: "2000-01-01T00:00:00Z",
  isAutomated: true,
  live: true,
  machineId: 1,
  sensorCount: 5,
  constructor: "x",
  prototype: "x",
};

describe("mass assignment", () => {
  const writes = Object.keys(ROUTE_CASES).filter((key) => {
    const [method = "", path = ""] = key.split(" ");
    return (
      (method === "PATCH" || method === "POST") &&
      !path.endsWith("/filters") &&
      !path.startsWith("/v1/reports") &&
      ROUTE_CASES[key]?.body !== undefined
    );
  });

  it("covers every create, PATCH and realtime write, and the start of an export", () => {
    expect(writes.length).toBe(14);
  });

  it.each(writes)(
    "%s refuses every field a caller must not set with a 422 naming it, and stores nothing",
    async (key) => {
      const [method = "", path = ""] = key.split(" ");
      const rc = routeCase(method, path);
      const world = await buildWorld();
      const op = operations.find((o) => o.method === method && o.path === path);
      if (!op || !rc.body) throw new Error(`no operation ${key}`);
      const url = urlOf(op, world);
      const state = await rc.state?.(world);
      const itemLoc = Array.isArray(rc.body(world)) ? [0] : [];
      for (const field of FORBIDDEN_KEYS) {
        // sensorCount is a field of the production-log create itself.
        if (field === "sensorCount" && key === "POST /v1/production-logs") continue;
        const body = withField(rc.body(world), field, VALUES[field]);
        const res = await call(url, {
          method,
          headers: { "x-api-key": world.co.key, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { detail: unknown };
        expect(res.status, `${key} with ${field}: ${JSON.stringify(answer)}`).toBe(422);
        expect(answer.detail).toContainEqual({
          loc: ["body", ...itemLoc, field],
          msg: "Extra inputs are not permitted",
          type: "extra_forbidden",
        });
      }
      // `__proto__` as JSON text: an own key of the parsed body, refused like any other.
      const text = JSON.stringify(rc.body(world));
      const proto = Array.isArray(rc.body(world))
        ? text.replace(/^\[\{/, '[{"__proto__":{"companyId":1},')
        : text.replace(/^\{/, '{"__proto__":{"companyId":1},');
      const res = await call(url, {
        method,
        headers: { "x-api-key": world.co.key, "content-type": "application/json" },
        body: proto,
      });
      expect(res.status, `${key} with __proto__: ${await res.clone().text()}`).toBe(422);
      if (rc.state) expect(await rc.state(world)).toEqual(state);
    },
    30_000,
  );
});
