/**
 * OpenAPI utilities shared by every API of the Worker: the router factory, the error
 * schemas, the standard error responses and their examples. The security chain of the
 * public routes is assembled elsewhere (src/app-chain/public-route.ts); this module
 * imports no middleware.
 */
import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { PUBLIC_MAX_BODY_BYTES, tooLargeDetail } from "./json-body";
import { validationHook } from "./validation";

/**
 * A router of the app's routes: an `OpenAPIHono` typed with the app's environment, whose
 * request validation failures become the API's 422 body (src/http/validation.ts).
 *
 * @returns a new, empty router; chain `.openapi(route, handler)` on it.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

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
export const stringHeader = (description: string, example: string) => ({
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
      '(`"auth-failures"` on a 401: failed authentications per client address). Absent on a 413 ' +
      "refused by its declared `Content-Length`, before the credential is read.",
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
 * The 503 of a route behind the realtime read barrier (src/durable/realtime-barrier.ts):
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

export const NOT_FOUND_RESPONSE = {
  404: json(ErrorSchema, "Unknown id, or an id of another company.", detail("Not Found")),
} as const;

/** JSON response description shorthand for route definitions. */
export const jsonResponse = json;
