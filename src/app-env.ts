/**
 * The Hono environment of the app, typed once: bindings and per-request variables.
 * Middleware set the variables; handlers only read them.
 */
import type { Principal } from "./auth/principal";
import type { Database } from "./db/client";
import type { Env } from "./env";

export interface AppEnv {
  Bindings: Env;
  Variables: {
    /** Drizzle client for this request. */
    db: Database;
    /** The caller of a public route (set by `authenticate`). */
    principal: Principal;
    /** `X-Request-Id` of this request (set by Hono's `requestId`). */
    requestId: string;
  };
}
