/**
 * The official SDK's client (Streamable HTTP transport) against the Worker under test: its
 * `fetch` goes to the Worker's own entry point, as a real client's would go over the network.
 */
import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";

export const MCP_URL = "http://api.test/mcp";

/** A connected (initialized) client sending `headers` with every request. */
export async function connect(headers: Record<string, string>): Promise<Client> {
  // Ajv (the client's default validator of tool outputs) compiles with `new Function`,
  // which workerd forbids; a Node client needs no such option.
  const client = new Client(
    { name: "mcp-test", version: "1.0.0" },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: (url, init) => exports.default.fetch(new Request(url, init)),
    requestInit: { headers },
  });
  await client.connect(transport);
  return client;
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
