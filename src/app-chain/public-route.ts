/**
 * The security chain of every public route, and `publicRoute`, which makes a
 * `createRoute` for a public endpoint with that chain, its one scope and every status it
 * can return. Kept apart from the OpenAPI utilities (src/http/openapi.ts) because it
 * wires authentication (src/auth/), the rate limiter (src/rate-limit/), body reading and
 * idempotency (src/http/) together: the app's composition, not a shared utility.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { authenticate, requireScope, requireScopeOfBody } from "../auth/middleware";
import { BOOKMARK_HEADER, BOOKMARK_PATTERN, MAX_BOOKMARK_LENGTH } from "../db/session";
import {
  IDEMPOTENCY_HEADER,
  IDEMPOTENCY_TTL_MS,
  idempotency,
  KEY_PATTERN_SOURCE,
  MAX_KEY_LENGTH,
  REPLAYED_HEADER,
} from "../http/idempotency";
import { jsonBody, PUBLIC_MAX_BODY_BYTES, sizedBody } from "../http/json-body";
import {
  BODY_ERROR_RESPONSES,
  ErrorSchema,
  jsonResponse as json,
  RATE_LIMIT_HEADERS,
  STANDARD_ERROR_RESPONSES,
  stringHeader,
  ValidationErrorSchema,
} from "../http/openapi";
import { registerRequestSchemas } from "../http/validation";
import { limitFailedAuthentications, rateLimit } from "../rate-limit/middleware";
import { HOUR_MS } from "../time/units";

/** An error body `{detail}` as a response example. */
const detail = (text: string) => ({ detail: text });

/** True for the methods whose requests carry a body. */
function takesBody(method: string): boolean {
  return ["post", "put", "patch"].includes(method.toLowerCase());
}

const SECURITY: Record<string, string[]>[] = [{ ApiKeyAuth: [] }, { BearerAuth: [] }];

/**
 * A public route's definition; `operationId` (lowerCamelCase verb + resource, for example
 * `createSkus`, `getSku`) is required: client generators name their methods after it.
 */
type PublicRouteConfig = Omit<RouteConfig, "security" | "middleware" | "operationId"> & {
  operationId: string;
};
type Responses = RouteConfig["responses"];

/**
 * The `Idempotency-Key` request header, documented on every route that creates or changes.
 * Its example is in the description, not in `example`: Swagger UI fills a parameter's
 * `example` into "Try it out", and one key sent with every operation is the 422 of a key
 * reused with another request from the second operation on.
 */
const IDEMPOTENCY_PARAMETER = {
  name: IDEMPOTENCY_HEADER,
  in: "header" as const,
  required: false,
  schema: {
    type: "string" as const,
    minLength: 1,
    maxLength: MAX_KEY_LENGTH,
    pattern: KEY_PATTERN_SOURCE,
  },
  description:
    "Makes retries safe (Stripe's convention): the first response for a key is stored for " +
    `${IDEMPOTENCY_TTL_MS / HOUR_MS} hours per credential; a retry with the same key and the ` +
    `same request (method, path, query, JSON body) gets it again with \`${REPLAYED_HEADER}: true\` ` +
    "and changes nothing; the same key with another request is a 422; a retry while the first " +
    "is still running is a 409. 5XX, 409 and 429 answers are not stored (a retry runs again). " +
    `1 to ${MAX_KEY_LENGTH} printable ASCII characters, not starting or ending with a space ` +
    "(the header's `pattern`); a UUID per logical operation is ideal " +
    "(for example `3f0c1a9e-6b1d-4f3e-9a57-0d2f4c8b7e21`).",
};

/**
 * The `x-d1-bookmark` request header, on every public route: read-your-writes across the
 * database's replicas (docs/api-guide.md, "Consistency"). A component of the document
 * (registered by src/app.ts), referenced by every operation.
 */
