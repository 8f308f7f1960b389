/**
 * /mcp through the official SDK clients against the Worker in workerd, in both protocol eras
 * (2026-07-28 with the 2.x client, 2025-11-25 with the 1.x client): the front door (401,
 * revoked key, rate limit, request ids, malformed bodies), the 2026-07-28 wire (discovery,
 * `resultType`, the standard headers, versions), tools/list per scope, every tool against its
 * REST twin, another company's ids, the resources.
 */
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { importJWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import metricsMarkdown from "../../docs/metrics.md?raw";
import { PUBLIC_MAX_BODY_BYTES } from "../../src/http/json-body";
import privateKeys from "../fixtures/jwt-private-keys.test-only.json";
import {
  connect,
  connectModern,
  ERAS,
  type Era,
  type McpClient,
  rawModern,
  rawPost,
} from "../fixtures/mcp-client";
import { ALL_DAY, type Plant, plant, postOperator, postSku } from "../fixtures/plant";
import { api, createKey, ingest, operator, operatorJson } from "../harness";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FULL_TOOLS = [
  "list_machines",
  "machine_now",
  "metrics_report",
  "stops_report",
  "kpis_report",
  "downtime_pareto",
  "signal_data",
  "search_production_logs",
];

interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content: { type: string; text?: string }[];
}

