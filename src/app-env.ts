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
    /** The directory's Drizzle client (`DB`: credentials, companies, their shards). */
    directory: Database;
    /**
     * The Drizzle client of the caller's company shard (set by `authenticate`, with the
     * principal; src/db/shards.ts), over the request's D1 session (`session`). Public routes
     * read it through `scopeOf`; operator routes
     * never do (they resolve the company of their path: src/operator/lookups.ts).
     */
    db: Database;
    /**
     * The request's D1 session on its company's shard (src/db/session.ts, set by
     * `authenticate` with `db`): its bookmark goes on the answer. Unset on operator routes.
     */
    session?: RequestSession;
    /** The caller of a public route (set by `authenticate`). */
    principal: Principal;
    /** `X-Request-Id` of this request (set by Hono's `requestId`). */
    requestId: string;
  };
}

/**
 * The company scope of a public request: the company of its credential, its shard (picked
 * from the directory by `authenticate`, src/db/shards.ts) and its name and time zone, all
 * read once by `authenticate`, derived from the `db` and `principal` variables.
 *
 * @param c a context past `authenticate` (the `principal` variable is set).
 */
export function scopeOf(c: Context<AppEnv>): NamedScope {
  const { companyId, companyName, timezone } = c.var.principal;
  return { db: c.var.db, companyId, companyName, timezone };
}
