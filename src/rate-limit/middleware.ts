/**
 * Rate-limit middleware of public routes: `rateLimit()` counts a request against its
 * credential's policy in the credential's `RateLimiter` object; `limitFailedAuthentications()`
 * counts 401s per client address. Header fields follow draft-ietf-httpapi-ratelimit-headers-10
 * (`RateLimit-Policy`, `RateLimit`; a 429 adds `Retry-After`, RFC 9110 section 10.2.3). Fails
 * open when the limiter cannot be reached within `LIMITER_TIMEOUT_MS`: served, logged.
 * docs/api-guide.md ("Rate limits").
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { DEFAULT_RESOLVERS } from "../auth/middleware";
import { readSettings } from "../env";
import { ApiError } from "../http/errors";
import { logError } from "../observability/log";
import { SECOND_MS } from "../time/units";
import { AdmissionLeases } from "./leases";
import { bucketName, consume, type RateLimitDecision, type RateLimitPolicy } from "./rate-limiter";

/** Policy name of the per-credential limit in the header fields. */
const CREDENTIAL_POLICY = "default";
/** Policy name of the failed-authentication limit in the header fields. */
const AUTH_FAILURE_POLICY = "auth-failures";
/** Body detail of a 429. */
const RATE_LIMITED_DETAIL = "Rate limit exceeded";
/** Bucket of requests without `CF-Connecting-IP` (local development and tests). */
const LOCAL_CLIENT = "local";
/** How long a limiter call may take before the request is served anyway. */
const LIMITER_TIMEOUT_MS = 1_000;
/** Most buckets remembered as over their limit by one isolate. */
const MAX_BLOCKED_BUCKETS = 10_000;

/**
 * Buckets this isolate knows to be over their limit, with the instant (ms) at
 * which the object will admit again. Until then the object's answer cannot
 * change (rejected requests are not counted, and nothing leaves the window
 * earlier), so asking it again would only cost a round trip.
 */
const blockedUntil = new Map<string, number>();

/** Admissions this isolate leased from credentials' objects (see `./leases.ts`). */
const leases = new AdmissionLeases();

function rememberBlocked(bucket: string, until: number): void {
  if (blockedUntil.size >= MAX_BLOCKED_BUCKETS) {
    const oldest = blockedUntil.keys().next();
    if (!oldest.done) blockedUntil.delete(oldest.value);
  }
  blockedUntil.set(bucket, until);
}

/** Milliseconds until `bucket` is admitted again, per this isolate; 0 when not known blocked. */
function knownBlockedFor(bucket: string, now: number): number {
  const until = blockedUntil.get(bucket);
  if (until === undefined) return 0;
  if (until <= now) {
    blockedUntil.delete(bucket);
    return 0;
  }
  return until - now;
}

/** Whole seconds, rounded up, at least 1 (a 0 would invite an immediate retry). */
function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / SECOND_MS));
}

/**
 * The draft's header fields for one policy.
 *
 * @param name the policy name, a structured-field string.
 * @param policy quota and window.
 * @param state remaining requests and ms until the window admits more; omitted = unknown
 *   (fail open), in which case only `RateLimit-Policy` is given.
 */
function rateLimitHeaders(
  name: string,
  policy: RateLimitPolicy,
  state?: { remaining: number; resetAfterMs: number },
): Record<string, string> {
  const headers: Record<string, string> = {
    "RateLimit-Policy": `"${name}";q=${policy.requests};w=${policy.periodSeconds}`,
  };
  if (state) {
    headers.RateLimit = `"${name}";r=${state.remaining};t=${wholeSeconds(state.resetAfterMs)}`;
  }
  return headers;
}

/** The 429 error with `Retry-After` and both header fields. */
function tooManyRequests(name: string, policy: RateLimitPolicy, retryAfterMs: number): ApiError {
  return new ApiError(429, RATE_LIMITED_DETAIL, {
    "Retry-After": String(wholeSeconds(retryAfterMs)),
    ...rateLimitHeaders(name, policy, { remaining: 0, resetAfterMs: retryAfterMs }),
  });
}

/**
 * Asks the bucket's object for a decision; null when it cannot be reached (logged).
 */