async function callTool(client: McpClient, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

/** The REST answer's JSON, failing on a non-200. */
async function rest(key: string, path: string, json?: unknown): Promise<unknown> {
  const res = await api(key, path, json === undefined ? {} : { method: "POST", json });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** The `detail` of a tool error. */
function errorDetail(answer: ToolAnswer): unknown {
  expect(answer.isError).toBe(true);
  return (JSON.parse(answer.content[0]?.text ?? "{}") as { detail: unknown }).detail;
}

let p: Plant;
let other: Plant;
/** A client of each era with every scope of `p`'s company. */
const full = {} as Record<Era, McpClient>;
let uuid: string;
const midnight = Math.floor(Date.now() / DAY) * DAY;
const yesterday = midnight - DAY;

beforeAll(async () => {
  // Days from midnight: yesterday's instance has ended, today's runs.
  p = await plant(1, { shifts: ALL_DAY });
  other = await plant(1, { shifts: ALL_DAY });
  const machine = p.machines[0];
  if (!machine?.uuid) throw new Error("the plant's machine has no uuid");
  uuid = machine.uuid;
  // Yesterday (an ended shift instance, so its figures no longer move): a production log,
  // a closed stop, count samples. Now: a SKU running, an operator, an open stop.
  const logs = await api(p.co.key, "/v1/production-logs", {
    method: "POST",
    json: [
      {
        machine: { id: machine.id },
        sku: { id: p.a.id },
        start: new Date(yesterday + 6 * HOUR).toISOString(),
        end: new Date(yesterday + 14 * HOUR).toISOString(),
        count: 6000,
      },
    ],
  });
  expect(logs.status, await logs.clone().text()).toBeLessThan(300);
  await operatorJson("POST", `/machines/${machine.id}/stops`, [
    {
      startTime: new Date(yesterday + 8 * HOUR).toISOString(),
      endTime: new Date(yesterday + 9 * HOUR).toISOString(),
      isProgrammed: false,
    },
    { startTime: new Date(Date.now() - 10 * 60_000).toISOString(), isProgrammed: false },
  ]);
  const samples: [number, number][] = [];
  for (let t = yesterday + 6 * HOUR; t < yesterday + 14 * HOUR; t += 5 * 60_000) {
    samples.push([t, 10]);
  }
  await ingest(p.countSignals[0] ?? "", samples);
  expect((await postSku(p.co, machine.id, { skuId: p.b.id })).status).toBe(204);
  const assign = await postOperator(p.co, machine.id, {
    operatorId: p.operators[0]?.id,
    // Inside today's instance of the 24-hour shift, also in the first hour after midnight.
    start: new Date(Math.max(midnight, Date.now() - HOUR)).toISOString(),
  });
  expect(assign.status, await assign.clone().text()).toBe(204);
  for (const era of ERAS) full[era] = await connect({ "x-api-key": p.co.key }, era);
});

describe("the front door", () => {
  it("refuses a request without a credential before reading it: 401, WWW-Authenticate, request id", async () => {
    const res = await rawPost("not even JSON");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.json()).toEqual({ detail: "Not authenticated" });
    for (const era of ERAS) {
      await expect(connect({}, era), era).rejects.toThrow(/401|Unauthorized|authenticated/i);
    }
  });

  it.each(ERAS)("takes a Bearer access token, whose scopes decide the tools (%s)", async (era) => {
    const jwk = privateKeys.rsa;
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({
      iss: "https://idp.test/",
      aud: "https://api.test/v1",
      iat: now,
      exp: now + 600,
      sub: "assistant-user",
      company_id: p.co.id,
      scope: "machines.read reports.read",
    })
      .setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "JWT" })
      .sign(await importJWK(jwk, "RS256"));
    const client = await connect({ authorization: `Bearer ${token}` }, era);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      "list_machines",
      "metrics_report",
      "stops_report",
      "kpis_report",
      "downtime_pareto",
    ]);
    const machines = await callTool(client, "list_machines");
    expect(machines.structuredContent).toEqual({ machines: await rest(p.co.key, "/v1/machines") });
    // Both credentials at once is a 401, as on /v1.
    await expect(
      connect({ authorization: `Bearer ${token}`, "x-api-key": p.co.key }, era),
    ).rejects.toThrow(/401|authenticated/i);
  });

  it.each(ERAS)("refuses a revoked key at once (%s)", async (era) => {
    const [issued] = await operatorJson<{ id: number; key: string }[]>(
      "POST",
      `/companies/${p.co.id}/api-keys`,
      [{ name: `mcp-revoked-${era}`, scopes: ["machines.read"] }],
    );
    if (!issued) throw new Error("no key");
    const client = await connect({ "x-api-key": issued.key }, era);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["list_machines"]);
    expect((await operator("DELETE", `/api-keys/${issued.id}`)).status).toBe(204);
    await expect(client.listTools()).rejects.toThrow(/401|authenticated/i);
  });

  it("counts every request of either era against the credential's rate limit: 429 with Retry-After", async () => {
    const [issued] = await operatorJson<{ key: string }[]>(
      "POST",
      `/companies/${p.co.id}/api-keys`,
      [
        {
          name: "mcp-limited",
          scopes: ["machines.read"],
          rateLimit: { requests: 2, periodSeconds: 60 },
        },
      ],
    );
    const headers = { "x-api-key": issued?.key ?? "" };
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect((await rawPost(list, headers)).status).toBe(200);
    expect((await rawModern({ id: 2, method: "tools/list" }, headers)).status).toBe(200);
    for (const limited of [
      await rawPost(list, headers),
      await rawModern({ id: 3, method: "server/discover" }, headers),
    ]) {
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await limited.json()).toEqual({ detail: "Rate limit exceeded" });
    }
  });

  it("refuses a body over the public limit with the same 413 as /v1", async () => {
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const oversized = list + " ".repeat(PUBLIC_MAX_BODY_BYTES);
    const [mcp, rest] = await Promise.all([
      rawPost(oversized, { "x-api-key": p.co.key }),
      api(p.co.key, "/v1/skus", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: oversized,
      }),
    ]);
    expect(mcp.status).toBe(413);
    expect(rest.status).toBe(413);
    expect(await mcp.json()).toEqual(await rest.json());
    expect(mcp.headers.get("x-request-id")).toBeTruthy();
    // Refused by its declared size before the credential is read: no quota to report.
    for (const res of [mcp, rest]) expect(res.headers.get("ratelimit-policy")).toBeNull();
  });

  it("answers a malformed body, a batch and a GET with JSON-RPC errors", async () => {
    const headers = { "x-api-key": p.co.key };
    const malformed = await rawPost('{"jsonrpc": "2.0", "id": 1, "method": ', headers);
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get("x-request-id")).toBeTruthy();
    expect(malformed.headers.get("ratelimit-policy")).toBeTruthy();
    expect(await malformed.json()).toMatchObject({
      jsonrpc: "2.0",
      error: { code: -32700 },
      id: null,
    });
    const notRpc = await rawPost('{"hello": "world"}', headers);
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ error: { code: -32600 }, id: null });
    const batch = await rawPost(
      JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]),
      headers,
    );
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ error: { code: -32600 } });
    for (const method of ["GET", "DELETE", "PUT"]) {
      const other = await api(p.co.key, "/mcp", {
        method,
        headers: { accept: "text/event-stream" },
      });
      expect(other.status, method).toBe(405);
      expect(other.headers.get("allow"), method).toBe("OPTIONS, POST");
      expect(await other.json(), method).toEqual({ detail: "Method Not Allowed" });
    }
  });

  /**
   * Malformed messages, each with the code JSON-RPC 2.0 (section 5.1) and MCP give it:
   * -32700 only for text that is not JSON; -32600 for JSON that is not a request; -32602
   * for params that do not fit the method, naming the field, never a validator's dump;
   * -32601 for a method the server does not offer.
   */
  it.each([
    ["params not a structured value, nothing else", { params: "x" }, 400, -32600, null],
    [
      "params a string",
      { jsonrpc: "2.0", id: 7, method: "tools/list", params: "x" },
      400,
      -32600,
      7,
    ],
    ["no jsonrpc", { id: 1, method: "tools/list" }, 400, -32600, 1],
    ['jsonrpc "1.0"', { jsonrpc: "1.0", id: 1, method: "tools/list" }, 400, -32600, 1],
    ["method a number", { jsonrpc: "2.0", id: 1, method: 5 }, 400, -32600, 1],
    ["id null (MCP: never)", { jsonrpc: "2.0", id: null, method: "tools/list" }, 400, -32600, null],
    ["id an object", { jsonrpc: "2.0", id: {}, method: "tools/list" }, 400, -32600, null],
    ["a JSON string", "tools/list", 400, -32600, null],
    ["JSON null", null, 400, -32600, null],
    ["an empty object", {}, 400, -32600, null],
    [
      "a response with both result and error",
      { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "x" } },
      400,
      -32600,
      1,
    ],
    [
      "arguments null",
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_machines", arguments: null },
      },
      200,
      -32602,
      2,
    ],
    [
      "arguments a string",
      {
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "list_machines", arguments: "x" },
      },
      200,
      -32602,
      3,
    ],
    [
      "tool name missing",
      { jsonrpc: "2.0", id: 4, method: "tools/call", params: {} },
      200,
      -32602,
      4,
    ],
    [
      "tool name a number",
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: 5 } },
      200,
      -32602,
      5,
    ],
    [
      "params an array",
      { jsonrpc: "2.0", id: 6, method: "tools/list", params: [] },
      200,
      -32602,
      6,
    ],
    [
      "cursor a number",
      { jsonrpc: "2.0", id: 8, method: "tools/list", params: { cursor: 5 } },
      200,
      -32602,
      8,
    ],
    [
      "resources/read without uri",
      { jsonrpc: "2.0", id: 9, method: "resources/read", params: {} },
      200,
      -32602,
      9,
    ],
    [
      "initialize without its params",
      { jsonrpc: "2.0", id: 10, method: "initialize", params: {} },
      200,
      -32602,
      10,
    ],
    [
      "an unknown tool",
      { jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "nope" } },
      200,
      -32602,
      11,
    ],
    ["an unknown method", { jsonrpc: "2.0", id: 12, method: "nope/nope" }, 200, -32601, 12],
    [
      "params of a method not offered",
      { jsonrpc: "2.0", id: 13, method: "prompts/get", params: 5 },
      400,
      -32600,
      13,
    ],
  ] as const)("answers %s with its JSON-RPC code", async (_label, message, status, code, id) => {
    const res = await rawPost(JSON.stringify(message), { "x-api-key": p.co.key });
    expect(res.status).toBe(status);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { message: string } };
    expect(body).toMatchObject({ jsonrpc: "2.0", id, error: { code } });
    // Words a caller can act on, not the validator's dump.
    expect(body.error.message).not.toMatch(/"code"|invalid_type|\n|\[\s*\{/);
    if (code === -32602 && _label.startsWith("arguments")) {
      expect(body.error.message).toMatch(/^Invalid params for tools\/call: params\.arguments: /);
    }
  });
});

