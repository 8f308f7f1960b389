/**
 * D1 queries of the operator's company routes (./companies-routes.ts): create and list
 * companies, their signal retention and their webhook signing secret.
 */
import { asc, eq } from "drizzle-orm";
import { randomToken } from "../auth/api-keys";
import type { Database } from "../db/client";
import type { CompanyScope } from "../db/company-scope";
import { companies } from "../db/schema";

/** How long deliveries carry the old signature after a rotation (docs/webhooks.md). */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** A new webhook signing secret: `whsec_` + 32 random bytes in base64url (docs/webhooks.md). */
export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/**
 * Sets how long the company's raw signal samples are kept.
 *
 * @param days days kept, or null = forever.
 * @returns the setting now stored, or null when the company does not exist.
 */
export async function setSignalRetention(
  scope: CompanyScope,
  days: number | null,
): Promise<{ days: number | null } | null> {
  const row = await scope.db
    .update(companies)
    .set({ signalRetentionDays: days })
    .where(eq(companies.id, scope.companyId))
    .returning({ days: companies.signalRetentionDays })
    .get();
  return row ?? null;
}

/**
 * Creates companies, each with a new webhook signing secret, in one batch (all or none).
 *
 * @param items name and IANA time zone of each company.
 * @returns the created rows in order, with their secret.
 */
export async function createCompanies(
  db: Database,
  items: readonly { name: string; timezone: string }[],
): Promise<{ id: number; name: string; timezone: string; webhookSecret: string }[]> {
  const inserts = items.map((item) =>
    db
      .insert(companies)
      .values({ name: item.name, timezone: item.timezone, webhookSecret: newWebhookSecret() })
      .returning({
        id: companies.id,
        name: companies.name,
        timezone: companies.timezone,
        webhookSecret: companies.webhookSecret,
      }),
  );
  const [first, ...rest] = inserts;
  if (!first) return [];
  return (await db.batch([first, ...rest])).flat();
}

/** Every company by id, without secrets. */
export function listCompanies(
  db: Database,
): Promise<{ id: number; name: string; timezone: string }[]> {
  return db
    .select({ id: companies.id, name: companies.name, timezone: companies.timezone })
    .from(companies)
    .orderBy(asc(companies.id))
    .all();
}

/**
 * Gives the company a new webhook signing secret; the old one stays valid for
 * {@link SECRET_OVERLAP_MS} (deliveries carry both signatures meanwhile).
 *
 * @returns the new secret, or null when the company does not exist.
 */
export async function rotateWebhookSecret(scope: CompanyScope): Promise<string | null> {
  const { db, companyId } = scope;
  const current = await db
    .select({ secret: companies.webhookSecret })
    .from(companies)
    .where(eq(companies.id, companyId))
    .get();
  if (!current) return null;
  const webhookSecret = newWebhookSecret();
  await db
    .update(companies)
    .set({
      webhookSecret,
      previousWebhookSecret: current.secret,
      previousWebhookSecretExpiresAt: Date.now() + SECRET_OVERLAP_MS,
    })
    .where(eq(companies.id, companyId));
  return webhookSecret;
}
