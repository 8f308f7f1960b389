/**
 * Answers one JSON-RPC message of `/mcp` with a server built for this request (stateless),
 * through the SDK's web-standard Streamable HTTP transport. Loaded by `routes.ts` on the
 * first `/mcp` request only: evaluating the SDK is costly (docs/mcp.md), and a cold start of
 * any other route should not pay it.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { invalidParams } from "./jsonrpc";
import { mcpResources } from "./resources";
import { createMcpServer } from "./server";
import type { ToolContext } from "./tool";
import { MCP_TOOLS } from "./tools";

/**
 * The transport's answer to one request: JSON (never an SSE stream), a JSON-RPC error for
 * a wrong `Accept`, `Content-Type` or protocol version, or unreadable JSON (`-32700`), and
 * Invalid params (`-32602`) for params that do not fit their method (src/mcp/jsonrpc.ts).
 *
 * @param ctx the request's credential, database and bindings.
 * @param request the HTTP request, its body not yet read.
 * @param parsedBody the body parsed as JSON, or undefined when it is not JSON (the
 *   transport then reads it and answers the parse error).
 * @param openApiDocument the public OpenAPI document (the `docs://openapi` resource).
 */
export async function handleMcp(
  ctx: ToolContext,
  request: Request,
  parsedBody: unknown,
  openApiDocument: () => unknown,
): Promise<Response> {
  const server = createMcpServer(ctx, MCP_TOOLS, mcpResources(openApiDocument));
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  // Params that do not fit their method are answered Invalid params here, before the SDK's
  // dispatch would answer them as an Internal error with the validator's dump.
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const problem = invalidParams(message);
    if (!problem) return dispatch?.(message, extra);
    const { code, message: text, id } = problem;
    void transport.send({ jsonrpc: "2.0", id, error: { code, message: text } });
  };
  const response = await transport.handleRequest(
    request,
    parsedBody === undefined ? undefined : { parsedBody },
  );
  await server.close();
  return response;
}
