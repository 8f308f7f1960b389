/**
 * From the outbox to the Queue: one message per delivery, sent after the
 * batch that wrote the delivery has committed, and `enqueued_at` set once it
 * is sent. A delivery whose message was never sent (the Worker stopped between
 * the commit and the send, or the send failed) keeps `enqueued_at` null; the
 * sweeper (cron trigger) sends it.
 */
import { and, asc, eq, isNull, lte, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { webhookDeliveries } from "../db/schema";

/** The body of a Queue message: the delivery to attempt. */
export interface WebhookMessage {
  deliveryId: string;
}

/** The bindings the outbox needs. */
export interface OutboxBindings {
  WEBHOOK_QUEUE: Queue<WebhookMessage>;
}

/** Most messages in one `sendBatch` call (a Queues limit). */
const SEND_BATCH_SIZE = 100;
/** Age after which the sweeper sends a delivery whose message was not sent, ms. */
export const SWEEP_AFTER_MS = 30_000;
/** Most deliveries one sweep sends (the next run takes the rest). */
const SWEEP_LIMIT = 1000;

/**
 * Sends one Queue message per delivery and records `enqueued_at`.
 *
 * Sent first, recorded second: a crash in between sends the message again
 * later (a duplicate, which the consumer skips once the delivery is no longer
 * pending), never loses it.
 *
 * @param env the Queue binding.
 * @param db Drizzle client.
 * @param deliveryIds deliveries to send.
 * @param now ms since the epoch, stored as `enqueued_at`.
 * @throws whatever `sendBatch` or D1 throw.
 */
export async function sendDeliveries(
  env: OutboxBindings,
  db: Database,
  deliveryIds: readonly string[],
  now: number,
): Promise<void> {
  for (let i = 0; i < deliveryIds.length; i += SEND_BATCH_SIZE) {
    const chunk = deliveryIds.slice(i, i + SEND_BATCH_SIZE);
    await env.WEBHOOK_QUEUE.sendBatch(
      chunk.map((deliveryId) => ({ body: { deliveryId }, contentType: "json" as const })),
    );
    // One bound parameter for the whole list (D1 allows at most 100 per statement).
    await db
      .update(webhookDeliveries)
      .set({ enqueuedAt: now, updatedAt: now })
      .where(
        sql`${webhookDeliveries.id} IN (SELECT value FROM json_each(${JSON.stringify(chunk)}))`,
      );
  }
}

/**
 * Sends the messages of an event's deliveries, once the batch that wrote them
 * has committed. Never throws: a failure is logged and left to the sweeper,
 * because the change itself is already saved.
 *
 * @param env the Queue binding.
 * @param db Drizzle client.
 * @param eventId the event (`classificationEventStatements` or `pingEventStatements`).
 */
export async function dispatchEvent(
  env: OutboxBindings,
  db: Database,
  eventId: string,
): Promise<void> {
  try {
    const rows = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.eventId, eventId),
          eq(webhookDeliveries.status, "pending"),
          isNull(webhookDeliveries.enqueuedAt),
        ),
      )
      .all();
    if (rows.length === 0) return;
    await sendDeliveries(
      env,
      db,
      rows.map((r) => r.id),
      Date.now(),
    );
  } catch (error) {
    console.error(
      JSON.stringify({
        level: "error",
        msg: "webhook dispatch failed",
        eventId,
        error: String(error),
      }),
    );
  }
}

/**
 * The sweeper: sends pending deliveries whose message was never sent and that
 * were written (or reset by a replay) at least 30 s ago.
 *
 * @param env the Queue binding.
 * @param db Drizzle client.
 * @param now ms since the epoch.
 * @returns how many deliveries were sent.
 */
export async function sweepOutbox(env: OutboxBindings, db: Database, now: number): Promise<number> {
  const rows = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        isNull(webhookDeliveries.enqueuedAt),
        lte(webhookDeliveries.updatedAt, now - SWEEP_AFTER_MS),
      ),
    )
    .orderBy(asc(webhookDeliveries.updatedAt))
    .limit(SWEEP_LIMIT)
    .all();
  await sendDeliveries(
    env,
    db,
    rows.map((r) => r.id),
    now,
  );
  return rows.length;
}
