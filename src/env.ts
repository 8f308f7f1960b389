/**
 * Bindings and settings of the Worker.
 *
 * Settings are plain strings in `wrangler.toml` `[vars]` (or secrets); `readSettings`
 * validates and types them once per request.
 */
import { z } from "zod";
import type { MachineEvents } from "./events/machine-events";
import type { RateLimiter } from "./rate-limit/rate-limiter";
import type { RealtimeMachine } from "./realtime/realtime-machine";
import { DEFAULT_STALLED_MARGIN_SECONDS, type WebhookMessage } from "./webhooks/outbox";

/** The string settings, shared by the Worker's `Env` and the global `Cloudflare.Env`. */
interface SettingVars {
  /** `development` (local), `sandbox` or `production`. */
  ENVIRONMENT: string;
  /** Bearer token of the operator API (a secret). Unset = the operator API answers 503. */
  OPERATOR_TOKEN?: string;
  /** Requests per period for keys without a limit of their own, and for access tokens. */
  DEFAULT_RATE_LIMIT?: string;
  DEFAULT_RATE_LIMIT_PERIOD_SECONDS?: string;
  /** `true` (default) or `false`: switches the per-credential and failed-authentication limits. */
  RATE_LIMIT_ENABLED?: string;
  /** Failed authentications allowed per client address and period (default 30 per 60 s). */
  AUTH_FAILURE_LIMIT?: string;
  AUTH_FAILURE_PERIOD_SECONDS?: string;
  /** Seconds an isolate keeps a resolved API key (default 5; 0 = no cache). */
  CREDENTIAL_CACHE_SECONDS?: string;
  /** Expected `iss` of access tokens. Required when a JWKS is configured. */
  JWT_ISSUER?: string;
  /** Expected `aud` of access tokens; several separated by commas. Required with a JWKS. */
  JWT_AUDIENCE?: string;
  /** HTTPS URL of the identity provider's JWKS (fetched, cached, refreshed on an unknown `kid`). */
  JWT_JWKS_URL?: string;
  /** A JWKS given inline as JSON (local development and tests); excludes `JWT_JWKS_URL`. */
  JWT_JWKS?: string;
  /** Claim holding the company id (default `company_id`). */
  JWT_COMPANY_CLAIM?: string;
  /** Claim holding space-separated scopes (default `scope`). */
  JWT_SCOPE_CLAIM?: string;
  /** Claim holding scopes as an array of strings (default `permissions`). */
  JWT_PERMISSIONS_CLAIM?: string;
  /** DNS-over-HTTPS JSON endpoint that resolves webhook hosts (default Cloudflare's). */
  WEBHOOK_DOH_URL?: string;
  /**
   * Comma-separated exact origins (`http://127.0.0.1:9999`) exempt from the webhook
   * endpoint rules; applied only when `ENVIRONMENT` is `development` or `test`.
   */
  WEBHOOK_EXEMPT_ORIGINS?: string;
  /**
   * Seconds a sent delivery may stay quiet past its next scheduled handling before the
   * sweeper takes its Queue message for lost and sends it again (default 600).
   */
  WEBHOOK_STALLED_MARGIN_SECONDS?: string;
  /** Most open live-event connections (SSE or WebSocket) per credential (default 20). */
  EVENTS_MAX_CONNECTIONS?: string;
}

export interface Env extends SettingVars {
  DB: D1Database;
  REALTIME_MACHINE: DurableObjectNamespace<RealtimeMachine>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  MACHINE_EVENTS: DurableObjectNamespace<MachineEvents>;
  WEBHOOK_QUEUE: Queue<WebhookMessage>;
}

declare global {
  namespace Cloudflare {
    interface Env extends SettingVars {
      DB: D1Database;
      REALTIME_MACHINE: DurableObjectNamespace<RealtimeMachine>;
      RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
      MACHINE_EVENTS: DurableObjectNamespace<MachineEvents>;
      WEBHOOK_QUEUE: Queue<WebhookMessage>;
    }
  }
}

const booleanSetting = z.enum(["true", "false"]).transform((value) => value === "true");
const positiveInt = z.coerce.number().int().positive();
const claimName = z.string().trim().min(1).max(100);

/** The JWKS as JSON: an object with a `keys` array (RFC 7517 section 5). */
const JwksJson = z.string().transform((text, ctx) => {
  try {
    const parsed: unknown = JSON.parse(text);
    const result = z
      .object({ keys: z.array(z.record(z.string(), z.unknown())).min(1) })
      .safeParse(parsed);
    if (result.success) return text;
  } catch {
    // reported below
  }
  ctx.addIssue({ code: "custom", message: 'JWT_JWKS must be a JSON JWKS: {"keys": [...]}' });
  return z.NEVER;
});

const JwtSettingsSchema = z
  .object({
    issuer: z.string().trim().min(1).optional(),
    audience: z
      .string()
      .optional()
      .transform((text) =>
        text === undefined
          ? undefined
          : text
              .split(",")
              .map((part) => part.trim())
              .filter(Boolean),
      ),
    jwksUrl: z.url({ protocol: /^https?$/ }).optional(),
    jwks: JwksJson.optional(),
    companyClaim: claimName,
    scopeClaim: claimName,
    permissionsClaim: claimName,
  })
  .superRefine((jwt, ctx) => {
    if (jwt.jwks !== undefined && jwt.jwksUrl !== undefined) {
      ctx.addIssue({ code: "custom", message: "Set JWT_JWKS or JWT_JWKS_URL, not both" });
    }
    if (jwt.jwks !== undefined || jwt.jwksUrl !== undefined) {
      if (!jwt.issuer) ctx.addIssue({ code: "custom", message: "JWT_ISSUER is required" });
      if (!jwt.audience?.length) {
        ctx.addIssue({ code: "custom", message: "JWT_AUDIENCE is required" });
      }
    }
  });

