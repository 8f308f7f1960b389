/**
 * Access tokens from the customer's identity provider (`Authorization: Bearer <JWT>`),
 * verified with `jose`: the signature against the provider's JWKS (`JWT_JWKS_URL`, or
 * `JWT_JWKS` inline), RS256/ES256 only, `iss`/`aud`/`exp`/`nbf` with 60 s of leeway, a
 * lifetime of at most `JWT_MAX_TOKEN_LIFETIME_SECONDS`. The company comes from the
 * `JWT_COMPANY_CLAIM` claim, the scopes from `scope` and `permissions`; the credential id is
 * `token:<companyId>:<sub>` (a rate limit per subject). docs/api-guide.md ("Access tokens").
 */
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
} from "jose";
import type { Principal } from "../app-env";
import { readDirectory } from "../db/directory-reads";
import type { JwtSettings } from "../env";
import { log } from "../observability/log";
import { MINUTE_MS, SECOND_MS } from "../time/units";

/** Signature algorithms accepted; everything else (`none`, HS*, PS*, EdDSA) is refused. */
const ALGORITHMS = ["RS256", "ES256"] as const;
/** Leeway on `exp` and `nbf`, in seconds. */
export const CLOCK_TOLERANCE_SECONDS = 60;
/** Longest token considered (a JWT is a few hundred bytes to a few KB). */
const MAX_TOKEN_LENGTH = 8_192;
/** Longest `sub` accepted (it becomes part of the rate-limit object's name). */
const MAX_SUBJECT_LENGTH = 255;
/** Remote JWKS: refetched after 10 minutes, and on an unknown `kid` at most every 30 s. */
const JWKS_CACHE_MAX_AGE_MS = 10 * MINUTE_MS;
const JWKS_COOLDOWN_MS = 30_000;
const JWKS_FETCH_TIMEOUT_MS = 5_000;

// One key source per JWKS (URL or inline text) per isolate: the remote set
// keeps its fetched keys and its refresh state between requests.
const keySources = new Map<string, JWTVerifyGetKey>();

/**
 * The key source of the configured JWKS, cached per isolate.
 *
 * @param jwt access-token settings.
 * @returns the source, or null when no JWKS is configured (no Bearer token is then valid).
 */
export function keySource(jwt: JwtSettings): JWTVerifyGetKey | null {
  const cacheKey =
    jwt.jwks !== undefined ? `inline:${jwt.jwks}` : jwt.jwksUrl && `url:${jwt.jwksUrl}`;
  if (!cacheKey) return null;
  const known = keySources.get(cacheKey);
  if (known) return known;
  const source =
    jwt.jwks !== undefined
      ? createLocalJWKSet(JSON.parse(jwt.jwks) as JSONWebKeySet)
      : createRemoteJWKSet(new URL(jwt.jwksUrl ?? ""), {
          cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
          cooldownDuration: JWKS_COOLDOWN_MS,
          timeoutDuration: JWKS_FETCH_TIMEOUT_MS,
        });
  keySources.set(cacheKey, source);
  return source;
}

/** What a verified token grants: a company, a subject and scopes. */
interface TokenGrant {
  companyId: number;
  subject: string;
  scopes: Set<string>;
}

/** Scopes from a claim that is a space-separated string or an array of strings. */
function scopesOf(claim: unknown): string[] {
  if (typeof claim === "string") return claim.split(/\s+/).filter(Boolean);
  if (Array.isArray(claim)) return claim.filter((s): s is string => typeof s === "string");
  return [];
}

