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
     * The request's D1 session on its company's shard (src/db/session.ts, set by
     * `authenticate` with the principal: src/db/shards.ts): its bookmark goes on the answer,
     * and its Drizzle client (`session.db`, made on first use) is what public routes query,
     * through `scopeOf`. Unset on operator routes (they resolve the company of their path:
     * src/operator/lookups.ts).
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
 * read once by `authenticate`, derived from the `session` and `principal` variables. Its
 * `db` is the session's Drizzle client, made when first read.
 *
 * @param c a context past `authenticate` (the `principal` and `session` variables are set).
 * @throws Error when called before `authenticate` (a programming error).
 */
export function scopeOf(c: Context<AppEnv>): NamedScope {
  const { companyId, companyName, timezone } = c.get("principal");
  const session = c.get("session");
  if (!session) throw new Error("scopeOf: no session (the route is not past authenticate)");
  return {
    get db() {
      return session.db;
    },
    companyId,
    companyName,
    timezone,
  };
}
