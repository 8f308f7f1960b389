/**
 * API keys: random, shown once, stored as SHA-256 hashes with a short display prefix.
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Principal } from "../app-env";
import type { Database } from "../db/client";
import { apiKeys, companies } from "../db/schema";

const KEY_PREFIX = "pm_";
const KEY_BYTES = 32;
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** Lowercase hex SHA-256 of a UTF-8 string. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Base64url without padding of random bytes. */
export function randomToken(bytes: number): string {
  const buf = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...buf))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * Makes a new API key.
 *
 * @returns `key` (shown to the operator once), `prefix` (safe to display) and `hash` (stored).
 */
export async function generateApiKey(): Promise<{ key: string; prefix: string; hash: string }> {
  const key = `${KEY_PREFIX}${randomToken(KEY_BYTES)}`;
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: await sha256Hex(key) };
}

/**
 * Finds the live (not revoked) key with this value and the company it acts for.
 *
 * @param db Drizzle client.
 * @param key the raw `x-api-key` header value.
 * @returns the principal, or null when no live key matches.
 */
export async function principalFromApiKey(db: Database, key: string): Promise<Principal | null> {
  if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
  const hash = await sha256Hex(key);
  const row = await db
    .select({
      id: apiKeys.id,
      scopes: apiKeys.scopes,
      rateLimitRequests: apiKeys.rateLimitRequests,
      rateLimitPeriodSeconds: apiKeys.rateLimitPeriodSeconds,
      companyId: companies.id,
      companyName: companies.name,
      timezone: companies.timezone,
    })
    .from(apiKeys)
    .innerJoin(companies, eq(companies.id, apiKeys.companyId))
    .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)))
    .get();
  if (!row) return null;
  return {
    companyId: row.companyId,
    companyName: row.companyName,
    timezone: row.timezone,
    credentialId: `key:${row.id}`,
    kind: "api_key",
    scopes: new Set(row.scopes),
    rateLimit:
      row.rateLimitRequests !== null && row.rateLimitPeriodSeconds !== null
        ? { requests: row.rateLimitRequests, periodSeconds: row.rateLimitPeriodSeconds }
        : null,
  };
}