describe("revision 2026-07-28 on the wire", () => {
  const headers = () => ({ "x-api-key": p.co.key });

  it("answers server/discover, without initialize: versions, capabilities, identity, instructions", async () => {
    const res = await rawModern({ id: "d1", method: "server/discover" }, headers());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.headers.get("ratelimit-policy")).toBeTruthy();
    const { result } = (await res.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({
      resultType: "complete",
      supportedVersions: expect.arrayContaining(["2026-07-28"]),
      capabilities: { tools: {}, resources: {} },
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "production-monitoring" } },
      instructions: expect.stringContaining("time zone UTC"),
      // What the key may see is the key's: never for a shared cache.
      cacheScope: "private",
      ttlMs: 0,
    });
  });

  it("stamps every result with its resultType and the server's identity", async () => {
    const list = await rawModern({ id: 1, method: "tools/list" }, headers());
    expect(list.status).toBe(200);
    expect(await list.json()).toMatchObject({
      id: 1,
      result: {
        resultType: "complete",
        tools: expect.arrayContaining([expect.objectContaining({ name: "list_machines" })]),
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "production-monitoring" } },
      },
    });
    const call = await rawModern(
      { id: 2, method: "tools/call", params: { name: "list_machines", arguments: {} } },
      headers(),
    );
    expect(await call.json()).toMatchObject({
      id: 2,
      result: { resultType: "complete", structuredContent: { machines: expect.any(Array) } },
    });
  });

  it("refuses a browser page of another origin (DNS rebinding) with 403 before the credential, and serves its own", async () => {
    for (const origin of ["https://evil.example", "null", "http://api.test.evil.example"]) {
      const res = await rawModern({ id: "o1", method: "server/discover" }, { origin });
      expect(res.status, origin).toBe(403);
      expect(res.headers.get("x-request-id"), origin).toBeTruthy();
      expect(await res.json(), origin).toMatchObject({ id: null, error: { code: -32000 } });
    }
    const own = await rawModern(
      { id: "o2", method: "server/discover" },
      { ...headers(), origin: "http://api.test" },
    );
    expect(own.status).toBe(200);
  });

  it("refuses a request without a standard header, or whose header is not its body's: 400, -32020", async () => {
    const call = { id: 3, method: "tools/call", params: { name: "list_machines", arguments: {} } };
    for (const omit of ["mcp-protocol-version", "mcp-method", "mcp-name"]) {
      const res = await rawModern(call, headers(), { omit: [omit] });
      expect(res.status, omit).toBe(400);
      expect(await res.json(), omit).toMatchObject({ id: 3, error: { code: -32020 } });
    }
    const other = await rawModern(call, { ...headers(), "mcp-name": "metrics_report" });
    expect(other.status).toBe(400);
    expect(await other.json()).toMatchObject({ id: 3, error: { code: -32020 } });
  });

  it("names the revisions it serves to a request of another one: 400, -32022", async () => {
    const res = await rawModern({ id: 4, method: "tools/list" }, headers(), {
      version: "2099-01-01",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      id: 4,
      error: { code: -32022, data: { supported: ["2026-07-28"], requested: "2099-01-01" } },
    });
  });

  it("answers a method it does not offer 404 -32601, and params that do not fit -32602 naming the field", async () => {
    const unknown = await rawModern({ id: 5, method: "prompts/list" }, headers());
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ id: 5, error: { code: -32601 } });
    // A method of 2025-11-25 only.
    const ping = await rawModern({ id: 6, method: "ping" }, headers());
    expect(await ping.json()).toMatchObject({ id: 6, error: { code: -32601 } });
    const badArgs = await rawModern(
      { id: 7, method: "tools/call", params: { name: "list_machines", arguments: "x" } },
      headers(),
    );
    expect(badArgs.status).toBe(200);
    const body = (await badArgs.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toMatch(/^Invalid params for tools\/call: params\.arguments: /);
    expect(body.error.message).not.toMatch(/"code"|invalid_type|\n|\[\s*\{/);
  });

  it("acknowledges subscriptions/listen with nothing to listen to and ends the stream at once", async () => {
    const res = await rawModern(
      {
        id: 8,
        method: "subscriptions/listen",
        params: { notifications: { toolsListChanged: true } },
      },
      headers(),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    // The whole stream can be read: it is closed, not held open.
    const events = (await res.text())
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    expect(events).toMatchObject([
      { method: "notifications/subscriptions/acknowledged", params: { notifications: {} } },
      { id: 8, result: { resultType: "complete" } },
    ]);
  });
});

