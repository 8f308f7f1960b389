/**
 * `npm run mcp [-- --url URL --key KEY]`: the official MCP SDK client (Streamable HTTP)
 * against a running Worker's `/mcp`: initializes, lists the tools the key may use, calls
 * `list_machines` and `metrics_report`, and reads the `docs://metrics` resource (docs/mcp.md).
 * Defaults: `$PM_URL`, else the Worker `npm start` runs, whatever its port; `$PM_KEY` or the demo's full-access key of
 * Demo Plant A (`.wrangler/demo-keys.json`). Exits 1 when a step fails.
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { readDemoKeys } from "./lib/demo-seed";
import { resolveBaseUrl } from "./lib/local-server";

interface ToolAnswer {
  isError?: boolean;
  content: { type: string; text?: string }[];
}

/** The text of a tool's answer, marked when it is an error. */
function textOf(answer: ToolAnswer): string {
  const text = answer.content.map((c) => c.text ?? "").join(" ");
  return answer.isError ? `error: ${text}` : text;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { url: { type: "string" }, key: { type: "string" } },
  });
  const baseUrl = resolveBaseUrl(values.url);
  const key =
    values.key ??
    process.env.PM_KEY ??
    readDemoKeys(baseUrl).find((k) => k.company === "Demo Plant A" && k.name === "demo-full-access")
      ?.key;
  if (!key) {
    console.error(
      `No key for ${baseUrl}: give --key, set PM_KEY (eval "$(npm run --silent demo-env)") or run npm start.`,
    );
    return 2;
  }
  const client = new Client({ name: "production-monitoring-mcp-check", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), {
    requestInit: { headers: { "x-api-key": key } },
  });
  await client.connect(transport);
  const server = client.getServerVersion();
  console.log(
    `Connected to ${server?.name} ${server?.version}, protocol ${transport.protocolVersion}`,
  );
  console.log(`Instructions: ${client.getInstructions() ?? "(none)"}`);
  const { tools } = await client.listTools();
  console.log(`Tools this key may use: ${tools.map((t) => t.name).join(", ") || "(none)"}`);
  let failed = false;
  const calls: [string, Record<string, unknown>][] = [
    ["list_machines", {}],
    ["metrics_report", { limit: 3 }],
  ];
  for (const [name, args] of calls) {
    const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
    console.log(`${name} ${JSON.stringify(args)}: ${textOf(answer)}`);
    // A tool the key lacks is an expected refusal (it names the scope), not a failure.
    if (answer.isError && tools.some((t) => t.name === name)) failed = true;
  }
  const metrics = await client.readResource({ uri: "docs://metrics" });
  const first = metrics.contents[0];
  const text = first && "text" in first ? first.text : "";
  console.log(`docs://metrics: ${text.split("\n")[0]} (${text.length} characters)`);
  await client.close();
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