export const BOOKMARK_PARAMETER_COMPONENT = {
  name: BOOKMARK_HEADER,
  in: "header" as const,
  required: false,
  schema: { type: "string" as const, maxLength: MAX_BOOKMARK_LENGTH, pattern: BOOKMARK_PATTERN },
  description:
    `The \`${BOOKMARK_HEADER}\` of an earlier answer, sent back unchanged: this request then ` +
    "sees at least what that answer saw (its writes included), even where reads are served " +
    "by a nearby replica that lags a few seconds. Without it, reads, searches and reports may " +
    "lag a few seconds behind other clients' writes. A value that is not such a bookmark is a " +
    `422 at \`["header", "${BOOKMARK_HEADER}"]\`; an empty value is no bookmark.`,
};

/**
 * The `x-d1-bookmark` response header, on every answer that used the database: a component
 * of the document (registered by src/app.ts), referenced by every response.
 */
export const BOOKMARK_HEADER_COMPONENT = stringHeader(
  "The database position this answer saw (opaque). Send it back as `x-d1-bookmark` to read " +
    "at least this fresh; absent when the answer used no database.",
  "SHARD_0:00000085-0000024c-00004c6d-8e61117bf38d7adb71b934ebbf891683",
);

/** The name of both components (`#/components/parameters/...`, `#/components/headers/...`). */
export const BOOKMARK_COMPONENT = "D1Bookmark";

const BOOKMARK_PARAMETER = { $ref: `#/components/parameters/${BOOKMARK_COMPONENT}` };