describe.each(ERAS)("connecting and tools/list (%s)", (era) => {
  it("tells the server's name, its capabilities and the company's time zone", async () => {
    const key = await createKey(p.co.id, ["machines.read"]);
    const client = await connect({ "x-api-key": key }, era);
    expect(client.getServerVersion()?.name).toBe("production-monitoring");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain(`time zone UTC`);
  });

  it("lists every tool for a full key, read-only, each input and output an object schema", async () => {
    const { tools } = await full[era].listTools();
    expect(tools.map((t) => t.name)).toEqual(FULL_TOOLS);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect(tool.inputSchema.type).toBe("object");
      expect(tool.outputSchema?.type).toBe("object");
    }
    const metrics = tools.find((t) => t.name === "metrics_report");
    expect(metrics?.description).toMatch(/minutes/);
    expect(metrics?.description).toMatch(/fractions 0\.\.1/);
  });

  it("lists only list_machines for a machines.read key; a hidden tool's call names the missing scope", async () => {
    const key = await createKey(p.co.id, ["machines.read"]);
    const client = await connect({ "x-api-key": key }, era);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["list_machines"]);
    const refused = await callTool(client, "metrics_report", {});
    expect(errorDetail(refused)).toBe("Not enough permissions. Missing scope: reports.read");
    expect((await callTool(client, "list_machines")).isError).toBeFalsy();
  });
});

