/**
 * The JSON-RPC 2.0 error codes of `/mcp` for messages the SDK would answer with the wrong
 * one (docs/mcp.md, "Errors"): JSON that is not a JSON-RPC message is an Invalid Request
 * (-32600), not a Parse error (-32700, for text that is not JSON); params that do not fit
 * the method are Invalid params (-32602), not an Internal error (-32603) carrying a zod
 * dump (the SDK's dispatch lets the parse failure through as a plain error; upstream
 * modelcontextprotocol/typescript-sdk issue 2284). The methods' schemas are the SDK's
 * public ones (`@modelcontextprotocol/core`).
 */
import {
  CallToolRequestSchema,
  DiscoverRequestSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/core";

/** The codes of the JSON-RPC 2.0 specification, section 5.1. */
export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** A JSON-RPC error to answer, with the id it answers (null when none could be read). */
interface JsonRpcProblem {
  code: number;
  message: string;
  id: string | number | null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A request id as MCP allows it: a string or an integer, never null. */
const isRequestId = (id: unknown): id is string | number =>
  typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id));

/**
 * The request schemas of the methods this server answers (the SDK's own), by method, in
 * either era (`initialize` and `ping` in 2025-11-25, `server/discover` in 2026-07-28). Only
 * these: the params of a method the server does not offer are not checked, so that it stays
 * Method not found (-32601).
 */
const SERVED_REQUESTS = new Map(
  [
    InitializeRequestSchema,
    PingRequestSchema,
    DiscoverRequestSchema,
    ListToolsRequestSchema,
    CallToolRequestSchema,
    ListResourcesRequestSchema,
    ReadResourceRequestSchema,
  ].map((schema) => [schema.shape.method.value as string, schema]),
);

/**
 * What the SDK's transport cannot be given: a parsed JSON body that is not one JSON-RPC
 * 2.0 message as MCP takes it (a request: `method`, an `id` string or integer; a
 * notification: `method`, no `id`; a response: `id` with `result` or `error`) is an
 * Invalid Request (HTTP 400, as the transport answers the messages it cannot read); a
 * request whose `params` is an array (structured, so a JSON-RPC request, but MCP's params
 * are objects) is Invalid params for a method the server offers, Method not found for
 * another (HTTP 200, as the transport answers a request it read).
 *
 * @param body the body, parsed (a batch, an array, is refused before this).
 * @returns the HTTP status and the error to answer, or undefined for a message the
 *   transport can take.
 */
export function refusedMessage(
  body: unknown,
): { status: 200 | 400; problem: JsonRpcProblem } | undefined {
  const problem = invalidRequest(body);
  if (problem) return { status: 400, problem };
  if (!isObject(body) || !Array.isArray(body.params) || typeof body.method !== "string") {
    return undefined;
  }
  const id = isRequestId(body.id) ? body.id : null;
  if (!SERVED_REQUESTS.has(body.method)) {
    return {
      status: 200,
      problem: { code: JSON_RPC.methodNotFound, message: "Method not found", id },
    };
  }
  return {
    status: 200,
    problem: {
      code: JSON_RPC.invalidParams,
      message: `Invalid params for ${body.method}: params must be an object`,
      id,
    },
  };
}

function invalidRequest(body: unknown): JsonRpcProblem | undefined {
  const id = isObject(body) && isRequestId(body.id) ? body.id : null;
  const refuse = (why: string): JsonRpcProblem => ({
    code: JSON_RPC.invalidRequest,
    message: `Invalid Request: ${why}`,
    id,
  });
  if (!isObject(body)) return refuse("a JSON-RPC message is a JSON object");
  if (body.jsonrpc !== "2.0") return refuse('"jsonrpc" must be "2.0"');
  if ("method" in body) {
    if (typeof body.method !== "string") return refuse('"method" must be a string');
    if ("id" in body && !isRequestId(body.id)) {
      return refuse('"id" must be a string or an integer (MCP: never null)');
    }
    if ("params" in body && typeof body.params !== "object") {
      return refuse('"params" must be an object');
    }
    if ("params" in body && body.params === null) return refuse('"params" must be an object');
    return undefined;
  }
  if (!("id" in body)) return refuse('a message has a "method" (request) or an "id" (response)');
  if (!isRequestId(body.id) && body.id !== null) return refuse('"id" must be a string or integer');
  if ("result" in body === "error" in body) {
    return refuse('a response has exactly one of "result" and "error"');
  }
  return undefined;
}

/**
 * Whether a request's params fit its method (the SDK's schema of it), before the SDK
 * dispatches it.
 *
 * @param message a JSON-RPC message that passed {@link invalidRequest}.
 * @returns the Invalid params (-32602) to answer, naming each wrong field and what it must
 *   be (never the validator's dump), or undefined.
 */
export function invalidParams(
  message: unknown,
): (JsonRpcProblem & { id: string | number }) | undefined {
  if (!isObject(message) || typeof message.method !== "string" || !isRequestId(message.id)) {
    return undefined;
  }
  const schema = SERVED_REQUESTS.get(message.method);
  if (!schema) return undefined;
  const parsed = schema.safeParse({ method: message.method, params: message.params });
  if (parsed.success) return undefined;
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.map(String).join(".");
    return `${where || "params"}: ${issue.message}`;
  });
  return {
    code: JSON_RPC.invalidParams,
    message: `Invalid params for ${message.method}: ${problems.join("; ")}`,
    id: message.id,
  };
}
