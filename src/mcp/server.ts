/**
 * The MCP server of one request (stateless: a new server per HTTP request, nothing kept
 * between them), on the SDK's low-level `Server`, so that `tools/list` can show only the tools
 * the credential's scopes allow while `tools/call` of a hidden tool still answers with the
 * missing scope, as the REST 403 does.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { McpResource } from "./resources";
import type { McpTool, ToolContext } from "./tool";

/** JSON-RPC code of an unknown resource URI (MCP 2025-11-25, "Resources", error handling). */
const RESOURCE_NOT_FOUND = -32002;

/** The server's name and version in `initialize`. */
const MCP_SERVER_INFO = { name: "production-monitoring", version: "0.1.0" } as const;

/**
 * A request handler whose unexpected failures are logged with the request id and answered
 * as a JSON-RPC Internal error without their message (which could name internals); an
 * `McpError` (unknown tool, unknown resource) keeps its code and words.
 */
function guarded<A extends unknown[], R>(
  ctx: ToolContext,
  handler: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (error instanceof McpError) throw error;
      console.error(
        JSON.stringify({
          level: "error",
          requestId: ctx.requestId,
          error: String(error),
          stack: error instanceof Error ? error.stack : undefined,
        }),
      );
      throw new McpError(ErrorCode.InternalError, "Internal error");
    }
  };
}

/** What an assistant is told once, at `initialize`: who it acts for and the units. */
function instructions(ctx: ToolContext): string {
  const { companyName, timezone } = ctx.principal;
  return (
    `Read-only access to the production data of ${companyName}, whose shifts follow the time ` +
    `zone ${timezone}. Instants are ISO 8601 in UTC (convert to ${timezone} when you talk ` +
    "about a shift or a day at the plant); durations are minutes; availability, effectiveness, " +
    "quality and OEE are fractions (0.85 = 85 %). Start with list_machines for machine ids. " +
    "The resource docs://metrics defines every OEE figure."
  );
}

/** A tool result: the structured output with its summary, or the error body as text. */
function toCallResult(result: Awaited<ReturnType<McpTool["call"]>>): CallToolResult {
  if (!result.ok) {
    return {
      isError: true,
      content: [{ type: "text", text: JSON.stringify({ detail: result.detail }) }],
    };
  }
  return { structuredContent: result.structured, content: [{ type: "text", text: result.text }] };
}

/**
 * Builds the server for one request.
 *
 * @param ctx the request's credential, database and bindings.
 * @param tools every tool; `tools/list` shows those whose scope the credential holds.
 * @param resources the readable documents (no scope: they describe the API, not a company).
 */
export function createMcpServer(
  ctx: ToolContext,
  tools: readonly McpTool[],
  resources: readonly McpResource[],
): Server {
  const server = new Server(MCP_SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    instructions: instructions(ctx),
    // Ajv compiles schemas with `new Function`, which workerd forbids.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  server.setRequestHandler(
    ListToolsRequestSchema,
    guarded(ctx, () => ({
      tools: tools
        .filter((tool) => ctx.principal.scopes.has(tool.scope))
        .map((tool) => ({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          inputSchema: tool.inputSchema as { type: "object" },
          outputSchema: tool.outputSchema as { type: "object" },
          annotations: { readOnlyHint: true, openWorldHint: false, title: tool.title },
        })),
    })),
  );

  server.setRequestHandler(
    CallToolRequestSchema,
    guarded(ctx, async (request) => {
      const tool = byName.get(request.params.name);
      if (!tool) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
      }
      return toCallResult(await tool.call(ctx, request.params.arguments));
    }),
  );

  server.setRequestHandler(
    ListResourcesRequestSchema,
    guarded(ctx, () => ({
      resources: resources.map(({ uri, name, title, description, mimeType }) => ({
        uri,
        name,
        title,
        description,
        mimeType,
      })),
    })),
  );

  server.setRequestHandler(
    ReadResourceRequestSchema,
    guarded(ctx, (request) => {
      const resource = resources.find((r) => r.uri === request.params.uri);
      if (!resource) {
        throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`);
      }
      return {
        contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.read() }],
      };
    }),
  );
  return server;
}
