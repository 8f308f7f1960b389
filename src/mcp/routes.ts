/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, revision 2026-07-28 (stateless by
 * design: `_meta` on every request, `server/discover`) and, for the clients made before it,
 * 2025-11-25 (`initialize`, served statelessly), behind the same security chain as `/v1`
 * (`publicChain`): failed authentications limited per client address, the credential
 * (`x-api-key` or a Bearer access token; 401 with `WWW-Authenticate` before anything is
 * read), the credential's rate limit, the public body size limit. Each POST carries one
 * JSON-RPC message and gets its answer as JSON (no SSE stream: the tools answer at once; a
 * `subscriptions/listen` gets its acknowledgement and end as one short stream). Not in
 * /openapi.json (one JSON-RPC endpoint is not a REST operation); described in docs/mcp.md.
 */

import { originValidationResponse } from "@modelcontextprotocol/server";
import { type Context, Hono } from "hono";
import { every } from "hono/combine";
import type { StatusCode } from "hono/utils/http-status";
import { publicChain } from "../app-chain/public-route";
import { type AppEnv, scopeOf } from "../app-env";
import { JSON_RPC, refusedMessage } from "./jsonrpc";

const MCP_PATH = "/mcp";

/** A JSON-RPC error answer to a body that is not one JSON-RPC message (id null unless read). */
function jsonRpcError(
  code: number,
  message: string,
  id: string | number | null = null,
  status: 200 | 400 = 400,
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id }), {
    status,
    headers: { "content-type": "application/json" },
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
 * The transport's rule against DNS rebinding ("Servers MUST validate the Origin header";
 * MCP, Streamable HTTP, security warning): a request whose `Origin` header is present and
 * names another host than the API's own (or is unreadable, as the opaque `null`) gets a
 * 403 with a JSON-RPC error (`-32000`, no id) before its credential is looked at. Clients
 * that are not browsers send no `Origin` and pass; so does a page the API serves itself
 * (`/board`). The check is the SDK's (`originValidationResponse`).
 */
async function refuseOtherOrigins(c: Context<AppEnv>, next: () => Promise<void>) {
  const refused = originValidationResponse(c.req.raw, [new URL(c.req.url).hostname]);
  if (refused) return relay(c, refused);
  await next();
}

/**
 * The `/mcp` routes.
 *
 * @param openApiDocument the public OpenAPI document (the `docs://openapi` resource).
 */
export function mcpRoutes(openApiDocument: () => unknown) {
  // POST only: another verb is the app's 405 with `Allow` (src/http/allowed-methods.ts), as on
  // every path; stateless, there is no session to resume (GET) or end (DELETE).
  // The chain of every `/v1` route (src/app-chain/public-route.ts), with no scope of its own
  // (each tool needs its REST twin's, checked by the server) and the body left unparsed:
  // JSON-RPC has its own answers to a body that is not a message.
  return new Hono<AppEnv>().post(
    MCP_PATH,
    refuseOtherOrigins,
    every(...publicChain({ scope: null, body: "sized" })),
    async function mcp(c) {
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
          jsonRpcError(
            JSON_RPC.invalidRequest,
            "Invalid Request: send one JSON-RPC message per request",
          ),
        );
      }
      // JSON that is not a JSON-RPC message is an Invalid Request; the SDK would call it a
      // Parse error, which JSON-RPC keeps for text that is not JSON (src/mcp/jsonrpc.ts).
      const refused = parsedOk ? refusedMessage(parsed) : undefined;
      if (refused) {
        const { code, message, id } = refused.problem;
        return relay(c, jsonRpcError(code, message, id, refused.status));
      }
      // The body is read once, here; the SDK checks Content-Type (and Accept, on
      // 2025-11-25), the protocol version and the standard headers, and answers unreadable
      // JSON with a parse error.
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
