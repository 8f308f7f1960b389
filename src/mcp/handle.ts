/**
 * Answers one JSON-RPC message of `/mcp` with a server built for this request (stateless),
 * in the protocol era the request speaks, through the SDK's web-standard entry points
 * (`@modelcontextprotocol/server` 2.x). Loaded by `routes.ts` on the first `/mcp` request
 * only: evaluating the SDK is costly (docs/mcp.md), and a cold start of any other route
 * should not pay it.
 *
 * - Revision 2026-07-28 (a request carrying the `_meta` envelope): `createMcpHandler`, which
 *   checks the envelope, the protocol version (`-32022` for one it does not serve) and the
 *   standard headers `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (`-32020` when missing
 *   or not the body's), answers `server/discover`, stamps `resultType` and the server's
 *   identity on every result, and answers a `subscriptions/listen` (nothing to listen to
 *   here) with its acknowledgement and a graceful end.
 * - Revision 2025-11-25 and earlier (no envelope: `initialize`, then requests): the SDK's
 *   stateless Streamable HTTP transport, answering JSON as it always did here (the entry's own
 *   fallback would answer an SSE stream).
 */
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { log } from "../observability/log";
import { mcpResources } from "./resources";
import { createMcpServer } from "./server";
import type { ToolContext } from "./tool";
import { MCP_TOOLS } from "./tools";

/**
 * The SDK's answer to one request: JSON (an SSE stream only for `subscriptions/listen`, which
 * ends at once: the tools send no progress), or a JSON-RPC error for a wrong `Content-Type`,
 * `Accept` (2025-11-25), protocol version or standard header,
 * unreadable JSON (`-32700`), and Invalid params (`-32602`) for params that do not fit their
 * method (src/mcp/jsonrpc.ts).
 *
 * @param ctx the request's credential, database and bindings.
 * @param request the HTTP request, its body not yet read.
 * @param parsedBody the body parsed as JSON, or undefined when it is not JSON (the SDK then
 *   reads it and answers the parse error).
 * @param openApiDocument the public OpenAPI document (the `docs://openapi` resource).
 */
export async function handleMcp(
  ctx: ToolContext,
  request: Request,
  parsedBody: unknown,
  openApiDocument: () => unknown,
): Promise<Response> {
  const build = () => createMcpServer(ctx, MCP_TOOLS, mcpResources(openApiDocument));
  if (await isLegacyRequest(request, parsedBody)) return answerLegacy(build(), request, parsedBody);
  const handler = createMcpHandler(build, {
    // 2025-era requests are answered above; this handler sees only enveloped ones.
    legacy: "reject",
    onerror: (error) => logRefusal(ctx, error),
  });
  return handler.fetch(request, parsedBody === undefined ? undefined : { parsedBody });
}

/** A 2025-11-25 request through the stateless transport: one JSON answer, then teardown. */
async function answerLegacy(
  server: ReturnType<typeof createMcpServer>,
  request: Request,
  parsedBody: unknown,
): Promise<Response> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(
      request,
      parsedBody === undefined ? undefined : { parsedBody },
    );
  } finally {
    await server.close();
  }
}

/**
 * What the modern entry reports: a request it refused (its answer says why to the client)
 * or a failure of its own (answered 500 `-32603` without details). Logged as a warning with
 * the request id, for an operator reading why a client's calls fail.
 */
function logRefusal(ctx: ToolContext, error: Error): void {
  log("warn", "mcp_refused", { requestId: ctx.requestId, mcp: error.message });
}
