/**
 * Authentication and scope checks of public routes.
 *
 * `authenticate` resolves the credential into a `Principal` through a list of
 * resolvers, one per header (`x-api-key`, and `Authorization: Bearer` for access
 * tokens); adding a credential kind means adding a resolver, not touching routes.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, Principal } from "../app-env";
import { companyShard } from "../db/shards";
import { readSettings } from "../env";
import { requestSession } from "../http/d1-session";
import { missingScope, notAuthenticated } from "../http/errors";
import { SECOND_MS } from "../time/units";
import { principalFromAccessToken } from "./access-tokens";
import { principalFromApiKey } from "./api-keys";

/** Resolves one credential form; returns null when the credential is not valid. */
interface CredentialResolver {
  /** Header carrying the credential (lowercase). */
  header: string;
  /** Extracts the credential from the header value; null = header not of this form. */
  extract(value: string): string | null;
  resolve(c: Context<AppEnv>, credential: string): Promise<Principal | null>;
}

/** Most API keys one isolate keeps resolved. */
const MAX_CACHED_KEYS = 10_000;

/**
 * API keys this isolate resolved lately, by raw key, for `CREDENTIAL_CACHE_SECONDS`
 * (default 5 s) counted from the instant the answer reflects the directory's primary as of
 * (it may come from a replica: src/db/directory-reads.ts): a D1 round trip saved on almost
 * every request. Only active keys are kept (an unknown key is looked up every time, at the
 * primary when no replica knows it, so a key works as soon as it is issued). A revocation
 * takes effect at once in the isolate that handled it (`forgetCredential`) and within the
 * cache time in every other isolate.
 */
const apiKeyCache = new Map<string, { principal: Principal; expiresAt: number }>();

/**
 * Drops a credential from this isolate's cache, so that its revocation takes effect at once.
 *
 * @param credentialId `key:<id>` (see `Principal.credentialId`).
 */
export function forgetCredential(credentialId: string): void {
  for (const [key, entry] of apiKeyCache) {
    if (entry.principal.credentialId === credentialId) apiKeyCache.delete(key);
  }
}

async function resolveApiKey(c: Context<AppEnv>, key: string): Promise<Principal | null> {
  const cacheSeconds = readSettings(c.env).credentialCacheSeconds;
  const now = Date.now();
  const cached = apiKeyCache.get(key);
  if (cached && cached.expiresAt > now) return cached.principal;
  const { principal, asOf } = await principalFromApiKey(c.env.DB, key);
  const expiresAt = asOf + cacheSeconds * SECOND_MS;
  if (principal && expiresAt > Date.now()) {
    if (apiKeyCache.size >= MAX_CACHED_KEYS) apiKeyCache.clear();
    apiKeyCache.set(key, { principal, expiresAt });
  } else {
    apiKeyCache.delete(key);
  }
  return principal;
}

const apiKeyResolver: CredentialResolver = {
  header: "x-api-key",
  extract: (value) => value.trim() || null,
  resolve: resolveApiKey,
};

const bearerResolver: CredentialResolver = {
  header: "authorization",
  extract: (value) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
    return match?.[1] ?? null;
  },
  resolve: (c, token) => {
    const settings = readSettings(c.env);
    return principalFromAccessToken(c.env.DB, settings.jwt, token, settings.credentialCacheSeconds);
  },
};

export const DEFAULT_RESOLVERS: readonly CredentialResolver[] = [apiKeyResolver, bearerResolver];

/**
 * Middleware: authenticates the caller of a public route.
 *
 * Exactly one credential must be present: none, an unknown one, or both an API
 * key and a Bearer token at once give 401 `{"detail": "Not authenticated"}` with
 * a `WWW-Authenticate` header. Sets the `principal` and the company's shard (`db`).
 *
 * @param resolvers the credential forms accepted, in order.
 */
export function authenticate(
  resolvers: readonly CredentialResolver[] = DEFAULT_RESOLVERS,
): MiddlewareHandler<AppEnv> {
  return async function authenticateMiddleware(c, next) {
    const presented: { resolver: CredentialResolver; credential: string }[] = [];
    for (const resolver of resolvers) {
      const value = c.req.header(resolver.header);
      if (value === undefined) continue;
      const credential = resolver.extract(value);
      if (credential === null) throw notAuthenticated();
      presented.push({ resolver, credential });
    }
    const only = presented.length === 1 ? presented[0] : undefined;
    if (!only) throw notAuthenticated();
    const principal = await only.resolver.resolve(c, only.credential);
    if (!principal) throw notAuthenticated();
    await admit(c, principal);
    await next();
  };
}

/**
 * Makes `principal` the caller of the request: sets the `principal` variable and the
 * request's D1 session (`session`) on its company's shard (from the directory:
 * src/db/shards.ts). Every way of authenticating a public request ends here, so that
 * `scopeOf(c)` always has both.
 */
export async function admit(c: Context<AppEnv>, principal: Principal): Promise<void> {
  c.set("principal", principal);
  const shard = await companyShard(c.env, principal.companyId);
  // The request's D1 session on the shard (where it starts: src/db/session.ts); its Drizzle
  // client is made when a query first needs it (`scopeOf`).
  c.set("session", requestSession(c, shard.binding, shard.name));
}

/**
 * Middleware: requires one scope of the authenticated caller.
 *
 * @param scope `section.action`, for example `signals.read`.
 * @throws ApiError 403 `Not enough permissions. Missing scope: <scope>`.
 */
export function requireScope(scope: string): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    if (!c.get("principal").scopes.has(scope)) throw missingScope(scope);
    await next();
  };
}

/**
 * Requires, of the authenticated caller, the scope a request needs when it depends on the
 * request (an export's dataset).
 *
 * @throws ApiError 403 `Not enough permissions. Missing scope: <scope>`.
 */
export function requireScopeOf(c: Context<AppEnv>, scope: string): void {
  if (!c.get("principal").scopes.has(scope)) throw missingScope(scope);
}

/**
 * Middleware (after the body is read): requires the scope that a body field's value names.
 * A body without the field, or with a value no scope is named for, passes: its validation
 * answers the 422.
 *
 * @param field the top-level body field (`dataset`).
 * @param scopes the scope each value needs.
 */
export function requireScopeOfBody(
  field: string,
  scopes: Readonly<Record<string, string>>,
): MiddlewareHandler<AppEnv> {
  return async function requireScopeOfBodyMiddleware(c, next) {
    const body: unknown = await c.req.json().catch(() => undefined);
    const value =
      body !== null && typeof body === "object" ? (body as Record<string, unknown>)[field] : null;
    const scope = typeof value === "string" && Object.hasOwn(scopes, value) ? scopes[value] : null;
    if (scope) requireScopeOf(c, scope);
    await next();
  };
}
