/**
 * Shared OpenAPI pieces: error schemas, the standard error responses, and
 * `publicRoute`, which makes a `createRoute` for a public endpoint with its
 * security, its one scope and every status it can return.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { authenticate, requireScope } from "../auth/middleware";
import { limitFailedAuthentications, rateLimit } from "../rate-limit/middleware";
import {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_TTL_MS,
  idempotency,
  MAX_KEY_LENGTH,
  REPLAYED_HEADER,
} from "./idempotency";
import { jsonBody, PUBLIC_MAX_BODY_BYTES, tooLargeDetail } from "./json-body";
import { registerRequestSchemas } from "./validation";

export const ErrorSchema = z
  .object({ detail: z.string() })
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

const json = <T extends z.ZodType>(schema: T, description: string, example?: unknown) => ({
  description,
  content: { "application/json": example === undefined ? { schema } : { schema, example } },
});

/** An error body `{detail}` as a response example. */
const detail = (text: string) => ({ detail: text });

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
    detail("Not authenticated"),
  ),
  403: json(
    ErrorSchema,
    "The credential lacks the route's scope: `Not enough permissions. Missing scope: <scope>`.",
    detail("Not enough permissions. Missing scope: skus.read"),
  ),
  422: json(ValidationErrorSchema, "Invalid path, query or body.", {
    detail: [{ loc: ["query", "agg_unit"], msg: "Invalid option", type: "enum" }],
  }),
  429: {
    ...json(
      ErrorSchema,
      "Rate limit exceeded: `Rate limit exceeded`. Each credential has its own limit (the " +
        "key's, or the default); failed authentications are also limited per client address.",
      detail("Rate limit exceeded"),
    ),
    headers: {
      "Retry-After": integerHeader("Whole seconds to wait before retrying; at least 1.", 12),
      ...RATE_LIMIT_HEADERS,
    },
  },
  500: json(
    ErrorSchema,
    "Unexpected error; the body never carries internal details. Quote `X-Request-Id`.",
    detail("Internal Server Error"),
  ),
} as const;

/**
 * The 503 of a route behind the realtime read barrier (src/realtime/barrier.ts):
 * a machine's realtime writes did not reach the database within the barrier's
 * budget, and the read is refused rather than shown without them.
 */
export const BARRIER_RESPONSE = {
  503: {
    ...json(
      ErrorSchema,
      "Realtime writes of a machine the read touches are still being written (the read waits " +
        "at most 5 s for them): `Realtime production of some machines is still being written; " +
        "retry in a second`. Never a read that misses an acknowledged realtime write.",
      { detail: "Realtime production of some machines is still being written; retry in a second" },
    ),
    headers: { "Retry-After": integerHeader("Seconds to wait before retrying.", 1) },
  },
} as const;

/**
 * Responses of every route that takes a body (POST, PUT, PATCH), given by
 * src/http/json-body.ts: a declared size above the limit before authentication, the rest
 * after it.
 */
export const BODY_ERROR_RESPONSES = {
  413: json(
    ErrorSchema,
    `The body is larger than ${PUBLIC_MAX_BODY_BYTES.toLocaleString("en")} bytes (4 MiB): ` +
      `\`${tooLargeDetail(PUBLIC_MAX_BODY_BYTES)}\`.`,
    detail(tooLargeDetail(PUBLIC_MAX_BODY_BYTES)),
  ),
  415: json(
    ErrorSchema,
    "A body sent with a `Content-Type` other than `application/json` (or `application/*+json`): " +
      "`Content-Type must be application/json`.",
    detail("Content-Type must be application/json"),
  ),
} as const;

/** True for the methods whose requests carry a body. */
function takesBody(method: string): boolean {
  return ["post", "put", "patch"].includes(method.toLowerCase());
}

export const NOT_FOUND_RESPONSE = {
  404: json(ErrorSchema, "Unknown id, or an id of another company.", detail("Not Found")),
} as const;

export const SECURITY: Record<string, string[]>[] = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

/**
 * A public route's definition; `operationId` (lowerCamelCase verb + resource, for example
 * `createSkus`, `getSku`) is required: client generators name their methods after it.
 */
type PublicRouteConfig = Omit<RouteConfig, "security" | "middleware" | "operationId"> & {
  operationId: string;
};
type Responses = RouteConfig["responses"];

/** The `Idempotency-Key` request header, documented on every route that creates or changes. */
const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: "header" as const,
  required: false,
  schema: { type: "string" as const, minLength: 1, maxLength: MAX_KEY_LENGTH },
  example: "3f0c1a9e-6b1d-4f3e-9a57-0d2f4c8b7e21",
  description:
    "Makes retries safe (Stripe's convention): the first response for a key is stored for " +
    `${IDEMPOTENCY_TTL_MS / 3_600_000} hours per credential; a retry with the same key and the ` +
    `same request (method, path, query, JSON body) gets it again with \`${REPLAYED_HEADER}: true\` ` +
    "and changes nothing; the same key with another request is a 422; a retry while the first " +
    "is still running is a 409. 5XX, 409 and 429 answers are not stored (a retry runs again). " +
    `1 to ${MAX_KEY_LENGTH} printable ASCII characters; a UUID per logical operation is ideal.`,
};

