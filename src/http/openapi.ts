/**
 * Shared OpenAPI pieces: error schemas, the standard error responses, and
 * `publicRoute`, which makes a `createRoute` for a public endpoint with its
 * security, its one scope and every status it can return.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { authenticate, requireScope } from "../auth/middleware";

export const ErrorSchema = z
  .object({ detail: z.string().openapi({ example: "Not authenticated" }) })
  .openapi("Error", { description: "Every error but 422: a human-readable `detail`." });

export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({
        loc: z
          .array(z.union([z.string(), z.number().int()]))
          .openapi({ example: ["query", "agg_unit"] }),
        msg: z.string(),
        type: z.string(),
      }),
    ),
  })
  .openapi("ValidationError", {
    description:
      "422: one entry per problem; `loc` names the request part, then the path inside it.",
  });

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** Responses every public route can give besides its own. */
export const STANDARD_ERROR_RESPONSES = {
  401: json(
    ErrorSchema,
    "No credential, an unknown or revoked one, or two at once (`WWW-Authenticate` is set).",
  ),
  403: json(
    ErrorSchema,
    "The credential lacks the route's scope: `Not enough permissions. Missing scope: <scope>`.",
  ),
  422: json(ValidationErrorSchema, "Invalid path, query or body."),
  500: json(
    ErrorSchema,
    "Unexpected error; the body never carries internal details. Quote `X-Request-Id`.",
  ),
} as const;

export const NOT_FOUND_RESPONSE = {
  404: json(ErrorSchema, "Unknown id, or an id of another company."),
} as const;

export const SECURITY: Record<string, string[]>[] = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

type PublicRouteConfig = Omit<RouteConfig, "security" | "middleware">;

/**
 * Defines a public route: authenticated (API key or Bearer token), needing `scope`.
 *
 * The scope is published in the operation's description and as the extension
 * `x-required-scope`; the standard 401/403/422/500 responses are added.
 *
 * @param scope `section.action`.
 * @param route the route without security or middleware.
 */
export function publicRoute<R extends PublicRouteConfig>(scope: string, route: R) {
  const description = [route.description, `**Required scope:** \`${scope}\``]
    .filter(Boolean)
    .join("\n\n");
  return createRoute({
    ...route,
    description,
    security: SECURITY,
    "x-required-scope": scope,
    middleware: [authenticate(), requireScope(scope)] as const,
    responses: { ...STANDARD_ERROR_RESPONSES, ...route.responses },
  });
}

/** JSON response description shorthand for route definitions. */
export const jsonResponse = json;