/** Comma-separated origins; each must be an http(s) URL without a path. */
const OriginList = z.string().transform((text, ctx) => {
  const origins: string[] = [];
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    try {
      const url = new URL(part);
      if (
        (url.protocol === "http:" || url.protocol === "https:") &&
        url.origin === part.replace(/\/$/, "")
      ) {
        origins.push(url.origin);
        continue;
      }
    } catch {
      // reported below
    }
    ctx.addIssue({ code: "custom", message: `WEBHOOK_EXEMPT_ORIGINS: ${part} is not an origin` });
  }
  return origins;
});

const WebhookSettingsSchema = z.object({
  dohUrl: z.url({ protocol: /^https?$/ }),
  exemptOrigins: OriginList,
  stalledMarginSeconds: positiveInt,
});

const SettingsSchema = z.object({
  environment: z.enum(["development", "test", "sandbox", "production"]),
  defaultRateLimit: positiveInt,
  defaultRateLimitPeriodSeconds: positiveInt,
  rateLimitEnabled: booleanSetting,
  authFailureLimit: positiveInt,
  authFailurePeriodSeconds: positiveInt,
  credentialCacheSeconds: z.coerce.number().int().min(0).max(60),
  jwt: JwtSettingsSchema,
  webhooks: WebhookSettingsSchema,
  eventsMaxConnections: positiveInt,
});

export type Settings = z.infer<typeof SettingsSchema>;
/**
 * Webhook settings: the DNS-over-HTTPS resolver, the origins exempt in local development
 * and the sweeper's stalled margin (s).
 */
export type WebhookSettings = Settings["webhooks"];
/** Access-token settings; `jwks` and `jwksUrl` both absent = no Bearer token is valid. */
export type JwtSettings = Settings["jwt"];

/** Empty strings in `[vars]` mean "not set". */
function unlessEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

/** Cloudflare's DNS-over-HTTPS JSON API, the default resolver of webhook hosts. */
export const DEFAULT_DOH_URL = "https://cloudflare-dns.com/dns-query";

// Settings are parsed once per distinct set of bindings: the Worker's bindings do not
// change within an isolate, and parsing a JWKS on every request would be waste.
let cached: { env: Env; settings: Settings } | undefined;

/**
 * Reads and validates the settings from the Worker's bindings.
 *
 * Defaults: rate limit 600 per 60 s, limiter enabled, 30 failed authentications per
 * 60 s per client address, API keys cached 5 s per isolate, company claim
 * `company_id`, scope claims `scope` (space-separated) and `permissions` (array),
 * webhook hosts resolved with Cloudflare's DNS-over-HTTPS, no exempt origin, a sent
 * delivery taken for lost after 600 s of quiet past its next scheduled handling, 20 open
 * live-event connections per credential.
 *
 * @param env the Worker bindings.
 * @returns typed settings.
 * @throws ZodError when a setting has an invalid value (a deployment error: it surfaces as a 500).
 */
export function readSettings(env: Env): Settings {
  if (cached?.env === env) return cached.settings;
  const settings = SettingsSchema.parse({
    environment: env.ENVIRONMENT,
    defaultRateLimit: env.DEFAULT_RATE_LIMIT ?? "600",
    defaultRateLimitPeriodSeconds: env.DEFAULT_RATE_LIMIT_PERIOD_SECONDS ?? "60",
    rateLimitEnabled: (env.RATE_LIMIT_ENABLED ?? "true").trim().toLowerCase(),
    authFailureLimit: env.AUTH_FAILURE_LIMIT ?? "30",
    authFailurePeriodSeconds: env.AUTH_FAILURE_PERIOD_SECONDS ?? "60",
    credentialCacheSeconds: env.CREDENTIAL_CACHE_SECONDS ?? "5",
    jwt: {
      issuer: unlessEmpty(env.JWT_ISSUER),
      audience: unlessEmpty(env.JWT_AUDIENCE),
      jwksUrl: unlessEmpty(env.JWT_JWKS_URL),
      jwks: unlessEmpty(env.JWT_JWKS),
      companyClaim: unlessEmpty(env.JWT_COMPANY_CLAIM) ?? "company_id",
      scopeClaim: unlessEmpty(env.JWT_SCOPE_CLAIM) ?? "scope",
      permissionsClaim: unlessEmpty(env.JWT_PERMISSIONS_CLAIM) ?? "permissions",
    },
    webhooks: {
      dohUrl: unlessEmpty(env.WEBHOOK_DOH_URL) ?? DEFAULT_DOH_URL,
      exemptOrigins: env.WEBHOOK_EXEMPT_ORIGINS ?? "",
      stalledMarginSeconds:
        unlessEmpty(env.WEBHOOK_STALLED_MARGIN_SECONDS) ?? String(DEFAULT_STALLED_MARGIN_SECONDS),
    },
    eventsMaxConnections: unlessEmpty(env.EVENTS_MAX_CONNECTIONS) ?? "20",
  });
  cached = { env, settings };
  return settings;
}
