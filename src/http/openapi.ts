/**
 * Shared OpenAPI pieces: error schemas, the standard error responses, and
 * `publicRoute`, which makes a `createRoute` for a public endpoint with its
 * security, its one scope and every status it can return.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { authenticate, requireScope } from "../auth/middleware";
import { limitFailedAuthentications, rateLimit } from "../rate-limit/middleware";

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

const integerHeader = (description: string, example: number) => ({
  description,
  schema: { type: "integer" as const, minimum: 1, example },
});
const stringHeader = (description: string, example: string) => ({
  description,
  schema: { type: "string" as const, example },
});

/**
 * The rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-10, carried by
 * every response of a public route (see src/rate-limit/middleware.ts).
 */
export const RATE_LIMIT_HEADERS = {
  "RateLimit-Policy": stringHeader(
    "The credential's quota `q` requests per window `w` seconds " +
      '(`"auth-failures"` on a 401: failed authentications per client address).',
    '"default";q=600;w=60',
  ),
  RateLimit: stringHeader(
    "Requests remaining `r`, and seconds `t` until the window admits more. " +
      "Absent when the limiter could not be reached (the request is then served).",
    '"default";r=599;t=42',
  ),
} as const;

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
  429: {
    ...json(
      ErrorSchema,
      "Rate limit exceeded: `Rate limit exceeded`. Each credential has its own limit (the " +
        "key's, or the default); failed authentications are also limited per client address.",
    ),
    headers: {
      "Retry-After": integerHeader("Whole seconds to wait before retrying; at least 1.", 12),
      ...RATE_LIMIT_HEADERS,
    },
  },
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
type Responses = RouteConfig["responses"];

/** Adds the rate-limit header fields to every response that declares no headers of its own. */
function withRateLimitHeaders<T extends Responses>(responses: T): T {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    out[status] =
      "$ref" in response || response.headers !== undefined
        ? response
        : { ...response, headers: RATE_LIMIT_HEADERS };
  }
  return out as T;
}

/**
 * Defines a public route: authenticated (API key or Bearer token), rate-limited,
 * needing `scope`.
 *
 * Middleware order: failed authentications per client address, authentication,
 * the credential's rate limit, the scope (so a 403 counts against the limit).
 * The scope is published in the operation's description and as the extension
 * `x-required-scope`; the standard 401/403/422/429/500 responses are added, and
 * every response documents the `RateLimit` and `RateLimit-Policy` fields.
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
    middleware: [
      limitFailedAuthentications(),
      authenticate(),
      rateLimit(),
      requireScope(scope),
    ] as const,
    responses: withRateLimitHeaders({ ...STANDARD_ERROR_RESPONSES, ...route.responses }),
  });
}

/** JSON response description shorthand for route definitions. */
export const jsonResponse = json;