async function decide(
  c: Context<AppEnv>,
  bucket: string,
  policy: RateLimitPolicy,
  count = 1,
): Promise<RateLimitDecision | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${LIMITER_TIMEOUT_MS} ms`)),
        LIMITER_TIMEOUT_MS,
      );
    });
    return await Promise.race([consume(c.env.RATE_LIMITER, bucket, policy, count), timeout]);
  } catch (error) {
    logError("rate_limiter_unreachable", error, {
      message: "Rate limiter unreachable; request served without limit (fail open)",
      requestId: c.get("requestId"),
      bucket,
    });
    return null;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** The client's address: `CF-Connecting-IP`, set by Cloudflare's edge (not forgeable there). */
function clientAddress(c: Context<AppEnv>): string {
  return c.req.header("cf-connecting-ip")?.trim() || LOCAL_CLIENT;
}

/**
 * Middleware (after `authenticate`): the per-credential rate limit.
 *
 * One `RateLimiter` object per credential (`credential:key:<id>` or
 * `credential:token:<company>:<sub>`), with the credential's own policy or the
 * default from settings. A busy credential's requests are admitted from the
 * isolate's lease when it holds one (`./leases.ts`), else by the object, which
 * may lease more. Sets the header fields on the response.
 *
 * @throws ApiError 429 `Rate limit exceeded` with `Retry-After`, `RateLimit`, `RateLimit-Policy`.
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const settings = readSettings(c.env);
    if (!settings.rateLimitEnabled) return next();
    const principal = c.get("principal");
    const policy = principal.rateLimit ?? {
      requests: settings.defaultRateLimit,
      periodSeconds: settings.defaultRateLimitPeriodSeconds,
    };
    const bucket = bucketName("credential", principal.credentialId);
    const blockedFor = knownBlockedFor(bucket, Date.now());
    if (blockedFor > 0) throw tooManyRequests(CREDENTIAL_POLICY, policy, blockedFor);

    const now = Date.now();
    let state: { remaining: number; resetAfterMs: number } | undefined =
      leases.take(bucket, policy, now) ?? undefined;
    if (!state) {
      const asked = leases.ask(bucket, policy, now);
      const decision = await decide(c, bucket, policy, asked);
      const at = Date.now();
      leases.answered(bucket, policy, at, asked, decision);
      if (decision && !decision.allowed) {
        rememberBlocked(bucket, at + decision.resetAfterMs);
        throw tooManyRequests(CREDENTIAL_POLICY, policy, decision.resetAfterMs);
      }
      if (decision) {
        state = {
          remaining: decision.remaining + leases.held(bucket, at),
          resetAfterMs: decision.resetAfterMs,
        };
      }
    }
    await next();
    // Set after the handler: a handler's own Response would not carry prepared headers.
    const headers = rateLimitHeaders(CREDENTIAL_POLICY, policy, state);
    for (const [name, value] of Object.entries(headers)) c.header(name, value);
  };
}

/**
 * Middleware (before `authenticate`): limits failed authentications per client address.
 *
 * Every 401 of a public route to a request that presented a credential (an
 * `x-api-key` or `Authorization` header) is counted in the object of the client's address
 * (`auth-failures:<CF-Connecting-IP>`) against `AUTH_FAILURE_LIMIT` per
 * `AUTH_FAILURE_PERIOD_SECONDS`; the failure over the limit becomes a 429, and
 * from then on this isolate answers 429 to that address, even with a valid
 * credential, until the window admits again (another isolate learns it on its
 * first failure from the address). 401s carry the `auth-failures` header fields.
 *
 * @throws ApiError 429 `Rate limit exceeded` while the address is blocked.
 */
export function limitFailedAuthentications(): MiddlewareHandler<AppEnv> {
  return async function limitFailedAuthenticationsMiddleware(c, next) {
    const settings = readSettings(c.env);
    if (!settings.rateLimitEnabled) return next();
    const policy = {
      requests: settings.authFailureLimit,
      periodSeconds: settings.authFailurePeriodSeconds,
    };
    const bucket = bucketName("auth-failures", clientAddress(c));
    const blockedFor = knownBlockedFor(bucket, Date.now());
    if (blockedFor > 0) throw tooManyRequests(AUTH_FAILURE_POLICY, policy, blockedFor);

    await next();
    // Only a presented credential can be a guess; a request without any is not counted.
    const presented = DEFAULT_RESOLVERS.some((r) => c.req.header(r.header) !== undefined);
    if (c.res.status !== 401 || !presented) return;
    const decision = await decide(c, bucket, policy);
    if (!decision) return;
    if (decision.allowed) {
      for (const [name, value] of Object.entries(
        rateLimitHeaders(AUTH_FAILURE_POLICY, policy, decision),
      )) {
        c.header(name, value);
      }
      return;
    }
    rememberBlocked(bucket, Date.now() + decision.resetAfterMs);
    const error = tooManyRequests(AUTH_FAILURE_POLICY, policy, decision.resetAfterMs);
    // Replaces the 401 (whose other headers, such as X-Request-Id, are kept).
    c.res = c.json({ detail: RATE_LIMITED_DETAIL }, 429, error.headers);
    c.header("WWW-Authenticate", undefined);
  };
}
