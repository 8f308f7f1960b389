/**
 * Test harness: every test builds its own company, keys and plant data through
 * the operator API, so that no test depends on another test's rows.
 */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import type { components as operatorComponents } from "../scripts/lib/generated/operator-api";
import { ALL_SCOPES } from "../src/auth/scopes";
import { createDb, type Database } from "../src/db/client";
import { companyD1 } from "../src/db/shards";

export const OPERATOR_TOKEN = "test-operator-token";
const BASE = "http://api.test";

/** An operator API request with the test operator token and a JSON body (`path` after `/operator/v1`). */
export function operatorRequest(method: string, path: string, body?: unknown): Request {
  return new Request(`${BASE}/operator/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${OPERATOR_TOKEN}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The harness's calls, each a request handed to one way of sending it to the Worker. */
export interface Calls {
  /** Sends a request for `path` (from the root: `/v1/...`, `/operator/v1/...`). */
  call(path: string, init?: RequestInit): Promise<Response>;
  /** Calls the operator API with the test operator token and a JSON body. */
  operator(method: string, path: string, body?: unknown): Promise<Response>;
  /** Calls the operator API and returns the JSON body, failing the test on a non-2XX status. */
  operatorJson<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** Calls a public route with an API key (and a JSON body when `json` is given). */
  api(key: string, path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

/**
 * The harness's calls over `send`: `exports.default.fetch` for this file's, the Worker's
 * own handler for test/fixtures/direct-client.ts's.
 *
 * @param send hands a request to the Worker and resolves to its answer.
 */
export function callsOver(send: (request: Request) => Promise<Response>): Calls {
  const call = (path: string, init: RequestInit = {}) => send(new Request(`${BASE}${path}`, init));
  const operator = (method: string, path: string, body?: unknown) =>
    send(operatorRequest(method, path, body));
  return {
    call,
    operator,
    async operatorJson<T>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await operator(method, path, body);
      if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${await res.text()}`);
      return (await res.json()) as T;
    },
    api(key, path, init = {}) {
      const { json, ...rest } = init;
      const headers = new Headers(rest.headers);
      headers.set("x-api-key", key);
      if (json !== undefined) headers.set("content-type", "application/json");
      return call(path, {
        ...rest,
        headers,
        body: json === undefined ? rest.body : JSON.stringify(json),
      });
    },
  };
}

/** The harness's calls through `exports.default.fetch`, as the runtime calls the Worker. */
export const { call, operator, operatorJson, api } = callsOver((request) =>
  exports.default.fetch(request),
);

/**
 * A D1 binding that records the anchor of every `withSession` call in `anchors` (locally there
 * is one copy of each database, so where a session starts is only seen this way) and passes
 * everything else to `real`.
 */
export function recordingSessions(real: D1Database, anchors: (string | undefined)[]): D1Database {
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "withSession") {
        return (anchor?: string) => {
          anchors.push(anchor);
          return target.withSession(anchor);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * POSTs a JSON body to a public route with an API key and returns the JSON answer, failing
 * the test (naming the path, status and body) on any status but 200.
 */
export async function apiPost<T>(key: string, path: string, body: unknown): Promise<T> {
  const res = await api(key, path, { method: "POST", json: body });
  if (res.status !== 200) throw new Error(`${path} -> ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** The D1 binding of a company's shard, as the directory names it (src/db/shards.ts). */
export function shardD1(companyId: number): Promise<D1Database> {
  return companyD1(env, companyId);
}

/** The Drizzle client of a company's shard. */
export async function shardDb(companyId: number): Promise<Database> {
  return createDb(await shardD1(companyId));
}

export interface TestCompany {
  id: number;
  name: string;
  /** A key holding every scope. */
  key: string;
}

let counter = 0;

/**
 * Creates a company with a key holding every scope (or the scopes given). It lands on the
 * shard with the fewest companies (src/db/shard-placement.ts), so a test's companies spread
 * over the shards; `shard` places it on the one named.
 */
export async function createCompany(
  options: { timezone?: string; scopes?: readonly string[]; shard?: string } = {},
): Promise<TestCompany> {
  counter += 1;
  const name = `Test Co ${counter}-${crypto.randomUUID().slice(0, 8)}`;
  const [company] = await operatorJson<{ id: number; name: string }[]>("POST", "/companies", [
    {
      name,
      timezone: options.timezone ?? "Europe/Rome",
      ...(options.shard === undefined ? {} : { shard: options.shard }),
    },
  ]);
  if (!company) throw new Error("no company created");
  const key = await createKey(company.id, options.scopes ?? ALL_SCOPES);
  return { id: company.id, name, key };
}

/** Issues an API key for a company with the given scopes and returns the raw key. */
export async function createKey(companyId: number, scopes: readonly string[]): Promise<string> {
  const [created] = await operatorJson<{ key: string }[]>(
    "POST",
    `/companies/${companyId}/api-keys`,
    [{ name: "test key", scopes }],
  );
  if (!created) throw new Error("no key created");
  return created.key;
}

/**
 * A machine as the operator API creates it, with the operator client's generated type (read
 * directly: test/fixtures/ imports the harness, so the harness does not import it back).
 */
export type TestMachine = operatorComponents["schemas"]["OperatorMachine"];

/** Creates machines for a company. */
export async function createMachines(
  companyId: number,
  items: { name: string; uuid?: string | null }[],
): Promise<TestMachine[]> {
  return operatorJson<TestMachine[]>("POST", `/companies/${companyId}/machines`, items);
}

/** Creates one signal on a machine and returns its public id. */
export async function createSignal(
  machineId: number,
  signal: {
    name: string;
    displayName?: string;
    kind?: string | null;
    description?: { en?: string; es?: string };
  },
): Promise<string> {
  const [created] = await operatorJson<{ publicId: string }[]>(
    "POST",
    `/machines/${machineId}/signals`,
    [{ displayName: signal.name, kind: "analog", ...signal }],
  );
  if (!created) throw new Error("no signal created");
  return created.publicId;
}

/** Ingests samples (`[ms, value]` pairs) into a signal, in calls of at most 10,000. */
export async function ingest(
  publicId: string,
  samples: readonly (readonly [number, number])[],
): Promise<void> {
  for (let i = 0; i < samples.length; i += 10_000) {
    const chunk = samples.slice(i, i + 10_000);
    await operatorJson("POST", `/signals/${publicId}/samples`, {
      timestamps: chunk.map(([t]) => new Date(t).toISOString()),
      values: chunk.map(([, v]) => v),
    });
  }
}
