/**
 * Authentication and scope checks of public routes.
 *
 * `authenticate` resolves the credential into a `Principal` through a list of
 * resolvers, one per header; adding a credential kind (Bearer access tokens)
 * means adding a resolver, not touching routes.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { missingScope, notAuthenticated } from "../http/errors";
import { principalFromApiKey } from "./api-keys";
import type { Principal } from "./principal";

/** Resolves one credential form; returns null when the credential is not valid. */
export interface CredentialResolver {
  /** Header carrying the credential (lowercase). */
  header: string;
  /** Extracts the credential from the header value; null = header not of this form. */
  extract(value: string): string | null;
  resolve(c: Context<AppEnv>, credential: string): Promise<Principal | null>;
}

const apiKeyResolver: CredentialResolver = {
  header: "x-api-key",
  extract: (value) => value.trim() || null,
  resolve: (c, key) => principalFromApiKey(c.var.db, key),
};

const bearerResolver: CredentialResolver = {
  header: "authorization",
  extract: (value) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(value);
    return match?.[1] ?? null;
  },
  // Access tokens from an identity provider slot in here; until they are
  // configured no Bearer token is valid.
  resolve: async () => null,
};

export const DEFAULT_RESOLVERS: readonly CredentialResolver[] = [apiKeyResolver, bearerResolver];

/**
 * Middleware: authenticates the caller of a public route.
 *
 * Exactly one credential must be present: none, an unknown one, or both an API
 * key and a Bearer token at once give 401 `{"detail": "Not authenticated"}` with
 * a `WWW-Authenticate` header.
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
    c.set("principal", principal);
    await next();
  };
}

/**
 * Middleware: requires one scope of the authenticated caller.
 *
 * @param scope `section.action`, for example `signals.read`.
 * @throws ApiError 403 `Not enough permissions. Missing scope: <scope>`.
 */
export function requireScope(scope: string): MiddlewareHandler<AppEnv> {
  return async function requireScopeMiddleware(c, next) {
    if (!c.var.principal.scopes.has(scope)) throw missingScope(scope);
    await next();
  };
}
