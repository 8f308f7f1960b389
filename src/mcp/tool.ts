/**
 * One MCP tool as a small declaration (name, scope, Zod input and output, the function it
 * calls, a one-line summary) and what the server needs of it: JSON Schemas, the scope check,
 * argument validation with the REST 422 issues, and errors as tool results.
 */
import { getOpenApiMetadata } from "@asteasolutions/zod-to-openapi";
import { z } from "@hono/zod-openapi";
import type { Principal } from "../app-env";
import type { NamedScope } from "../db/company-scope";
import type { Env } from "../env";
import { ApiError, missingScope } from "../http/errors";
import { toValidationIssues } from "../http/validation";
import { logError } from "../observability/log";
import { argumentsCheck, argumentsSchemaOf } from "./tool-schema";

/** What a tool call acts for: the request's bindings, company scope and credential. */
export interface ToolContext {
  env: Env;
  /** The credential's company, with its database, name and time zone (`scopeOf`). */
  scope: NamedScope;
  /** The credential (its scopes gate each tool). */
  principal: Principal;
  /** `X-Request-Id` of the HTTP request carrying the call (logged with a failure). */
  requestId: string;
}

/**
 * A tool as declared: the REST twin's own schemas and function.
 *
 * @typeParam I the input: a Zod object (the REST body, query or path schema).
 * @typeParam O the structured output: a Zod object (the REST response schema).
 */
interface ToolDeclaration<I extends z.ZodObject, O extends z.ZodObject> {
  /** snake_case, stable: assistants remember it. */
  name: string;
  title: string;
  /** The one scope a credential needs, as on the REST twin. */
  scope: string;
  /** What the tool answers, with units and meaning (minutes, fractions, time zone). */
  description: string;
  input: I;
  output: O;
  /** The REST twin's code, on validated arguments. */
  run(ctx: ToolContext, input: z.output<I>): Promise<z.input<O>>;
  /** One or two sentences for the text content, beside the structured output. */
  summary(result: z.input<O>, input: z.output<I>): string;
}

/** A tool's answer: structured output and text, or an error body (`{detail}`) as text. */
type ToolResult =
  | { ok: true; structured: Record<string, unknown>; text: string }
  | { ok: false; detail: unknown };

/** A declared tool, ready for the server (types erased, so one list holds every tool). */
export interface McpTool {
  name: string;
  title: string;
  scope: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  /** Checks the scope, validates `args`, runs; never throws an `ApiError`. */
  call(ctx: ToolContext, args: unknown): Promise<ToolResult>;
}

/**
 * A JSON Schema (2020-12, as MCP asks) of a tool's result, with the descriptions the REST
 * schemas carry in their OpenAPI metadata, so that an assistant reads what a partner reads
 * on /docs. (The arguments' schema: `argumentsSchemaOf`, as strict as the tool.)
 *
 * @param io `output` for results; `input` reads defaults as optional.
 */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    override: ({ zodSchema, jsonSchema }) => {
      const meta = getOpenApiMetadata(zodSchema as never) as { description?: unknown };
      if (typeof meta.description === "string" && jsonSchema.description === undefined) {
        jsonSchema.description = meta.description;
      }
    },
  }) as Record<string, unknown>;
}

/** REST locations name the request part; a tool has only its arguments. */
function asArgumentIssues(detail: ApiError["detail"]): ApiError["detail"] {
  if (typeof detail === "string") return detail;
  return detail.map((issue) => ({ ...issue, loc: ["arguments", ...issue.loc.slice(1)] }));
}

/**
 * Makes a server tool of a declaration.
 *
 * The call answers, in order: the missing scope (the REST 403's words), invalid arguments
 * (the REST 422's issues, at `["arguments", ...]`: the Zod schema's, then those of the
 * advertised `inputSchema` for what the Zod schema reads more leniently), the twin's own
 * `ApiError` (404 for another company's ids, 409, 422 past a ceiling) as `{detail}`;
 * anything else is logged with the request id and answered `Internal Server Error`, never
 * with internals.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  declaration: ToolDeclaration<I, O>,
): McpTool {
  const { name, title, scope, description, input, output } = declaration;
  const inputSchema = argumentsSchemaOf(input);
  const advertised = argumentsCheck(inputSchema);
  return {
    name,
    title,
    scope,
    description: `${description}\n\nRequired scope: ${scope}.`,
    inputSchema,
    outputSchema: jsonSchemaOf(output, "output"),
    async call(ctx, args) {
      if (!ctx.principal.scopes.has(scope))
        return { ok: false, detail: missingScope(scope).detail };
      const parsed = input.safeParse(args ?? {});
      if (!parsed.success) {
        return { ok: false, detail: toValidationIssues(parsed.error, "arguments") };
      }
      const refused = advertised(args ?? {});
      if (refused.length > 0) return { ok: false, detail: refused };
      try {
        const result = await declaration.run(ctx, parsed.data);
        return {
          ok: true,
          structured: result as Record<string, unknown>,
          text: declaration.summary(result, parsed.data),
        };
      } catch (error) {
        if (error instanceof ApiError) return { ok: false, detail: asArgumentIssues(error.detail) };
        logError("mcp_tool_failed", error, { requestId: ctx.requestId, tool: name });
        return { ok: false, detail: "Internal Server Error" };
      }
    },
  };
}