describe("the eras a client lands on", () => {
  it("2.x client: pinned or probing, revision 2026-07-28; left at its default, 2025-11-25", async () => {
    const headers = { "x-api-key": p.co.key };
    const pinned = await connectModern(headers);
    const probing = await connectModern(headers, "auto");
    const byDefault = await connectModern(headers, "legacy");
    for (const [client, era, version] of [
      [pinned, "modern", "2026-07-28"],
      [probing, "modern", "2026-07-28"],
      [byDefault, "legacy", "2025-11-25"],
    ] as const) {
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      expect((await callTool(client, "list_machines")).isError).toBeFalsy();
    }
    expect(probing.getDiscoverResult()?.supportedVersions).toContain("2026-07-28");
  });

  it("1.x client: initialize negotiates 2025-11-25, with no session", async () => {
    const key = await createKey(p.co.id, ["machines.read"]);
    // The revision a client asks for with the SDK's own constant is the one answered.
    expect(LATEST_PROTOCOL_VERSION).toBe("2025-11-25");
    const init = await rawPost(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: LATEST_PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }),
      { "x-api-key": key },
    );
    expect(init.status).toBe(200);
    expect(init.headers.get("content-type")).toContain("application/json");
    expect(init.headers.get("mcp-session-id")).toBeNull();
    const { result } = (await init.json()) as { result: Record<string, unknown> };
    expect(result).toMatchObject({
      protocolVersion: "2025-11-25",
      serverInfo: { name: "production-monitoring" },
    });
    // 2025-11-25 results carry no resultType.
    expect(result).not.toHaveProperty("resultType");
  });
});

