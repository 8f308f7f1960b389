/**
 * From the outbox to the Queue: one message per delivery, sent after the
 * batch that wrote the delivery has committed, and `enqueued_at` set once it
 * is sent. A delivery whose message was never sent (the Worker stopped between
 * the commit and the send, or the send failed) keeps `enqueued_at` null; the
 * sweeper (cron trigger) sends it.
 */

import { and, asc, eq, isNull, lte, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { inJsonList } from "../db/json-list";
import { webhookDeliveries } from "../db/schema";
import { DEFAULT_STALLED_MARGIN_SECONDS } from "../env";
import { SECOND_MS } from "../time/units";

/** The body of a Queue message: the delivery to attempt. */
export interface WebhookMessage {
  deliveryId: string;
  /**
   * The delivery's company, which names the shard that holds it (src/db/shards.ts). Absent
   * from messages sent before companies were spread over shards: those are looked for in
   * every shard.
   */
  companyId?: number;
}

/** A delivery to send: its id and its company. */
interface DeliveryRef {
  id: string;
  companyId: number;
}

/** The bindings the outbox needs. */
export interface OutboxBindings {
  WEBHOOK_QUEUE: Queue<WebhookMessage>;
}

/** Most messages in one `sendBatch` call (a Queues limit). */
const SEND_BATCH_SIZE = 100;
/** Age after which the sweeper sends a delivery whose message was not sent, ms. */
const SWEEP_AFTER_MS = 30_000;
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
 * @param deliveries deliveries to send, with their company (the shard `db` is).
 * @param now ms since the epoch, stored as `enqueued_at`.
 * @throws whatever `sendBatch` or D1 throw.
 */
export async function sendDeliveries(
  env: OutboxBindings,
  db: Database,
  deliveries: readonly DeliveryRef[],
  now: number,
): Promise<void> {
  for (let i = 0; i < deliveries.length; i += SEND_BATCH_SIZE) {
    const refs = deliveries.slice(i, i + SEND_BATCH_SIZE);
    const chunk = refs.map((d) => d.id);
    await env.WEBHOOK_QUEUE.sendBatch(
      refs.map(({ id, companyId }) => ({
        body: { deliveryId: id, companyId },
        contentType: "json" as const,
      })),
    );
    // One bound parameter for the whole list (D1 allows at most 100 per statement).
    await db
      .update(webhookDeliveries)
      .set({ enqueuedAt: now, updatedAt: now })
      .where(inJsonList(webhookDeliveries.id, chunk));
  }
}

/** Options of {@link sweepOutbox}. */
interface SweepOptions {
  /**
   * Quiet time past a delivery's next scheduled handling after which its
   * message is taken for lost, ms (default `DEFAULT_STALLED_MARGIN_SECONDS`).
   */
  stalledMarginMs?: number;
}

/**
 * SQL for the latest instant a pending delivery may stay quiet: `stalledSince` of the
 * retry policy (the recorded next attempt, or the message's sending if later) plus the
 * stalled margin. The schedule is the deliverer's, as recorded, `Retry-After` and jitter
 * included; the sweeper derives none of its own. Later than that, its message was lost
 * (for example with a local `wrangler dev` that stopped: local Queues keep messages in
 * memory).
 */
function quietDeadlineSql(stalledMarginMs: number) {
  return sql`MAX(COALESCE(d.next_attempt_at, 0), d.enqueued_at) + CAST(${stalledMarginMs} AS INTEGER)`;
}

/**
 * The sweeper (cron trigger), for pending deliveries without a live message:
 *
 * - never sent: written (or reset by a replay) at least 30 s ago with `enqueued_at` null;
 * - sent but lost: quiet past their next scheduled handling (as the deliverer recorded it)
 *   by the stalled margin.
 *
 * Either is sent again. A message that was only late becomes a duplicate, which
 * delivery at least once allows (receivers deduplicate on `eventId`). The margin
 * trades the two: a short one re-sends sooner after a loss (a local Queue that
 * restarted) and duplicates more late messages; it should stay above a round's
 * longest quiet stretch (a 10 s attempt, then up to 10 s of `Retry-After`).
 *
 * @param env the Queue binding.
 * @param db Drizzle client.
 * @param now ms since the epoch.
 * @param options the stalled margin (ms, default ten minutes).
 * @returns how many deliveries were sent.
 * @throws whatever D1 or `sendBatch` throw.
 */
export async function sweepOutbox(
  env: OutboxBindings,
  db: Database,
  now: number,
  options: SweepOptions = {},
): Promise<number> {
  const stalledMarginMs = options.stalledMarginMs ?? DEFAULT_STALLED_MARGIN_SECONDS * SECOND_MS;
  const neverSent = await db
    .select({ id: webhookDeliveries.id, companyId: webhookDeliveries.companyId })
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
  const lost = await db.all<DeliveryRef>(
    sql`SELECT d.id AS id, d.company_id AS companyId FROM webhook_deliveries AS d
        WHERE d.status = 'pending' AND d.enqueued_at IS NOT NULL
          AND ${quietDeadlineSql(stalledMarginMs)} < CAST(${now} AS INTEGER)
        ORDER BY d.updated_at LIMIT ${SWEEP_LIMIT}`,
  );
  const refs = [...neverSent, ...lost];
  await sendDeliveries(env, db, refs, now);
  return refs.length;
}