const REPLAYED_RESPONSE_HEADER = {
  [REPLAYED_HEADER]: stringHeader(
    "`true` on a response replayed for a repeated `Idempotency-Key` (absent otherwise).",
    "true",
  ),
};

const IDEMPOTENCY_CONFLICT =
  "A request with the same `Idempotency-Key` is still running (`Retry-After: 1`).";

/** The standard responses of a route that creates or changes, with the idempotency cases. */
const CHANGING_ROUTE_RESPONSES = {
  ...STANDARD_ERROR_RESPONSES,
  409: json(
    ErrorSchema,
    IDEMPOTENCY_CONFLICT,
    detail("A request with this Idempotency-Key is still being processed: retry later"),
  ),
  422: json(
    ValidationErrorSchema,
    "Invalid path, query or body; or an `Idempotency-Key` reused with another request " +
      '(`loc` `["header", "Idempotency-Key"]`, `type` `idempotency_key_reused`).',
    {
      detail: [
        { loc: ["body", 0, "sku"], msg: "Field required", type: "missing" },
        {
          loc: ["body", 1, "colour"],
          msg: "Extra inputs are not permitted",
          type: "extra_forbidden",
        },
      ],
    },
  ),
} as const;

/**
 * Adds the rate-limit header fields (and `extra`) to every response that
 * declares no headers of its own.
 */
function withStandardHeaders<T extends Responses>(
  responses: T,
  extra: Record<string, ReturnType<typeof stringHeader>> = {},
): T {
  const out: Responses = {};
  for (const [status, response] of Object.entries(responses)) {
    out[status] =
      "$ref" in response || response.headers !== undefined
        ? response
        : { ...response, headers: { ...RATE_LIMIT_HEADERS, ...extra } };
  }
  return out as T;
}

/** A route's own 409 (if any) keeps its text and gains the idempotency case. */
function mergeConflict(responses: Responses): Responses {
  const own = responses[409];
  if (!own || "$ref" in own) return responses;
  return {
    ...responses,
    409: { ...own, description: `${own.description} Or: ${IDEMPOTENCY_CONFLICT}` },
  };
}

/** True for the scopes of calls that create or change something (not `*.read`). */
export function changesSomething(scope: string): boolean {
  return !scope.endsWith(".read");
}

/**
 * Defines a public route: authenticated (API key or Bearer token), rate-limited,
 * needing `scope`.
 *
 * Middleware order: failed authentications per client address, authentication,
 * the credential's rate limit, the scope (so a 403 counts against the limit),
 * on POST, PUT and PATCH the body (read, size-limited and parsed only now, so an
 * anonymous caller gets a 401 whatever it sent), then, on routes that create or change something (every scope but `*.read`),
 * `Idempotency-Key` handling (src/http/idempotency.ts; documented as a header
 * parameter, a 409, a 422 case and the `Idempotent-Replayed` response header).
 * The scope is published in the operation's description and as the extension
 * `x-required-scope`; the standard 401/403/422/429/500 responses are added (and
 * 413/415 on POST, PUT and PATCH, from src/http/json-body.ts), and every response documents the `RateLimit` and `RateLimit-Policy` fields.
 *
 * @param scope `section.action`.
 * @param route the route without security or middleware.
 */
export function publicRoute<R extends PublicRouteConfig>(scope: string, route: R) {
  registerRequestSchemas(route.method, route.path, route.request);
  const changes = changesSomething(scope);
  const bodyErrors = takesBody(route.method) ? BODY_ERROR_RESPONSES : {};
  const description = [
    route.description,
    changes
      ? "**Safe retries:** send an `Idempotency-Key` header; a retry with the same key gets the " +
        `first response again (\`${REPLAYED_HEADER}: true\`) and changes nothing.`
      : undefined,
    `**Required scope:** \`${scope}\``,
  ]
    .filter(Boolean)
    .join("\n\n");
  return createRoute({
    ...route,
    description,
    security: SECURITY,
    "x-required-scope": scope,
    ...(changes ? { parameters: [IDEMPOTENCY_PARAMETER] } : {}),
    middleware: [
      limitFailedAuthentications(),
      authenticate(),
      rateLimit(),
      requireScope(scope),
      ...(takesBody(route.method) ? [jsonBody({ maxBytes: PUBLIC_MAX_BODY_BYTES })] : []),
      // Last: a 401, 403 or 429 takes no key; a passthrough when the header is absent.
      ...(changes ? [idempotency()] : []),
    ] as const,
    responses: changes
      ? withStandardHeaders(
          { ...CHANGING_ROUTE_RESPONSES, ...bodyErrors, ...mergeConflict(route.responses) },
          REPLAYED_RESPONSE_HEADER,
        )
      : withStandardHeaders({ ...STANDARD_ERROR_RESPONSES, ...bodyErrors, ...route.responses }),
  });
}

/** JSON response description shorthand for route definitions. */
export const jsonResponse = json;
