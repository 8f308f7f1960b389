/**
 * Operator authentication: `Authorization: Bearer <OPERATOR_TOKEN>`, checked by Hono's
 * `bearerAuth` (constant-time comparison of SHA-256 digests, then of the strings, so that
 * neither the token nor its length leaks). Unset secret = every operator route answers 503.
 */
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import type { AppEnv } from "../app-env";
import { ApiError } from "../http/errors";

/**
 * The one answer to a missing, malformed or wrong token. bearerAuth answers a malformed
 * header with a 400 and plain-text bodies of its own; throwing our error from its message
 * hook keeps the documented `401 {"detail": "Not authenticated"}` for all three cases
 * and sends it through the app's one error path (request id, JSON body).
 */
function refuse(): never {
  throw new ApiError(401, "Not authenticated", { "WWW-Authenticate": 'Bearer realm="operator"' });
}

const REFUSED = { message: refuse };

/**
 * Middleware: only the operator token opens an operator route.
 *
 * @throws ApiError 503 when `OPERATOR_TOKEN` is not set; 401 for a missing or wrong token
 *   (API keys and access tokens are never accepted here).
 */
export function operatorAuth(): MiddlewareHandler<AppEnv> {
  return async function operatorAuthMiddleware(c, next) {
    const secret = c.env.OPERATOR_TOKEN;
    if (!secret) throw new ApiError(503, "Operator API is not configured");
    // Built per request: the token is a binding of the request's env, not known at import.
    const check = bearerAuth<AppEnv>({
      token: secret,
      realm: "operator",
      noAuthenticationHeader: REFUSED,
      invalidAuthenticationHeader: REFUSED,
      invalidToken: REFUSED,
    });
    return check(c, next);
  };
}
