/**
 * The Hono environment of the app, typed once: bindings and per-request variables.
 * Middleware set the variables; handlers only read them.
 */

import type { Context } from "hono";
import type { Principal } from "./auth/principal";
import type { Database } from "./db/client";
import type { NamedScope } from "./db/company-scope";
import type { RequestSession } from "./db/session";
import type { Env } from "./env";

export interface AppEnv {
  Bindings: Env;
  Variables: {
    /** Drizzle client for this request, over its D1 session (`session`). */
    db: Database;
    /** The request's D1 session (src/db/session.ts): its bookmark goes on the answer. */
    session: RequestSession;
    /** The caller of a public route (set by `authenticate`). */
    principal: Principal;
    /** `X-Request-Id` of this request (set by Hono's `requestId`). */
    requestId: string;
  };
}

/**
 * The company scope of a public request: its database and the company of its credential
 * (src/db/company-scope.ts) with its name and time zone, all read once by `authenticate`,
 * derived from the `db` and `principal` variables.
 *
 * @param c a context past `authenticate` (the `principal` variable is set).
 */
export function scopeOf(c: Context<AppEnv>): NamedScope {
  const { companyId, companyName, timezone } = c.var.principal;
  return { db: c.var.db, companyId, companyName, timezone };
}
