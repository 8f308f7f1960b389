/**
 * The MCP server of one request (stateless: a new server per HTTP request, nothing kept
 * between them), on the SDK's low-level `Server` (its documented choice for "a tool set
 * computed per request"), so that `tools/list` can show only the tools the credential's
 * scopes allow while `tools/call` of a hidden tool still answers with the missing scope, as
 * the REST 403 does. The same server answers both protocol eras: the SDK encodes each
 * answer for the revision the request speaks (`resultType` and `serverInfo` on 2026-07-28
 * results, none on 2025-11-25 ones).
 */
import {
  type CallToolResult,
  type JSONRPCRequest,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  type Result,
  Server,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { logError } from "../observability/log";
import { invalidParams } from "./jsonrpc";
import type { McpResource } from "./resources";
import type { McpTool, ToolContext } from "./tool";

/** The server's name and version (`server/discover`'s `_meta`, `initialize`'s `serverInfo`). */
const MCP_SERVER_INFO = { name: "production-monitoring", version: "0.1.0" } as const;

/** A request handler as the SDK stores it: the raw request in, a result out. */
type RawHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * `Server` whose every request handler first checks the request's params against the
 * method's schema (`invalidParams`, src/mcp/jsonrpc.ts): params that do not fit are Invalid
 * params (-32602) naming the field, where the SDK's own check of a spec method throws a plain
 * error that it answers as an Internal error (-32603) carrying the validator's dump. The check
 * runs where the SDK dispatches, after its transport checks (headers, envelope, protocol
 * version), so those keep their own codes.
 */
class CheckedServer extends Server {
  protected override _wrapHandler(method: string, handler: RawHandler): RawHandler {
    const wrapped = super._wrapHandler(method, handler);
    return (request, ctx) => {
      const problem = invalidParams(request);
      if (problem) throw new ProtocolError(problem.code, problem.message);
      return wrapped(request, ctx);
    };
  }
}

/**
 * A request handler whose unexpected failures are logged with the request id and answered
 * as a JSON-RPC Internal error without their message (which could name internals); a
 * `ProtocolError` (unknown tool, unknown resource) keeps its code and words.
 */
function guarded<A extends unknown[], R>(
  ctx: ToolContext,
  handler: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await handler(...args);
    } catch (error) {
      if (error instanceof ProtocolError) throw error;
      logError("mcp_handler_failed", error, { requestId: ctx.requestId });
      throw new ProtocolError(ProtocolErrorCode.InternalError, "Internal error");
    }
  };
}

/**
 * What an assistant is told once (`server/discover` on 2026-07-28, `initialize` on
 * 2025-11-25): who it acts for and the units.
 */
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
  const server = new CheckedServer(MCP_SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
    instructions: instructions(ctx),
    // Ajv compiles schemas with `new Function`, which workerd forbids.
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
  });
  const byName = new Map(tools.map((tool) => [tool.name, tool]));

  server.setRequestHandler(
    "tools/list",
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
    "tools/call",
    guarded(ctx, async (request) => {
      const tool = byName.get(request.params.name);
      if (!tool) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown tool: ${request.params.name}`,
        );
      }
      return toCallResult(await tool.call(ctx, request.params.arguments));
    }),
  );

  server.setRequestHandler(
    "resources/list",
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
    "resources/read",
    guarded(ctx, (request) => {
      const { uri } = request.params;
      const resource = resources.find((r) => r.uri === uri);
      // -32602 with `data.uri` in both eras (2026-07-28 moved it from -32002; the SDK sends
      // -32602 to 2025-11-25 clients too, as its 1.x line always did).
      if (!resource) throw new ResourceNotFoundError(uri);
      return {
        contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.read() }],
      };
    }),
  );
  return server;
}
