/**
 * Webhook registrations, the outbox of events, deliveries and their attempts. Part of the data model (src/db/schema.ts).
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { companies } from "./tenancy";
import { createdAt, updatedAt } from "./timestamps";

/**
 * A webhook registration: one URL for one event type (and, for the threshold event types of a
 * stop, the thresholds it is told of).
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    url: text("url").notNull(),
    eventType: text("event_type").notNull(),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
    /**
     * The thresholds, in minutes, of a threshold event type (`MachineStopLongerThan`,
     * `MachineStopReasonMissing`): a JSON array of distinct integers, ascending; null for the
     * other types (src/webhooks/stop-alert-events.ts).
     */
    thresholdsMinutes: text("thresholds_minutes", { mode: "json" }).$type<number[]>(),
  },
  (t) => [index("webhooks_company_idx").on(t.companyId, t.eventType)],
);

/** An event, written in the same batch as the change it reports (the outbox). */
export const webhookEvents = sqliteTable(
  "webhook_events",
  {
    /** `eventId`, identical across retries and replays. */
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    eventType: text("event_type").notNull(),
    /** The exact body sent, so that every attempt signs the same bytes. */
    body: text("body").notNull(),
    /** `eventTimestamp`: when the event was queued, ms since the epoch. */
    eventTimestamp: integer("event_timestamp").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("webhook_events_company_idx").on(t.companyId, t.createdAt)],
);

/** One event for one registration; one Queue message each. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    /** When the Queue message was last sent; null = not sent yet (the sweeper sends it). */
    enqueuedAt: integer("enqueued_at"),
    /** Rounds completed so far. */
    rounds: integer("rounds").notNull().default(0),
    /**
     * Attempts made in the current round (0 = the next attempt opens it), written with each
     * attempt: where the delivery stands, whatever re-sends or replays touch.
     */
    attemptsInRound: integer("attempts_in_round").notNull().default(0),
    /**
     * When the next attempt is due (ms), as the retry policy scheduled it after the last
     * attempt (`Retry-After` and jitter included); null before the first attempt and once the
     * delivery ended. The outbox sweeper reads it (src/webhooks/retry-policy.ts).
     */
    nextAttemptAt: integer("next_attempt_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
    index("webhook_deliveries_pending_idx").on(t.status, t.enqueuedAt),
  ],
);

/** Every attempt of a delivery. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id").notNull(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    requestId: text("request_id").notNull(),
    at: integer("at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.at)],
);
