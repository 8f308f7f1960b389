/**
 * The Queue consumer: one message = one delivery; one handling of the message =
 * one attempt. The consumer never sleeps: every wait is a
 * `message.retry({ delaySeconds })`, so a batch takes as long as its slowest
 * single attempt (at most the 10 s limit) and a failing endpoint never holds
 * back the other messages of its batch, nor the batches behind it.
 *
 * docs/webhooks.md: a round is "up to 3 attempts in quick succession with
 * exponential backoff" (the spec's words): attempts at 0 s, then 1 s, then
 * 2 s, each wait being a Queue retry of that delay; a `Retry-After` of at most
 * 10 s replaces the wait, a longer one ends the round. An attempt is one signed
 * POST with a 10 s limit covering the DNS-over-HTTPS check, the connection and
 * the response, `redirect: "manual"`. 2XX = delivered; time-out, network
 * error, 408, 429, 5XX = retryable; 3XX and any other 4XX, and a destination
 * that breaks the endpoint rules = failed for good. A failed round is retried
 * through the Queue after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h (plus up to
 * 10 % jitter, capped at the Queues maximum delay of 24 h: Queues limits,
 * "delaySeconds (when sending or retrying)", which Miniflare enforces too);
 * after the 8th round the delivery is marked failed, then the message goes to
 * the dead-letter queue.
 *
 * The message body cannot change on retry (Queues' `retry` takes only
 * `delaySeconds`), so where a message stands is read from D1: `rounds` of the
 * delivery is the rounds completed, and the attempts of the current round are
 * the recorded attempts (`webhook_attempts`) made at or after the delivery's
 * `updated_at`, which is set when the delivery is (re)sent to the Queue and
 * when a round ends, and not between the attempts of a round.
 *
 * Queue budget: 8 rounds x 3 attempts = 24 handlings, so `max_retries = 23` in
 * wrangler.toml (MAX_MESSAGE_DELIVERIES = 24). A message that runs out of
 * budget while its delivery is still pending (handlings lost to errors or
 * shared with a duplicate message) is continued by a new message instead of
 * being dead-lettered; a series that ended with fewer handlings (rounds ended
 * early by a long `Retry-After`) spends the rest with immediate retries, so
 * that the message still reaches the dead-letter queue, after the delivery is
 * marked failed.
 */
import { and, eq, sql } from "drizzle-orm";
import { createDb, type Database } from "../db/client";
import {
  companies,
  webhookAttempts,
  webhookDeliveries,
  webhookEvents,
  webhooks,
} from "../db/schema";
import { type Env, readSettings } from "../env";
import { type OutboxBindings, ROUND_DELAYS_SECONDS, type WebhookMessage } from "./outbox";
import { signatureHeader } from "./signing";
import { checkEndpoint, type UrlSafetyOptions } from "./url-safety";

/** Timing of rounds and attempts; the defaults are the contract's. */
export interface ConsumerOptions {
  /** Time limit of one attempt, DNS included, ms. */
  attemptTimeoutMs: number;
  /**
   * Delay before each attempt of a round, seconds (the first is 0): the
   * `delaySeconds` of the Queue retry that leads to it. Its length is the
   * number of attempts in a round.
   */
  attemptDelaysSeconds: readonly number[];
  /** Longest `Retry-After` honoured inside a round, seconds; a longer one ends the round. */
  maxInRoundRetryAfterSeconds: number;
  /** Delay before round 2, 3, ... through the Queue, seconds. */
  roundDelaysSeconds: readonly number[];
  /** The Queues maximum `delaySeconds`. */
  maxDelaySeconds: number;
  /** Largest jitter, as a fraction of the delay. */
  jitter: number;
  /** Source of jitter, in [0, 1). */
  random: () => number;
  /**
   * Handlings of one message before the Queue moves it to the dead-letter
   * queue: `max_retries + 1` of the consumer in wrangler.toml.
   */
  maxMessageDeliveries: number;
}

/** `max_retries + 1` of every `[[queues.consumers]]` in wrangler.toml: 8 rounds x 3 attempts. */
export const MAX_MESSAGE_DELIVERIES = 24;

