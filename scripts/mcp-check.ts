/**
 * `npm run mcp [-- --url URL --key KEY]`: the official MCP client (`@modelcontextprotocol/client`
 * 2.x, Streamable HTTP) against a running Worker's `/mcp`, in both protocol eras
 * (docs/mcp.md):
 *
 * - revision 2026-07-28: `server/discover` (the versions, the server, its instructions), the
 *   tools the key may use, `list_machines` and `metrics_report`, the `docs://metrics` resource;
 * - revision 2025-11-25 (the client's own default, as clients made before 2026-07-28 speak):
 *   `initialize`, the tools, `list_machines`.
 *
 * Defaults: `$PM_URL`, else the Worker `npm start` runs, whatever its port; `$PM_KEY` or the
 * demo's full-access key of Demo Plant A (`.wrangler/demo-keys.json`). Exits 1 when a step
 * fails.
 */
import { parseArgs } from "node:util";
import {
  Client,
  StreamableHTTPClientTransport,
  type VersionNegotiationMode,
} from "@modelcontextprotocol/client";
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

/** A client connected to `/mcp` in the era `mode` asks for. */
async function connect(
  baseUrl: string,
  key: string,
  mode: VersionNegotiationMode,
): Promise<Client> {
  const client = new Client(
    { name: "production-monitoring-mcp-check", version: "1.0.0" },
    { versionNegotiation: { mode } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL("/mcp", baseUrl), {
      requestInit: { headers: { "x-api-key": key } },
    }),
  );
  const server = client.getServerVersion();
  console.log(
    `Connected to ${server?.name} ${server?.version}: protocol ${client.getNegotiatedProtocolVersion()} (${client.getProtocolEra()} era)`,
  );
  return client;
}

/**
 * Lists the tools and makes `calls`.
 *
 * @returns whether a call the key may make failed (a tool the key lacks is an expected
 *   refusal naming the scope, not a failure).
 */
async function listAndCall(
  client: Client,
  calls: [string, Record<string, unknown>][],
): Promise<boolean> {
  const { tools } = await client.listTools();
  console.log(`  tools this key may use: ${tools.map((t) => t.name).join(", ") || "(none)"}`);
  let failed = false;
  for (const [name, args] of calls) {
    const answer = (await client.callTool({ name, arguments: args })) as ToolAnswer;
    console.log(`  ${name} ${JSON.stringify(args)}: ${textOf(answer)}`);
    if (answer.isError && tools.some((t) => t.name === name)) failed = true;
  }
  return failed;
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

  console.log("Revision 2026-07-28 (server/discover, _meta on every request):");
  const modern = await connect(baseUrl, key, { pin: "2026-07-28" });
  const discovered = modern.getDiscoverResult();
  console.log(`  server/discover: versions ${discovered?.supportedVersions.join(", ")}`);
  console.log(`  instructions: ${modern.getInstructions() ?? "(none)"}`);
  let failed = await listAndCall(modern, [
    ["list_machines", {}],
    ["metrics_report", { limit: 3 }],
  ]);
  const metrics = await modern.readResource({ uri: "docs://metrics" });
  const first = metrics.contents[0];
  const text = first && "text" in first ? first.text : "";
  console.log(`  docs://metrics: ${text.split("\n")[0]} (${text.length} characters)`);
  await modern.close();

  console.log("Revision 2025-11-25 (initialize, as clients made before 2026-07-28):");
  const legacy = await connect(baseUrl, key, "legacy");
  failed = (await listAndCall(legacy, [["list_machines", {}]])) || failed;
  await legacy.close();
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