describe("machine_now in both eras", () => {
  it("machine_now: the realtime state, the running shift's metrics row and the open stop", async () => {
    const machine = p.machines[0];
    if (!machine) throw new Error("no machine");
    const answers = await Promise.all(
      ERAS.map((era) => callTool(full[era], "machine_now", { machine_id: machine.id })),
    );
    const [answer, legacy] = answers;
    if (!answer || !legacy) throw new Error("no answer");
    expect(answer.isError, answer.content[0]?.text).toBeFalsy();
    // The same summary in both eras (the structured answer carries the instant it was read).
    expect(legacy.content).toEqual(answer.content);
    const out = answer.structuredContent as {
      realtime: { at: string; shift: { id: number; start: string } };
      metrics: { shift: { id: number } } | null;
      currentStop: { stop: { id: number; endTime: string | null } } | null;
      reportsShown: boolean;
    };
    const state = (await rest(p.co.key, `/v1/realtime/${machine.id}`)) as { at: string };
    expect({ ...out.realtime, at: "" }).toEqual({ ...state, at: "" });
    const rows = (await rest(p.co.key, "/v1/reports/metrics", {
      machines: { include: [machine.id] },
      startDate: { equal: out.realtime.shift.start },
    })) as { metrics: { shift: { id: number }; productionMetrics: unknown }[] };
    expect(out.metrics?.shift.id).toBe(rows.metrics[0]?.shift.id);
    expect(out.reportsShown).toBe(true);
    expect(out.currentStop?.stop.endTime).toBeNull();
    expect(answer.content[0]?.text).toContain("; 1 operator; ");
    expect(answer.content[0]?.text).toContain("stopped since");
    expect(answer.content[0]?.text).toContain("reason not given");

    // A reason given at the machine shows at once, in the row and in the summary.
    await operatorJson("POST", `/companies/${p.co.id}/stop-causes`, [
      { kind: "generalCause", name: "Material shortage" },
    ]);
    const given = await api(p.co.key, `/v1/realtime/${machine.id}/stop-reason`, {
      method: "POST",
      json: { generalCause: { name: "Material shortage" } },
    });
    expect(given.status, await given.clone().text()).toBe(200);
    for (const era of ERAS) {
      const after = await callTool(full[era], "machine_now", { machine_id: machine.id });
      expect(after.structuredContent, era).toMatchObject({
        currentStop: { classification: { generalCause: { name: "Material shortage" } } },
      });
      expect(after.content[0]?.text, era).toContain("reason: Material shortage");
    }

    // Without reports.read: the realtime state alone.
    const key = await createKey(p.co.id, ["realtime.read"]);
    for (const era of ERAS) {
      const narrow = await connect({ "x-api-key": key }, era);
      const alone = (await callTool(narrow, "machine_now", { machine_id: machine.id }))
        .structuredContent as { metrics: unknown; currentStop: unknown; reportsShown: boolean };
      expect(alone, era).toMatchObject({ metrics: null, currentStop: null, reportsShown: false });
    }
  });
});

describe.each(ERAS)("every tool answers as its REST twin (%s)", (era) => {
  it("list_machines", async () => {
    const answer = await callTool(full[era], "list_machines");
    expect(answer.structuredContent).toEqual({ machines: await rest(p.co.key, "/v1/machines") });
    expect(answer.content[0]?.text).toContain("M1");
  });

  it("metrics_report, on an ended shift", async () => {
    const body = { startDate: { equal: new Date(yesterday).toISOString() } };
    const answer = await callTool(full[era], "metrics_report", body);
    const expected = (await rest(p.co.key, "/v1/reports/metrics", body)) as { metrics: unknown[] };
    expect(expected.metrics).toHaveLength(1);
    expect(answer.structuredContent).toEqual(expected);
    expect(answer.content[0]?.text).toBe("1 machine x shift row on page 1 of 1 (1 in all).");
  });

  it("stops_report, on closed stops", async () => {
    const body = { endDate: { before: new Date(midnight).toISOString() } };
    const answer = await callTool(full[era], "stops_report", body);
    const expected = (await rest(p.co.key, "/v1/reports/stops", body)) as { stops: unknown[] };
    expect(expected.stops).toHaveLength(1);
    expect(answer.structuredContent).toEqual(expected);
    expect(answer.content[0]?.text).toContain("60.0 minutes");
  });

  it("kpis_report, grouped by machine and SKU over an ended shift", async () => {
    const body = {
      startDate: { equal: new Date(yesterday).toISOString() },
      groupBy: ["machine", "sku"],
    };
    const answer = await callTool(full[era], "kpis_report", body);
    expect(answer.isError, answer.content[0]?.text).toBeFalsy();
    const expected = (await rest(p.co.key, "/v1/reports/kpis", body)) as {
      kpis: { sku: { id: string } | null }[];
    };
    // The logged SKU's time and the time no log covers.
    expect(expected.kpis.map((row) => row.sku?.id ?? null).sort()).toEqual([p.a.id, null].sort());
    expect(answer.structuredContent).toEqual(expected);
    expect(answer.content[0]?.text).toBe("2 KPI groups on page 1 of 1 (2 in all).");
  });

  it("downtime_pareto, on closed stops", async () => {
    const body = { endDate: { before: new Date(midnight).toISOString() } };
    const answer = await callTool(full[era], "downtime_pareto", body);
    const expected = (await rest(p.co.key, "/v1/reports/downtime", body)) as {
      downtime: { minutes: number; share: number }[];
    };
    expect(expected.downtime).toHaveLength(1);
    expect(expected.downtime[0]).toMatchObject({ minutes: 60, share: 1 });
    expect(answer.structuredContent).toEqual(expected);
    expect(answer.content[0]?.text).toContain("100.0 % of the minutes");
  });

  it("signal_data, and its REST ceilings", async () => {
    const window = {
      start_time: new Date(yesterday).toISOString(),
      end_time: new Date(midnight).toISOString(),
      agg_unit: "h",
      agg_function: "sum",
    };
    const signal = p.countSignals[0] ?? "";
    const answer = await callTool(full[era], "signal_data", {
      machine_uuid: uuid,
      public_id: signal,
      ...window,
    });
    const query = new URLSearchParams(window).toString();
    const expected = (await rest(p.co.key, `/v1/machines/${uuid}/signals/${signal}?${query}`)) as {
      data: unknown[];
    };
    expect(expected.data).toHaveLength(8);
    expect(answer.structuredContent).toEqual(expected);
    const tooLong = await callTool(full[era], "signal_data", {
      machine_uuid: uuid,
      public_id: signal,
      start_time: new Date(midnight - 15 * DAY).toISOString(),
      end_time: new Date(midnight).toISOString(),
      agg_unit: "h",
    });
    expect(errorDetail(tooLong)).toEqual([
      {
        loc: ["arguments", "end_time"],
        msg: "The window between start_time and end_time exceeds 14 days",
        type: expect.any(String),
      },
    ]);
    const badArgs = await callTool(full[era], "signal_data", {
      machine_uuid: uuid,
      public_id: signal,
    });
    expect(errorDetail(badArgs)).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc: ["arguments", "start_time"] })]),
    );
  });

  it("search_production_logs", async () => {
    const body = { machines: { include: [p.machines[0]?.id] }, limit: 5 };
    const answer = await callTool(full[era], "search_production_logs", body);
    const expected = (await rest(p.co.key, "/v1/production-logs/filters", body)) as {
      productionLogs: unknown[];
    };
    expect(expected.productionLogs.length).toBeGreaterThanOrEqual(2);
    expect(answer.structuredContent).toEqual(expected);
  });
});