export const DEFAULT_CONSUMER_OPTIONS: ConsumerOptions = {
  attemptTimeoutMs: 10_000,
  attemptDelaysSeconds: [0, 1, 2],
  maxInRoundRetryAfterSeconds: 10,
  roundDelaysSeconds: ROUND_DELAYS_SECONDS,
  maxDelaySeconds: 86_400,
  jitter: 0.1,
  random: Math.random,
  maxMessageDeliveries: MAX_MESSAGE_DELIVERIES,
};

/** Rounds of a delivery: the first plus one per scheduled delay. */
export function maxRounds(options: ConsumerOptions = DEFAULT_CONSUMER_OPTIONS): number {
  return 1 + options.roundDelaysSeconds.length;
}

/** The error recorded for an attempt refused by the endpoint rules. */
export const UNSAFE_DESTINATION = "unsafe destination";

type Verdict = "delivered" | "retryable" | "failed";

interface AttemptResult {
  verdict: Verdict;
  statusCode: number | null;
  error: string | null;
  /** `Retry-After` of the response, seconds, when given. */
  retryAfterSeconds: number | null;
}

/** What a round needs about its delivery. */
interface DeliveryContext {
  id: string;
  companyId: number;
  status: "pending" | "delivered" | "failed";
  /** Rounds completed. */
  rounds: number;
  /** Attempts already made in the current round (0 = this attempt opens it). */
  attemptsInRound: number;
  url: string;
  webhookDeletedAt: number | null;
  eventId: string;
  eventType: string;
  body: string;
  eventTimestamp: number;
  webhookSecret: string;
  previousWebhookSecret: string | null;
  previousWebhookSecretExpiresAt: number | null;
}

/**
 * Parses `Retry-After` (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date.
 *
 * @param value the header value, or null.
 * @param now ms since the epoch (for an HTTP-date).
 * @returns whole seconds to wait (>= 0), or null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The verdict of an HTTP status: 2XX delivered; 408, 429, 5XX retryable; 3XX
 * (redirects are not followed) and any other status failed for good.
 */
export function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return "delivered";
  if (status === 408 || status === 429 || status >= 500) return "retryable";
  return "failed";
}

/**
 * The delay before the next round, seconds: the schedule's delay for the
 * rounds done, with up to `jitter` added, raised to a long `Retry-After`, and
 * capped at the Queues maximum.
 *
 * @param roundsDone rounds completed, 1 or more.
 * @param retryAfterSeconds the last response's `Retry-After`, if any.
 */
export function nextRoundDelaySeconds(
  roundsDone: number,
  retryAfterSeconds: number | null,
  options: ConsumerOptions = DEFAULT_CONSUMER_OPTIONS,
): number {
  const schedule = options.roundDelaysSeconds;
  const base = schedule[Math.min(roundsDone, schedule.length) - 1] ?? 0;
  const jittered = Math.round(base * (1 + options.jitter * options.random()));
  return Math.min(options.maxDelaySeconds, Math.max(jittered, retryAfterSeconds ?? 0));
}

