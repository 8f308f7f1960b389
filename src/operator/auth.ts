/**
 * Operator authentication: `Authorization: Bearer <OPERATOR_TOKEN>`, compared in
 * constant time. Unset secret = every operator route answers 503.
 */
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { ApiError } from "../http/errors";

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
}

/**
 * Compares two strings in constant time (their SHA-256 digests, so that lengths do not leak).
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([digest(a), digest(b)]);
  return crypto.subtle.timingSafeEqual(da, db);
}

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
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header("authorization") ?? "");
    const token = match?.[1];
    if (!token || !(await constantTimeEqual(token, secret))) {
      throw new ApiError(401, "Not authenticated", {
        "WWW-Authenticate": 'Bearer realm="operator"',
      });
    }
    await next();
  };
}
