/**
 * The official SDK's clients (Streamable HTTP transport) against the Worker under test, one
 * per protocol era: `@modelcontextprotocol/client` 2.x pinned to revision 2026-07-28 (no
 * `initialize`: `server/discover`, then every request with its `_meta` envelope and the
 * standard headers), and the 1.x SDK's client (`@modelcontextprotocol/sdk`, revision
 * 2025-11-25: `initialize`, then requests), which is what assistants built before the new
 * revision run. Their `fetch` goes to the Worker's own entry point, as a real client's would
 * go over the network.
 */
import { exports } from "cloudflare:workers";
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type VersionNegotiationMode,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator as ModernValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator as LegacyValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";

export const MCP_URL = "http://api.test/mcp";

/** The protocol revisions `/mcp` answers, newest first. */
export const ERAS = ["2026-07-28", "2025-11-25"] as const;
export type Era = (typeof ERAS)[number];

/** A tool as `tools/list` gives it. */
export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean };
}

/** What the tests ask of a client, whichever SDK line made it. */
export interface McpClient {
  listTools(): Promise<{ tools: ListedTool[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<unknown>;
  listResources(): Promise<{ resources: { uri: string }[] }>;
  readResource(params: {
    uri: string;
  }): Promise<{ contents: { uri: string; mimeType?: string; text?: string; blob?: string }[] }>;
  getServerVersion(): { name: string; version: string } | undefined;
  getInstructions(): string | undefined;
  getServerCapabilities(): { tools?: object; resources?: object } | undefined;
  close(): Promise<void>;
}

/** Sends every request of a client to the Worker, with `headers`. */
const toWorker = (url: string | URL, init?: RequestInit) =>
  exports.default.fetch(new Request(url, init));

/**
 * A 2.x client, connected: `mode` pins a revision (the default here) or probes for one
 * (`"auto"`), or speaks 2025-11-25 (`"legacy"`, the 2.x client's own default).
 */
export async function connectModern(
  headers: Record<string, string>,
  mode: VersionNegotiationMode = { pin: "2026-07-28" },
): Promise<ModernClient> {
  // Ajv (the clients' default validator of tool outputs in Node) compiles with
  // `new Function`, which workerd forbids; a Node client needs no such option.
  const client = new ModernClient(
    { name: "mcp-test", version: "1.0.0" },
    { jsonSchemaValidator: new ModernValidator(), versionNegotiation: { mode } },
  );
  await client.connect(
    new ModernTransport(new URL(MCP_URL), { fetch: toWorker, requestInit: { headers } }),
  );
  return client;
}

/** A 1.x client, connected (initialized) with revision 2025-11-25. */
export async function connectLegacy(headers: Record<string, string>): Promise<LegacyClient> {
  const client = new LegacyClient(
    { name: "mcp-test", version: "1.0.0" },
    { jsonSchemaValidator: new LegacyValidator() },
  );
  await client.connect(
    new LegacyTransport(new URL(MCP_URL), { fetch: toWorker, requestInit: { headers } }),
  );
  return client;
}

/** A connected client of `era` sending `headers` with every request. */
export async function connect(headers: Record<string, string>, era: Era): Promise<McpClient> {
  return era === "2026-07-28" ? connectModern(headers) : connectLegacy(headers);
}

/** One raw JSON-RPC POST to /mcp, as any HTTP client would send it. */
export function rawPost(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return exports.default.fetch(
    new Request(MCP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
    }),
  );
}

/**
 * One raw request of revision 2026-07-28: the `_meta` envelope in its params and the
 * standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` for the methods that
 * name a tool or resource), which `omit` leaves out and `headers` overrides.
 */
export function rawModern(
  message: { id: number | string; method: string; params?: Record<string, unknown> },
  headers: Record<string, string> = {},
  options: { omit?: string[]; version?: string } = {},
): Promise<Response> {
  const version = options.version ?? "2026-07-28";
  const params = message.params ?? {};
  const name = params.name ?? params.uri;
  const standard: Record<string, string> = {
    "mcp-protocol-version": version,
    "mcp-method": message.method,
    ...(typeof name === "string" ? { "mcp-name": name } : {}),
  };
  for (const header of options.omit ?? []) delete standard[header];
  const body = {
    jsonrpc: "2.0",
    ...message,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
  return rawPost(JSON.stringify(body), { ...standard, ...headers });
}
