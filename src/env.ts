/**
 * Bindings and settings of the Worker.
 *
 * Settings are plain strings in `wrangler.toml` `[vars]` (or secrets); `readSettings`
 * validates and types them once per request.
 */
import { z } from "zod";
import type { RateLimiter } from "./rate-limit/rate-limiter";
import type { RealtimeMachine } from "./realtime/realtime-machine";

export interface Env {
  DB: D1Database;
  REALTIME_MACHINE: DurableObjectNamespace<RealtimeMachine>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  WEBHOOK_QUEUE: Queue<unknown>;
  /** `development` (local), `sandbox` or `production`. */
  ENVIRONMENT: string;
  /** Bearer token of the operator API (a secret). Unset = the operator API answers 503. */
  OPERATOR_TOKEN?: string;
  /** Requests per period for keys without a limit of their own. */
  DEFAULT_RATE_LIMIT?: string;
  DEFAULT_RATE_LIMIT_PERIOD_SECONDS?: string;
}

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      REALTIME_MACHINE: DurableObjectNamespace<RealtimeMachine>;
      RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
      WEBHOOK_QUEUE: Queue<unknown>;
      ENVIRONMENT: string;
      OPERATOR_TOKEN?: string;
      DEFAULT_RATE_LIMIT?: string;
      DEFAULT_RATE_LIMIT_PERIOD_SECONDS?: string;
    }
  }
}

const SettingsSchema = z.object({
  environment: z.enum(["development", "test", "sandbox", "production"]),
  defaultRateLimit: z.coerce.number().int().positive(),
  defaultRateLimitPeriodSeconds: z.coerce.number().int().positive(),
});

export type Settings = z.infer<typeof SettingsSchema>;

/**
 * Reads and validates the settings from the Worker's bindings.
 *
 * @param env the Worker bindings.
 * @returns typed settings.
 * @throws ZodError when a setting has an invalid value (a deployment error: it surfaces as a 500).
 */
export function readSettings(env: Env): Settings {
  return SettingsSchema.parse({
    environment: env.ENVIRONMENT,
    defaultRateLimit: env.DEFAULT_RATE_LIMIT ?? "600",
    defaultRateLimitPeriodSeconds: env.DEFAULT_RATE_LIMIT_PERIOD_SECONDS ?? "60",
  });
}