async function loadDelivery(
  db: Database,
  deliveryId: string,
): Promise<DeliveryContext | undefined> {
  return db
    .select({
      id: webhookDeliveries.id,
      companyId: webhookDeliveries.companyId,
      status: webhookDeliveries.status,
      rounds: webhookDeliveries.rounds,
      // The round began at `updated_at` (see the module comment); the index
      // webhook_attempts_delivery_idx (delivery_id, at) answers this.
      attemptsInRound: sql<number>`(SELECT count(*) FROM ${webhookAttempts} a
        WHERE a.delivery_id = ${webhookDeliveries.id} AND a.at >= ${webhookDeliveries.updatedAt})`,
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
    .where(eq(webhookDeliveries.id, deliveryId))
    .get();
}

/** One attempt: the endpoint rules, then the signed POST, within one time limit. */
async function attempt(
  delivery: DeliveryContext,
  requestId: string,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<AttemptResult> {
  const signal = AbortSignal.timeout(options.attemptTimeoutMs);
  const none = { statusCode: null, retryAfterSeconds: null };
  try {
    const check = await checkEndpoint(delivery.url, urlOptions, signal);
    if (check.kind === "refused") return { ...none, verdict: "failed", error: UNSAFE_DESTINATION };
    if (check.kind === "unresolved") return { ...none, verdict: "retryable", error: check.message };
    const response = await fetch(delivery.url, {
      method: "POST",
      redirect: "manual",
      signal,
      body: delivery.body,
      headers: {
        "Content-Type": "application/json",
        "X-Service-Signature": await signatureHeader(delivery, delivery.body, Date.now()),
        "X-Service-Event-Type": delivery.eventType,
        "X-Service-Event-Id": delivery.eventId,
        "X-Service-Timestamp": new Date(delivery.eventTimestamp).toISOString(),
        "X-Service-Request-Id": requestId,
      },
    });
    // Only the status is read; the body is dropped so the connection is freed.
    await response.body?.cancel().catch(() => undefined);
    const verdict = verdictOf(response.status);
    return {
      verdict,
      statusCode: response.status,
      error: response.status >= 300 && response.status < 400 ? "redirect not followed" : null,
      retryAfterSeconds: parseRetryAfter(response.headers.get("retry-after"), Date.now()),
    };
  } catch (error) {
    const timedOut = signal.aborted || (error instanceof Error && error.name === "TimeoutError");
    const message = error instanceof Error ? error.message : String(error);
    return {
      ...none,
      verdict: "retryable",
      error: timedOut ? "timeout" : `network error: ${message}`,
    };
  }
}

/**
 * Records the end of a delivery or of a round, guarded on the delivery still
 * being pending (a duplicate message must not overwrite an outcome).
 *
 * `updated_at` opens the next round (see the module comment): it is set after
 * the last attempt's `at`, so that attempt is not counted in the next round.
 *
 * @param lastAttemptAt `at` of the attempt that ended the round, ms since the epoch.
 */
async function setOutcome(
  db: Database,
  deliveryId: string,
  status: "pending" | "delivered" | "failed",
  rounds: number,
  lastAttemptAt: number | null,
): Promise<void> {
  const updatedAt = Math.max(Date.now(), (lastAttemptAt ?? 0) + 1);
  await db
    .update(webhookDeliveries)
    .set({ status, rounds, updatedAt })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")));
}

/** What to do with the message once its attempt is recorded. */
type Next =
  | { kind: "ack" }
  | { kind: "retry"; delaySeconds: number }
  /** Retried past the budget: to the dead-letter queue. */
  | { kind: "dead-letter" };

/**
 * Retries a message after `delaySeconds`, or, when the message has used its
 * whole budget (so that a retry would dead-letter a pending delivery), sends a
 * new message for the delivery with that delay and acks this one.
 */
async function retryOrContinue(
  message: Message<WebhookMessage>,
  env: OutboxBindings,
  deliveryId: string,
  delaySeconds: number,
  options: ConsumerOptions,
): Promise<void> {
  if (message.attempts < options.maxMessageDeliveries) {
    message.retry({ delaySeconds });
    return;
  }
  // sendBatch, as the outbox sends: one way in for every message of a delivery.
  await env.WEBHOOK_QUEUE.sendBatch([{ body: { deliveryId }, contentType: "json", delaySeconds }]);
  message.ack();
}

/**
 * One attempt of a pending delivery, recorded, and what follows it: the end
 * of the delivery, the next attempt of the round, or the next round.
 */
async function attemptAndDecide(
  db: Database,
  delivery: DeliveryContext,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<Next> {
  const requestId = crypto.randomUUID();
  const at = Date.now();
  const result = await attempt(delivery, requestId, urlOptions, options);
  await db.insert(webhookAttempts).values({
    companyId: delivery.companyId,
    deliveryId: delivery.id,
    requestId,
    at,
    durationMs: Date.now() - at,
    statusCode: result.statusCode,
    error: result.error,
  });
  if (result.verdict !== "retryable") {
    await setOutcome(db, delivery.id, result.verdict, delivery.rounds + 1, at);
    return { kind: "ack" };
  }
  const nextIndex = delivery.attemptsInRound + 1;
  const retryAfter = result.retryAfterSeconds;
  const nextDelay = options.attemptDelaysSeconds[nextIndex];
  if (
    nextDelay !== undefined &&
    (retryAfter === null || retryAfter <= options.maxInRoundRetryAfterSeconds)
  ) {
    // The round goes on: the wait is a Queue retry, nothing to record.
    return { kind: "retry", delaySeconds: retryAfter ?? nextDelay };
  }
  const rounds = delivery.rounds + 1;
  if (rounds >= maxRounds(options)) {
    await setOutcome(db, delivery.id, "failed", rounds, at);
    return { kind: "dead-letter" };
  }
  await setOutcome(db, delivery.id, "pending", rounds, at);
  return { kind: "retry", delaySeconds: nextRoundDelaySeconds(rounds, retryAfter, options) };
}

/** The delivery id of a message, or undefined when its body is not a `WebhookMessage`. */
function deliveryIdOf(message: Message<WebhookMessage>): string | undefined {
  const body: unknown = message.body;
  if (typeof body !== "object" || body === null || !("deliveryId" in body)) return undefined;
  return typeof body.deliveryId === "string" ? body.deliveryId : undefined;
}

/**
 * Handles one message: skips a delivery that is no longer pending (a
 * duplicate message), makes one attempt, records it and the outcome, and acks
 * or retries the message.
 */
async function handleMessage(
  message: Message<WebhookMessage>,
  env: OutboxBindings,
  db: Database,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<void> {
  const deliveryId = deliveryIdOf(message);
  if (deliveryId === undefined) {
    console.error(
      JSON.stringify({ level: "error", msg: "malformed webhook message", id: message.id }),
    );
    message.ack();
    return;
  }
  const delivery = await loadDelivery(db, deliveryId);
  if (delivery?.status !== "pending") {
    if (delivery?.status === "failed" && delivery.rounds >= maxRounds(options)) {
      // Every round failed, with fewer handlings than the budget (rounds ended
      // early by a long Retry-After): spend the rest at once, so that the
      // message still reaches the dead-letter queue (the last retry moves it).
      if (message.attempts < options.maxMessageDeliveries) message.retry({ delaySeconds: 0 });
      else message.retry();
      return;
    }
    message.ack();
    return;
  }
  if (delivery.webhookDeletedAt !== null) {
    // The registration was deleted while the delivery waited: nobody to deliver to.
    await setOutcome(db, delivery.id, "failed", delivery.rounds, null);
    message.ack();
    return;
  }
  const next = await attemptAndDecide(db, delivery, urlOptions, options);
  if (next.kind === "ack") message.ack();
  else if (next.kind === "retry") {
    await retryOrContinue(message, env, delivery.id, next.delaySeconds, options);
  } else if (message.attempts >= options.maxMessageDeliveries) {
    // Past max_retries, a retry moves the message to the dead-letter queue.
    message.retry();
  } else {
    message.retry({ delaySeconds: 0 });
  }
}

/**
 * The `queue` handler of the Worker.
 *
 * @param overrides timing to change (tests shorten the 10 s limit); the rest keeps the contract's.
 * @returns a handler that processes the messages of a batch concurrently, one
 *   attempt each; a message whose handling throws (D1 unavailable, ...) is
 *   retried after 60 s (or continued by a new message when out of budget).
 */
export function webhookQueueHandler(overrides: Partial<ConsumerOptions> = {}) {
  const options: ConsumerOptions = { ...DEFAULT_CONSUMER_OPTIONS, ...overrides };
  return async function consumeWebhookBatch(
    batch: MessageBatch<WebhookMessage>,
    env: Env,
  ): Promise<void> {
    const settings = readSettings(env);
    const urlOptions: UrlSafetyOptions = {
      environment: settings.environment,
      dohUrl: settings.webhooks.dohUrl,
      exemptOrigins: settings.webhooks.exemptOrigins,
    };
    const db = createDb(env.DB);
    await Promise.all(
      batch.messages.map(async (message) => {
        try {
          await handleMessage(message, env, db, urlOptions, options);
        } catch (error) {
          console.error(
            JSON.stringify({
              level: "error",
              msg: "webhook message failed",
              id: message.id,
              error: String(error),
            }),
          );
          const deliveryId = deliveryIdOf(message);
          if (deliveryId !== undefined) {
            await retryOrContinue(message, env, deliveryId, 60, options).catch(() =>
              message.retry({ delaySeconds: 60 }),
            );
          } else message.retry({ delaySeconds: 60 });
        }
      }),
    );
  };
}