describe.each(ERAS)("another company's ids (%s)", (era) => {
  it("are not found, as on REST", async () => {
    const theirs = other.machines[0];
    if (!theirs?.uuid) throw new Error("no machine");
    const restAnswer = await api(p.co.key, `/v1/realtime/${theirs.id}`);
    expect(restAnswer.status).toBe(404);
    expect(errorDetail(await callTool(full[era], "machine_now", { machine_id: theirs.id }))).toBe(
      ((await restAnswer.json()) as { detail: string }).detail,
    );
    const signal = await callTool(full[era], "signal_data", {
      machine_uuid: theirs.uuid,
      public_id: other.countSignals[0],
      start_time: new Date(yesterday).toISOString(),
      end_time: new Date(midnight).toISOString(),
      agg_unit: "h",
    });
    expect(errorDetail(signal)).toBe("Machine not found");
    const metrics = await callTool(full[era], "metrics_report", {
      machines: { include: [theirs.id] },
    });
    expect(metrics.structuredContent).toMatchObject({ totalCount: 0, metrics: [] });
    const logs = await callTool(full[era], "search_production_logs", {
      machines: { include: [theirs.id] },
    });
    expect(logs.structuredContent).toMatchObject({ totalCount: 0, productionLogs: [] });
  });
});

describe.each(ERAS)("resources (%s)", (era) => {
  it("serve docs/metrics.md and the public OpenAPI document, which leaves /mcp out", async () => {
    const { resources } = await full[era].listResources();
    expect(resources.map((r) => r.uri)).toEqual(["docs://metrics", "docs://openapi"]);
    const metrics = await full[era].readResource({ uri: "docs://metrics" });
    expect(metrics.contents[0]).toMatchObject({ mimeType: "text/markdown", text: metricsMarkdown });
    const openapi = await full[era].readResource({ uri: "docs://openapi" });
    const text = (openapi.contents[0] as { text: string }).text;
    const served = await (await api(p.co.key, "/openapi.json")).json();
    expect(JSON.parse(text)).toEqual(served);
    expect(Object.keys((served as { paths: object }).paths)).not.toContain("/mcp");
    await expect(full[era].readResource({ uri: "docs://nothing" })).rejects.toThrow(/not found/i);
  });
});
