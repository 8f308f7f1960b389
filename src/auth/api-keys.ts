/**
 * API keys: random, shown once, stored as SHA-256 hashes with a short display prefix.
 */
import type { Principal } from "../app-env";
import { readDirectory } from "../db/directory-reads";

const KEY_PREFIX = "pm_";
const KEY_BYTES = 32;
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;

/** Lowercase hex SHA-256 of a UTF-8 string. */
async function sha256Hex(text: string): Promise<string> {
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

/** A key's row as the lookup reads it. */
interface KeyRow {
  id: number;
  scopes: string;
  rate_limit_requests: number | null;
  rate_limit_period_seconds: number | null;
  company_id: number;
  company_name: string;
  timezone: string;
}

/**
 * Finds the active (not revoked) key with this value and the company it acts for, in the
 * directory, through a session that may read a replica at most `DIRECTORY_ANCHOR_MS`
 * behind the primary (src/db/directory-reads.ts); a key not found there is looked for at
 * the primary, so a key works as soon as it is issued.
 *
 * @param directory the directory's binding (`DB`).
 * @param key the raw `x-api-key` header value.
 * @returns the principal (null when no active key matches) and the instant the answer
 *   reflects the primary as of (`asOf`, ms): a cache of it counts its time from there, so a
 *   revocation is seen within that time wherever the answer was read.
 */
export async function principalFromApiKey(
  directory: D1Database,
  key: string,
): Promise<{ principal: Principal | null; asOf: number }> {
  if (!key.startsWith(KEY_PREFIX) || key.length > 200) return { principal: null, asOf: Date.now() };
  const hash = await sha256Hex(key);
  const { value: row, asOf } = await readDirectory(
    directory,
    (session) =>
      session
        .prepare(
          `SELECT k.id, k.scopes, k.rate_limit_requests, k.rate_limit_period_seconds,
             c.id AS company_id, c.name AS company_name, c.timezone
           FROM api_keys k JOIN companies c ON c.id = k.company_id
           WHERE k.key_hash = ?1 AND k.revoked_at IS NULL`,
        )
        .bind(hash)
        .first<KeyRow>(),
    (found) => found !== null,
  );
  if (!row) return { principal: null, asOf };
  const principal: Principal = {
    companyId: row.company_id,
    companyName: row.company_name,
    timezone: row.timezone,
    credentialId: `key:${row.id}`,
    kind: "api_key",
    scopes: new Set(JSON.parse(row.scopes) as string[]),
    rateLimit:
      row.rate_limit_requests !== null && row.rate_limit_period_seconds !== null
        ? { requests: row.rate_limit_requests, periodSeconds: row.rate_limit_period_seconds }
        : null,
  };
  return { principal, asOf };
}
