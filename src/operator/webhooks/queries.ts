/**
 * D1 queries of the operator's webhook routes (./routes.ts): registrations,
 * deliveries with their attempts, the replay's reset.
 */

import { and, asc, count, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, notDeleted, softDeleted } from "../../db/company-scope";
import { withKeys } from "../../db/directory-keys";
import { inJsonList } from "../../db/json-list";
import { webhookAttempts, webhookDeliveries, webhookEvents, webhooks } from "../../db/schema";
import type { DirectoryEnv } from "../../db/shards";
import { isoInstant as iso } from "../../http/instants";
import { paginate } from "../../http/pagination";
import { isThresholdType, WEBHOOK_EVENT_TYPES } from "../../webhooks/event-types";
import type { DELIVERY_STATUSES } from "./schemas";

const webhookColumns = {
  id: webhooks.id,
  name: webhooks.name,
  url: webhooks.url,
  eventType: webhooks.eventType,
  thresholdsMinutes: webhooks.thresholdsMinutes,
  createdAt: webhooks.createdAt,
};

/** A stored registration as the API shows it. */
function toWebhookOut(row: {
  id: string;
  name: string;
  url: string;
  eventType: string;
  thresholdsMinutes: number[] | null;
  createdAt: number;
}) {
  const eventType = WEBHOOK_EVENT_TYPES.find((t) => t === row.eventType);
  if (!eventType) throw new Error(`unknown event type ${row.eventType} stored`);
  return {
    ...row,
    eventType,
    thresholdsMinutes: isThresholdType(eventType) ? (row.thresholdsMinutes ?? []) : null,
    createdAt: iso(row.createdAt),
  };
}

/** A registration to create (thresholds for a threshold event type only). */
interface WebhookInput {
  name: string;
  url: string;
  eventType: (typeof WEBHOOK_EVENT_TYPES)[number];
  thresholdsMinutes?: readonly number[];
}

/**
 * Creates registrations, all in one batch (all or none), their ids held by the directory.
 *
 * @returns them as the API shows them, in order.
 */
export async function insertWebhooks(
  env: DirectoryEnv,
  scope: CompanyScope,
  items: readonly WebhookInput[],
) {
  const { db, companyId } = scope;
  const ids = items.map(() => crypto.randomUUID());
  const [first, ...rest] = items.map((item, i) =>
    db
      .insert(webhooks)
      .values({
        id: ids[i] ?? crypto.randomUUID(),
        companyId,
        name: item.name,
        url: item.url,
        eventType: item.eventType,
        thresholdsMinutes: item.thresholdsMinutes
          ? [...item.thresholdsMinutes].sort((a, b) => a - b)
          : null,
      })
      .returning(webhookColumns),
  );
  if (!first) return [];
  // The operator API finds a registration's company by its id in the directory.
  const results = await withKeys(env, "webhook", companyId, ids, () => db.batch([first, ...rest]));
  if (results === "taken") throw new Error("a random webhook id repeated");
  return results.flat().map(toWebhookOut);
}

/** A company's registrations not deleted, oldest first, as the API shows them. */
export async function listWebhooks(scope: CompanyScope) {
  const { db, companyId } = scope;
  const rows = await db
    .select(webhookColumns)
    .from(webhooks)
    .where(notDeleted({ companyId }, webhooks))
    .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
    .all();
  return rows.map(toWebhookOut);
}

/**
 * Marks a registration deleted.
 *
 * @param now ms since the epoch.
 * @returns false when there is no such registration not already deleted.
 */
export async function deleteWebhook(
  db: Database,
  webhookId: string,
  now: number,
): Promise<boolean> {
  const row = await db
    .update(webhooks)
    .set(softDeleted(webhooks, now))
    .where(and(eq(webhooks.id, webhookId), isNull(webhooks.deletedAt)))
    .returning({ id: webhooks.id })
    .get();
  return row !== undefined;
}

/** A registration not deleted (id and company), or undefined. */
export function liveWebhook(db: Database, webhookId: string) {
  return db
    .select({ id: webhooks.id, companyId: webhooks.companyId })
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), isNull(webhooks.deletedAt)))
    .get();
}

/** True when the registration exists, deleted or not. */
export async function webhookExists(db: Database, webhookId: string): Promise<boolean> {
  const row = await db
    .select({ id: webhooks.id })
    .from(webhooks)
    .where(eq(webhooks.id, webhookId))
    .get();
  return row !== undefined;
}

/** One recorded attempt; `at` in ms since the epoch. */
interface AttemptRow {
  requestId: string;
  at: number;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

/**
 * One page of a registration's deliveries, newest first, and their attempts,
 * oldest first (two queries besides the count).
 *
 * @returns the page and, by delivery id, its attempts.
 */
export async function deliveriesPage(
  db: Database,
  webhookId: string,
  query: { status?: (typeof DELIVERY_STATUSES)[number]; page: number; limit: number },
) {
  const where: SQL | undefined = and(
    eq(webhookDeliveries.webhookId, webhookId),
    query.status === undefined ? undefined : eq(webhookDeliveries.status, query.status),
  );
  const page = await paginate(
    { page: query.page, limit: query.limit },
    db.select({ count: count() }).from(webhookDeliveries).where(where),
    ({ limit, offset }) =>
      db
        .select({
          id: webhookDeliveries.id,
          eventId: webhookDeliveries.eventId,
          eventType: webhookEvents.eventType,
          status: webhookDeliveries.status,
          rounds: webhookDeliveries.rounds,
          attemptsInRound: webhookDeliveries.attemptsInRound,
          nextAttemptAt: webhookDeliveries.nextAttemptAt,
        })
        .from(webhookDeliveries)
        .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .limit(limit)
        .offset(offset),
  );
  const ids = page.rows.map((r) => r.id);
  const rows =
    ids.length === 0
      ? []
      : await db
          .select({
            deliveryId: webhookAttempts.deliveryId,
            requestId: webhookAttempts.requestId,
            at: webhookAttempts.at,
            durationMs: webhookAttempts.durationMs,
            statusCode: webhookAttempts.statusCode,
            error: webhookAttempts.error,
          })
          .from(webhookAttempts)
          .where(inJsonList(webhookAttempts.deliveryId, ids))
          .orderBy(asc(webhookAttempts.at), asc(webhookAttempts.id))
          .all();
  const attempts = new Map<string, AttemptRow[]>();
  for (const { deliveryId, ...attempt } of rows) {
    attempts.set(deliveryId, [...(attempts.get(deliveryId) ?? []), attempt]);
  }
  return { page, attempts };
}

/** A delivery's status and whether its registration was deleted, or undefined. */
export function deliveryForReplay(db: Database, deliveryId: string) {
  return db
    .select({ status: webhookDeliveries.status, webhookDeletedAt: webhooks.deletedAt })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
}

/**
 * Resets a delivery that has ended to pending, with a fresh set of rounds,
 * guarded on its status so that two replays at once queue one message.
 *
 * @param now ms since the epoch.
 * @returns the row reset, or undefined when the delivery is pending.
 */
export function resetForReplay(db: Database, deliveryId: string, now: number) {
  return db
    .update(webhookDeliveries)
    .set({
      status: "pending",
      rounds: 0,
      attemptsInRound: 0,
      nextAttemptAt: null,
      enqueuedAt: null,
      updatedAt: now,
    })
    .where(and(eq(webhookDeliveries.id, deliveryId), sql`${webhookDeliveries.status} <> 'pending'`))
    .returning({ id: webhookDeliveries.id })
    .get();
}
