/**
 * The D1 side of delivering: where many deliveries stand, read at once, and the statements
 * that record an attempt with where its delivery stands after it (`rounds`,
 * `attempts_in_round`, `next_attempt_at`: written with every attempt, in one transaction with
 * its row, and otherwise only by a replay). So a delivery handed over twice goes on from where
 * its record says (docs/webhook-delivery.md, "The path of a delivery").
 */
import { and, eq } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { inJsonList } from "../db/json-list";
import {
  companies,
  webhookAttempts,
  webhookDeliveries,
  webhookEvents,
  webhooks,
} from "../db/schema";
import type { AttemptResult, AttemptTarget } from "./attempt";
import type { RoundState } from "./retry-policy";

/** What a round needs about its delivery. */
export interface DeliveryContext extends AttemptTarget, RoundState {
  id: string;
  companyId: number;
  webhookId: string;
  status: "pending" | "delivered" | "failed";
  webhookDeletedAt: number | null;
}

/**
 * Deliveries by id, in one query (one D1 round trip for all of them).
 *
 * @param deliveryIds the deliveries (one bound parameter for the whole list:
 *   D1 allows at most 100 per statement).
 * @returns the deliveries found, by id (an unknown id is absent).
 * @throws what D1 throws.
 */
export async function loadDeliveries(
  db: Database,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryContext>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db
    .select({
      id: webhookDeliveries.id,
      companyId: webhookDeliveries.companyId,
      webhookId: webhookDeliveries.webhookId,
      status: webhookDeliveries.status,
      rounds: webhookDeliveries.rounds,
      attemptsInRound: webhookDeliveries.attemptsInRound,
      url: webhooks.url,
      webhookDeletedAt: webhooks.deletedAt,
      eventId: webhookEvents.id,
      eventType: webhookEvents.eventType,
      body: webhookEvents.body,
      eventTimestamp: webhookEvents.eventTimestamp,
      webhookSecret: companies.webhookSecret,
      previousWebhookSecret: companies.previousWebhookSecret,
      previousWebhookSecretExpiresAt: companies.previousWebhookSecretExpiresAt,
    })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
    .innerJoin(companies, eq(companies.id, webhookDeliveries.companyId))
    .where(inJsonList(webhookDeliveries.id, deliveryIds))
    .all();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * The registration and status of each delivery, in one query: what the Queue
 * consumer needs to hand a delivery to its endpoint's deliverer.
 *
 * @returns by delivery id (an unknown id is absent).
 * @throws what D1 throws.
 */
export async function loadRoutes(
  db: Database,
  deliveryIds: readonly string[],
): Promise<
  Map<string, { webhookId: string; companyId: number; status: DeliveryContext["status"] }>
> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db
    .select({
      id: webhookDeliveries.id,
      companyId: webhookDeliveries.companyId,
      webhookId: webhookDeliveries.webhookId,
      status: webhookDeliveries.status,
    })
    .from(webhookDeliveries)
    .where(inJsonList(webhookDeliveries.id, deliveryIds))
    .all();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * The statement that records one attempt.
 *
 * @param at start of the attempt, ms since the epoch.
 * @param durationMs how long it took, ms.
 */
export function attemptStatement(
  db: Database,
  delivery: DeliveryContext,
  requestId: string,
  at: number,
  durationMs: number,
  result: AttemptResult,
): BatchItem<"sqlite"> {
  return db.insert(webhookAttempts).values({
    companyId: delivery.companyId,
    deliveryId: delivery.id,
    requestId,
    at,
    durationMs,
    statusCode: result.statusCode,
    error: result.error,
  });
}

/** Where a delivery stands after an attempt (or a deleted registration). */
export interface DeliveryProgress {
  status: "pending" | "delivered" | "failed";
  /** Rounds completed. */
  rounds: number;
  /** Attempts made in the current round (0 once a round ended). */
  attemptsInRound: number;
  /** When the next attempt is due, ms since the epoch; null when none follows. */
  nextAttemptAt: number | null;
}

/**
 * The write that records where a delivery stands after an attempt, guarded on the
 * delivery still being pending (a duplicate must not overwrite an outcome).
 */
export function progressStatement(
  db: Database,
  deliveryId: string,
  progress: DeliveryProgress,
): BatchItem<"sqlite"> {
  return db
    .update(webhookDeliveries)
    .set({ ...progress, updatedAt: Date.now() })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")));
}
