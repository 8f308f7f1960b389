/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (revision 2025-11-25), stateless,
 * behind the same front door as `/v1`: failed authentications limited per client address,
 * the credential (`x-api-key` or a Bearer access token; 401 with `WWW-Authenticate` before
 * anything is read), the credential's rate limit, the public body size limit. Each POST
 * carries one JSON-RPC message and gets its answer as JSON (no SSE stream: the tools answer
 * at once). Not in /openapi.json (one JSON-RPC endpoint is not a REST operation); described
 * in docs/mcp.md.
 */

import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { StatusCode } from "hono/utils/http-status";
import { type AppEnv, scopeOf } from "../app-env";
import { authenticate } from "../auth/middleware";
import { ApiError } from "../http/errors";
import { PUBLIC_MAX_BODY_BYTES, tooLargeDetail } from "../http/json-body";
import { limitFailedAuthentications, rateLimit } from "../rate-limit/middleware";

export const MCP_PATH = "/mcp";

/** A JSON-RPC error answer with no request id (the request could not be read as one). */
function jsonRpcError(status: 400 | 405, code: number, message: string, headers = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * The transport's answer through the context, so that it carries what the middleware set
 * (`X-Request-Id`, the `RateLimit` fields) as every other answer does.
 */
function relay(c: Context<AppEnv>, response: Response): Response {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return c.newResponse(response.body, response.status as StatusCode, headers);
}

/**
 * The `/mcp` routes.
 *
 * @param openApiDocument the public OpenAPI document (the `docs://openapi` resource).
 */
export function mcpRoutes(openApiDocument: () => unknown) {
  return new Hono<AppEnv>().all(
    MCP_PATH,
    limitFailedAuthentications(),
    authenticate(),
    rateLimit(),
    bodyLimit({
      maxSize: PUBLIC_MAX_BODY_BYTES,
      onError: () => {
        throw new ApiError(413, tooLargeDetail(PUBLIC_MAX_BODY_BYTES));
      },
    }),
    async function mcp(c) {
      // Stateless: no session to resume or end, and no server-initiated messages to stream.
      if (c.req.method !== "POST") {
        return relay(
          c,
          jsonRpcError(405, -32000, "Method not allowed: send JSON-RPC messages by POST", {
            Allow: "POST",
          }),
        );
      }
      const text = await c.req.text();
      let parsed: unknown;
      let parsedOk = true;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsedOk = false;
      }
      // Revision 2025-06-18 dropped batches; one message per request also keeps one
      // request = one unit of the rate limit.
      if (parsedOk && Array.isArray(parsed)) {
        return relay(
          c,
          jsonRpcError(400, -32600, "Invalid Request: send one JSON-RPC message per request"),
        );
      }
      // The body is read once, here; the transport checks Accept, Content-Type and the
      // protocol version, and answers unreadable JSON with a JSON-RPC parse error.
      const request = new Request(c.req.url, {
        method: "POST",
        headers: c.req.raw.headers,
        body: text,
      });
      const { handleMcp } = await import("./handle");
      const response = await handleMcp(
        {
          env: c.env,
          scope: scopeOf(c),
          principal: c.get("principal"),
          requestId: c.get("requestId"),
        },
        request,
        parsedOk ? parsed : undefined,
        openApiDocument,
      );
      return relay(c, response);
    },
  );
}
