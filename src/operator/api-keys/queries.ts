/**
 * D1 queries of the operator's API-key routes (./routes.ts): issue and revoke.
 */

import { eq } from "drizzle-orm";
import { generateApiKey } from "../../auth/api-keys";
import type { Database } from "../../db/client";
import type { CompanyScope } from "../../db/company-scope";
import { apiKeys } from "../../db/schema";

/** A key's request budget: at most `requests` per `periodSeconds`. */
export interface RateLimit {
  requests: number;
  periodSeconds: number;
}

/** A key to issue. */
export interface ApiKeyInput {
  name: string;
  scopes: string[];
  rateLimit?: RateLimit | undefined;
}

/** An issued key, with its secret `key` (shown once; only its SHA-256 hash is stored). */
interface IssuedApiKey {
  id: number;
  name: string;
  key: string;
  prefix: string;
  scopes: string[];
  rateLimit: RateLimit | null;
}

/**
 * Generates and stores keys of the company in one batch (all or none); repeated scopes
 * are stored once.
 *
 * @returns the issued keys in the order of `items`.
 */
export async function issueApiKeys(
  scope: CompanyScope,
  items: readonly ApiKeyInput[],
): Promise<IssuedApiKey[]> {
  const { db, companyId } = scope;
  const generated = await Promise.all(items.map(() => generateApiKey()));
  const inserts = items.map((item, i) => {
    const g = generated[i];
    if (!g) throw new Error("unreachable: one key per item");
    return db
      .insert(apiKeys)
      .values({
        companyId,
        name: item.name,
        prefix: g.prefix,
        keyHash: g.hash,
        scopes: [...new Set(item.scopes)],
        rateLimitRequests: item.rateLimit?.requests ?? null,
        rateLimitPeriodSeconds: item.rateLimit?.periodSeconds ?? null,
      })
      .returning({ id: apiKeys.id });
  });
  const [first, ...rest] = inserts;
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  return results.map(([row], i) => ({
    id: row?.id ?? 0,
    name: items[i]?.name ?? "",
    key: generated[i]?.key ?? "",
    prefix: generated[i]?.prefix ?? "",
    scopes: [...new Set(items[i]?.scopes ?? [])],
    rateLimit: items[i]?.rateLimit ?? null,
  }));
}

/**
 * Marks a key revoked (of any company: the operator addresses keys by their global id).
 *
 * @returns `{id}`, or null when no key has this id.
 */
export async function revokeApiKey(db: Database, apiKeyId: number): Promise<{ id: number } | null> {
  const row = await db
    .update(apiKeys)
    .set({ revokedAt: Date.now() })
    .where(eq(apiKeys.id, apiKeyId))
    .returning({ id: apiKeys.id })
    .get();
  return row ?? null;
}