const BOOKMARK_RESPONSE_HEADER = {
  [BOOKMARK_HEADER]: { $ref: `#/components/headers/${BOOKMARK_COMPONENT}` },
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
 * A scope chosen by the request: the route needs the scope that a body field's value names
 * (an export needs its dataset's, src/exports/routes.ts). Published as the extension
 * `x-required-scope-by` (`{field, scopes}`) in place of `x-required-scope`.
 */
export interface ScopeByField {
  /** The body field whose value picks the scope (`dataset`). */
  field: string;
  /** The scope each value needs. */
  scopes: Readonly<Record<string, string>>;
  /**
   * Whether the body carries the field (checked in the chain, right after the body is read,
   * so a missing scope is a 403 before the body's 422); false when the handler finds the
   * value (a stored export's dataset) and checks it with `requireScopeOf`.
   */
  inBody: boolean;
  /** Whether the route creates or changes something (idempotency, as a non-`read` scope). */
  changes: boolean;
}

/** How a public route may differ from the standard chain. */
interface PublicRouteOptions {
  /**
   * The authentication step, in place of `authenticate()` (same place in the chain): the
   * event streams also take a one-use `?ticket=` (src/realtime/streams/routes.ts).
   */
  authenticate?: MiddlewareHandler<AppEnv>;
}

/** How the chain reads a request's body. */
type BodyStep =
  /** Read, size-limited and parsed as JSON (`jsonBody`): the REST routes that take a body. */
  | "json"
  /** Size-limited only, left for the handler to read (`sizedBody`): `/mcp`'s JSON-RPC. */
  | "sized"
  /** No body. */
  | "none";

/** What a public door's chain is made of (`publicChain`). */
interface PublicChainOptions {
  /** The route's scope, or null when the handler checks scopes itself (`/mcp`'s tools). */
  scope: string | ScopeByField | null;
  /** How the body is read. */
  body: BodyStep;
  /** The authentication step, in place of `authenticate()` (see `PublicRouteOptions`). */
  authenticate?: MiddlewareHandler<AppEnv>;
}

/**
 * The security chain of every public door, `/v1` and `/mcp` alike, in this order: failed
 * authentications limited per client address, the credential (401 before anything is
 * read), the credential's rate limit, the scope (so a 403 counts against the limit), the
 * body (read only now, so an anonymous caller gets a 401 whatever it sent), a body field's
 * scope, and last, on calls that create or change something, `Idempotency-Key` handling
 * (a 401, 403 or 429 takes no key).
 *
 * @returns the middleware, in order.
 */
export function publicChain(options: PublicChainOptions): MiddlewareHandler<AppEnv>[] {
  const { scope, body } = options;
  const steps = scope === null ? { beforeBody: [], afterBody: [] } : scopeSteps(scope);
  const bodySteps: Record<BodyStep, MiddlewareHandler[]> = {
    json: [jsonBody({ maxBytes: PUBLIC_MAX_BODY_BYTES })],
    sized: [sizedBody(PUBLIC_MAX_BODY_BYTES)],
    none: [],
  };
  return [
    limitFailedAuthentications(),
    options.authenticate ?? authenticate(),
    rateLimit(),
    ...steps.beforeBody,
    ...bodySteps[body],
    ...steps.afterBody,
    ...(scope !== null && changesSomething(scope) ? [idempotency()] : []),
  ];
}

/**
 * Adds the rate-limit header fields, `x-d1-bookmark` (and `extra`) to every response that
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
        : {
            ...response,
            headers: { ...RATE_LIMIT_HEADERS, ...BOOKMARK_RESPONSE_HEADER, ...extra },
          };
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
function changesSomething(scope: string | ScopeByField): boolean {
  return typeof scope === "string" ? !scope.endsWith(".read") : scope.changes;
}

/** The description's scope line. */
function scopeLine(scope: string | ScopeByField): string {
  if (typeof scope === "string") return `**Required scope:** \`${scope}\``;
  const pairs = Object.entries(scope.scopes).map(([value, s]) => `\`${value}\`: \`${s}\``);
  return `**Required scope:** the one its \`${scope.field}\` needs (${pairs.join(", ")}).`;
}

/** The chain's scope step: a fixed scope, the body field's, or none (the handler checks). */
function scopeSteps(scope: string | ScopeByField): {
  beforeBody: MiddlewareHandler<AppEnv>[];
  afterBody: MiddlewareHandler<AppEnv>[];
} {
  if (typeof scope === "string") return { beforeBody: [requireScope(scope)], afterBody: [] };
  if (!scope.inBody) return { beforeBody: [], afterBody: [] };
  return { beforeBody: [], afterBody: [requireScopeOfBody(scope.field, scope.scopes)] };
}

/**
 * Defines a public route: authenticated (API key or Bearer token), rate-limited,
 * needing `scope`.
 *
 * Middleware: `publicChain` (the body read as JSON on POST, PUT and PATCH; on routes that
 * create or change something, every scope but `*.read`, `Idempotency-Key` handling,
 * src/http/idempotency.ts, documented as a header parameter, a 409, a 422 case and the
 * `Idempotent-Replayed` response header).
 * The scope is published in the operation's description and as the extension
 * `x-required-scope`; the standard 401/403/422/429/500 responses are added (and
 * 413/415 on POST, PUT and PATCH, from src/http/json-body.ts), and every response documents the `RateLimit` and `RateLimit-Policy` fields.
 *
 * @param scope `section.action`, or the scope a request's field picks (`ScopeByField`).
 * @param route the route without security or middleware.
 * @param options `authenticate`: another authentication step in the same place.
 */
export function publicRoute<R extends PublicRouteConfig>(
  scope: string | ScopeByField,
  route: R,
  options: PublicRouteOptions = {},
) {
  registerRequestSchemas(route.method, route.path, route.request);
  const changes = changesSomething(scope);
  const bodyErrors = takesBody(route.method) ? BODY_ERROR_RESPONSES : {};
  const description = [
    route.description,
    changes
      ? "**Safe retries:** send an `Idempotency-Key` header; a retry with the same key gets the " +
        `first response again (\`${REPLAYED_HEADER}: true\`) and changes nothing.`
      : undefined,
    scopeLine(scope),
  ]
    .filter(Boolean)
    .join("\n\n");
  return createRoute({
    ...route,
    description,
    security: SECURITY,
    ...(typeof scope === "string"
      ? { "x-required-scope": scope }
      : { "x-required-scope-by": { field: scope.field, scopes: scope.scopes } }),
    parameters: changes ? [BOOKMARK_PARAMETER, IDEMPOTENCY_PARAMETER] : [BOOKMARK_PARAMETER],
    middleware: publicChain({
      scope,
      body: takesBody(route.method) ? "json" : "none",
      authenticate: options.authenticate,
    }),
    responses: changes
      ? withStandardHeaders(
          { ...CHANGING_ROUTE_RESPONSES, ...bodyErrors, ...mergeConflict(route.responses) },
          REPLAYED_RESPONSE_HEADER,
        )
      : withStandardHeaders({ ...STANDARD_ERROR_RESPONSES, ...bodyErrors, ...route.responses }),
  });
}
