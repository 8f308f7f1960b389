/**
 * The Hono environment of the app, typed once: bindings and per-request variables (the
 * caller's `Principal` among them). Middleware set the variables; handlers only read them.
 * The bottom of the shared kernel: it imports only db/ and env.ts (docs/architecture.md,
 * "The layers").
 */

import type { Context } from "hono";
import type { Database } from "./db/client";
import type { NamedScope } from "./db/company-scope";
import type { RequestSession } from "./db/session";
import type { Env } from "./env";

/**
 * Who is calling a public route: one company and the scopes of one credential (set by
 * `authenticate`, src/auth/middleware.ts).
 */
export interface Principal {
  companyId: number;
  companyName: string;
  /** IANA time zone of the company. */
  timezone: string;
  /** Stable id of the credential, unique across kinds: `key:<id>` or `token:<company>:<sub>`. */
  credentialId: string;
  kind: "api_key" | "access_token";
  scopes: ReadonlySet<string>;
  /** Requests per period for this credential; null = the default from settings. */
  rateLimit: { requests: number; periodSeconds: number } | null;
  /**
   * When the credential stops being accepted (ms since the epoch): an access token's `exp`
   * plus the verification leeway. Absent for API keys (they last until revoked). An event
   * stream opened with the credential closes then.
   */
  expiresAt?: number;
}

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