/** A positive integer id from a number or a string of digits; null otherwise. */
function companyIdOf(claim: unknown): number | null {
  const id =
    typeof claim === "number"
      ? claim
      : typeof claim === "string" && /^[1-9][0-9]{0,14}$/.test(claim)
        ? Number(claim)
        : Number.NaN;
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/**
 * Reads the grant from verified claims.
 *
 * @param payload the claims of a verified token.
 * @param jwt the claim names.
 * @returns the grant, or null when the company claim is missing or malformed, or `sub` is
 *   not a string of 1 to 255 characters.
 */
function grantOf(payload: JWTPayload, jwt: JwtSettings): TokenGrant | null {
  const companyId = companyIdOf(payload[jwt.companyClaim]);
  // jose checks that `sub` is present, not its type: 42, true, {} or [] must not become
  // part of a credential id.
  const subject: unknown = payload.sub;
  if (
    companyId === null ||
    typeof subject !== "string" ||
    subject.length === 0 ||
    subject.length > MAX_SUBJECT_LENGTH
  ) {
    return null;
  }
  return {
    companyId,
    subject,
    scopes: new Set([
      ...scopesOf(payload[jwt.scopeClaim]),
      ...scopesOf(payload[jwt.permissionsClaim]),
    ]),
  };
}

/**
 * Verifies an access token's signature and registered claims.
 *
 * @param token the compact JWS from the `Authorization` header.
 * @param jwt issuer, audience and JWKS settings.
 * @param getKey the key source; defaults to the configured JWKS.
 * @returns the claims, or null when the token is not valid, lives longer than
 *   `jwt.maxLifetimeSeconds` (`exp - iat`; `exp - now` without `iat`), or no JWKS is configured.
 *   The reason is logged (`access_token_rejected`), never returned to the caller.
 */
export async function verifyAccessToken(
  token: string,
  jwt: JwtSettings,
  getKey: JWTVerifyGetKey | null = keySource(jwt),
): Promise<JWTPayload | null> {
  if (!getKey || !jwt.issuer || !jwt.audience || token.length > MAX_TOKEN_LENGTH) return null;
  try {
    const { payload } = await jwtVerify(token, getKey, {
      algorithms: [...ALGORITHMS],
      issuer: jwt.issuer,
      audience: jwt.audience,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      requiredClaims: ["exp", "sub"],
    });
    // jose has `maxTokenAge` (now - iat), not a bound on what the issuer granted.
    const exp = payload.exp ?? 0;
    const issuedAt = payload.iat ?? Math.floor(Date.now() / SECOND_MS);
    if (exp - issuedAt > jwt.maxLifetimeSeconds) {
      log("info", "access_token_rejected", { reason: "lifetime" });
      return null;
    }
    return payload;
  } catch (error) {
    // A provider that cannot be reached is an operational problem, not a bad token.
    const providerDown =
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid ||
      !(error instanceof errors.JOSEError);
    log(providerDown ? "error" : "info", "access_token_rejected", {
      reason: error instanceof errors.JOSEError ? error.code : String(error),
    });
    return null;
  }
}

// Companies are never deleted, so their name and time zone can be kept a while.
const companyCache = new Map<number, { name: string; timezone: string; expiresAt: number }>();
const MAX_CACHED_COMPANIES = 10_000;

/**
 * Resolves an access token into the principal it acts for.
 *
 * @param directory the directory's binding (`DB`): the company is read there, through a
 *   session that may use a replica (src/db/directory-reads.ts).
 * @param jwt access-token settings.
 * @param token the Bearer token.
 * @param cacheSeconds how long this isolate may keep a company row (0 = no cache).
 * @returns the principal (kind `access_token`, no rate limit of its own), or null when the
 *   token is invalid, lacks a company claim or `sub`, or names a company that does not exist.
 */
export async function principalFromAccessToken(
  directory: D1Database,
  jwt: JwtSettings,
  token: string,
  cacheSeconds: number,
): Promise<Principal | null> {
  const payload = await verifyAccessToken(token, jwt);
  if (!payload) return null;
  const grant = grantOf(payload, jwt);
  if (!grant) {
    log("info", "access_token_rejected", { reason: "claims" });
    return null;
  }
  const now = Date.now();
  let company = companyCache.get(grant.companyId);
  if (!company || company.expiresAt <= now) {
    // A company is never deleted: a replica's answer will do, a miss is asked at the primary.
    const { value: row, asOf } = await readDirectory(
      directory,
      (session) =>
        session
          .prepare("SELECT name, timezone FROM companies WHERE id = CAST(?1 AS INTEGER)")
          .bind(grant.companyId)
          .first<{ name: string; timezone: string }>(),
      (found) => found !== null,
    );
    if (!row) {
      log("info", "access_token_rejected", { reason: "unknown_company" });
      return null;
    }
    company = {
      name: row.name,
      timezone: row.timezone,
      expiresAt: asOf + cacheSeconds * SECOND_MS,
    };
    if (cacheSeconds > 0) {
      if (companyCache.size >= MAX_CACHED_COMPANIES) companyCache.clear();
      companyCache.set(grant.companyId, company);
    }
  }
  return {
    companyId: grant.companyId,
    companyName: company.name,
    timezone: company.timezone,
    credentialId: `token:${grant.companyId}:${grant.subject}`,
    kind: "access_token",
    scopes: grant.scopes,
    rateLimit: null,
    expiresAt: ((payload.exp ?? 0) + CLOCK_TOLERANCE_SECONDS) * SECOND_MS,
  };
}
