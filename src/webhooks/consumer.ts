/**
 * The Queue consumer: one message = one delivery; one handling of a message =
 * one attempt. The consumer never sleeps: every wait is a Queue delay, so a
 * batch takes as long as its slowest single attempt (at most the 10 s limit)
 * and a failing endpoint never holds back the other messages of its batch, nor
 * the batches behind it.
 *
 * docs/webhooks.md: a round is "up to 3 attempts in quick succession with
 * exponential backoff" (the spec's words): attempts at 0 s, then 1 s, then
 * 2 s; a `Retry-After` of at most 10 s replaces the wait, a longer one ends the
 * round. Each wait inside a round is a new message for the delivery, sent with
 * that delay (all those of a batch in one `sendBatch`), the handled message
 * being acked; the wait before the next round is `message.retry({ delaySeconds })`
 * of the message. (Retrying for the waits inside a round too would work the
 * same, but local Queues (Miniflare) log every retried message through the
 * loopback to wrangler, one awaited call after another between two batches:
 * with an endpoint failing, that was most of the local consumer's time,
 * bench/webhooks-results.md.) An attempt is one signed POST with a 10 s limit
 * covering the DNS-over-HTTPS check, the connection and the response,
 * `redirect: "manual"`. 2XX = delivered; time-out, network error, 408, 429, 5XX
 * = retryable; 3XX and any other 4XX, and a destination that breaks the
 * endpoint rules = failed for good. A failed round is retried through the
 * Queue after 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h (plus up to 10 %
 * jitter, capped at the Queues maximum delay of 24 h: Queues limits,
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
 * D1 round trips per Queue batch, not per message: one read loads every
 * delivery of the batch (`loadDeliveries`), and the attempts and outcomes are
 * written by group commit (`GroupCommit`): the writes of the attempts that end
 * while no write is in flight go out at once as one `db.batch`, the writes of
 * those that end meanwhile as the next one. So a batch of fast endpoints costs
 * about 2 round trips instead of 2 to 3 per message, and a slow endpoint never
 * holds back the record of another's attempt: each message is acked or retried
 * once its own writes have committed. Two messages of the same delivery in one
 * batch (the sweeper re-sent a late message) make one attempt; the other
 * message is acked.
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
import type { BatchItem } from "drizzle-orm/batch";
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

/** Most messages in one `sendBatch` call (a Queues limit). */
const SEND_BATCH_MAX = 100;

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

/**
 * Every delivery of a batch, in one query (one D1 round trip for the batch).
 *
 * @param deliveryIds the deliveries of the batch's messages (one bound
 *   parameter for the whole list: D1 allows at most 100 per statement).
 * @returns the deliveries found, by id (an unknown id is absent).
 */
async function loadDeliveries(
  db: Database,
  deliveryIds: readonly string[],
): Promise<Map<string, DeliveryContext>> {
  if (deliveryIds.length === 0) return new Map();
  const rows = await db
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
    .where(
      sql`${webhookDeliveries.id} IN (SELECT value FROM json_each(${JSON.stringify(deliveryIds)}))`,
    )
    .all();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * Group commit: items submitted while a call is in flight go out together in
 * the next call, as soon as the one in flight has ended. A submitter waits
 * only for the call holding its own items, never for another message's
 * attempt. The consumer uses two: the D1 writes of attempts and outcomes (one
 * `db.batch`, one transaction), and the messages of the next attempts of
 * rounds (one `sendBatch`).
 *
 * A failed call fails every submission it held; their messages take the error
 * path of the handler.
 */
class GroupCommit<T> {
  #queued: { items: T[]; done: (error?: unknown) => void }[] = [];
  #draining = false;

  /**
   * @param run sends one group (never empty).
   * @param maxItems most items in one call; a submission is never split.
   */
  constructor(
    private readonly run: (items: [T, ...T[]]) => Promise<unknown>,
    private readonly maxItems = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Sends `items`, in order, in one call shared with other submissions.
   *
   * @throws what `run` throws for the call that held them.
   */
  submit(items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#queued.push({
        items,
        done: (error) => (error === undefined ? resolve() : reject(error)),
      });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    // One macrotask turn: the attempts answered at the same moment join the first call.
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (this.#queued.length > 0) {
      let count = 0;
      let take = 0;
      for (const q of this.#queued) {
        if (take > 0 && count + q.items.length > this.maxItems) break;
        count += q.items.length;
        take += 1;
      }
      const group = this.#queued.splice(0, take);
      const [first, ...rest] = group.flatMap((g) => g.items);
      try {
        if (first !== undefined) await this.run([first, ...rest]);
        for (const g of group) g.done();
      } catch (error) {
        for (const g of group) g.done(error ?? new Error("group call failed"));
      }
    }
    this.#draining = false;
  }
}

/** The two group commits of a Queue batch. */
interface BatchIo {
  /** Writes of attempts and outcomes: one `db.batch` per group. */
  writes: GroupCommit<BatchItem<"sqlite">>;
  /** Messages of the next attempts of rounds: one `sendBatch` per group. */
  sends: GroupCommit<MessageSendRequest<WebhookMessage>>;
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
 * The write that records the end of a delivery or of a round, guarded on the
 * delivery still being pending (a duplicate message must not overwrite an
 * outcome).
 *
 * `updated_at` opens the next round (see the module comment): it is set after
 * the last attempt's `at`, so that attempt is not counted in the next round.
 *
 * @param lastAttemptAt `at` of the attempt that ended the round, ms since the epoch.
 */
function outcomeStatement(
  db: Database,
  deliveryId: string,
  status: "pending" | "delivered" | "failed",
  rounds: number,
  lastAttemptAt: number | null,
): BatchItem<"sqlite"> {
  const updatedAt = Math.max(Date.now(), (lastAttemptAt ?? 0) + 1);
  return db
    .update(webhookDeliveries)
    .set({ status, rounds, updatedAt })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.status, "pending")));
}

/** What to do with the message once its attempt is recorded. */
type Next =
  | { kind: "ack" }
  /** The next attempt of the round: a new message after `delaySeconds`, this one acked. */
  | { kind: "next-attempt"; delaySeconds: number }
  /** The next round: this message retried after `delaySeconds`. */
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
 * One attempt of a pending delivery, recorded (the attempt row and, at the end
 * of the delivery or of a round, the outcome, in one transaction), and what
 * follows it: the end of the delivery, the next attempt of the round, or the
 * next round.
 *
 * @throws what D1 throws for the write.
 */
async function attemptAndDecide(
  db: Database,
  io: BatchIo,
  delivery: DeliveryContext,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<Next> {
  const requestId = crypto.randomUUID();
  const at = Date.now();
  const result = await attempt(delivery, requestId, urlOptions, options);
  const statements: BatchItem<"sqlite">[] = [
    db.insert(webhookAttempts).values({
      companyId: delivery.companyId,
      deliveryId: delivery.id,
      requestId,
      at,
      durationMs: Date.now() - at,
      statusCode: result.statusCode,
      error: result.error,
    }),
  ];
  const next = decide(db, delivery, result, at, options, statements);
  await io.writes.submit(statements);
  return next;
}

/**
 * What follows an attempt; appends to `statements` the outcome to record, if any.
 *
 * @param at `at` of the attempt, ms since the epoch.
 */
function decide(
  db: Database,
  delivery: DeliveryContext,
  result: AttemptResult,
  at: number,
  options: ConsumerOptions,
  statements: BatchItem<"sqlite">[],
): Next {
  if (result.verdict !== "retryable") {
    statements.push(outcomeStatement(db, delivery.id, result.verdict, delivery.rounds + 1, at));
    return { kind: "ack" };
  }
  const nextIndex = delivery.attemptsInRound + 1;
  const retryAfter = result.retryAfterSeconds;
  const nextDelay = options.attemptDelaysSeconds[nextIndex];
  if (
    nextDelay !== undefined &&
    (retryAfter === null || retryAfter <= options.maxInRoundRetryAfterSeconds)
  ) {
    // The round goes on: the wait is a new message's delay, nothing to record.
    return { kind: "next-attempt", delaySeconds: retryAfter ?? nextDelay };
  }
  const rounds = delivery.rounds + 1;
  if (rounds >= maxRounds(options)) {
    statements.push(outcomeStatement(db, delivery.id, "failed", rounds, at));
    return { kind: "dead-letter" };
  }
  statements.push(outcomeStatement(db, delivery.id, "pending", rounds, at));
  return { kind: "retry", delaySeconds: nextRoundDelaySeconds(rounds, retryAfter, options) };
}

/** The delivery id of a message, or undefined when its body is not a `WebhookMessage`. */
function deliveryIdOf(message: Message<WebhookMessage>): string | undefined {
  const body: unknown = message.body;
  if (typeof body !== "object" || body === null || !("deliveryId" in body)) return undefined;
  return typeof body.deliveryId === "string" ? body.deliveryId : undefined;
}

/**
 * Handles one message of a well-formed body: skips a delivery that is no
 * longer pending (a duplicate message), makes one attempt, records it and the
 * outcome, and acks or retries the message.
 *
 * @param delivery the message's delivery as the batch's read found it, or
 *   undefined when it does not exist.
 */
async function handleMessage(
  message: Message<WebhookMessage>,
  env: OutboxBindings,
  db: Database,
  io: BatchIo,
  delivery: DeliveryContext | undefined,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<void> {
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
    await io.writes.submit([outcomeStatement(db, delivery.id, "failed", delivery.rounds, null)]);
    message.ack();
    return;
  }
  const next = await attemptAndDecide(db, io, delivery, urlOptions, options);
  if (next.kind === "ack") message.ack();
  else if (next.kind === "next-attempt") {
    const body: WebhookMessage = { deliveryId: delivery.id };
    try {
      await io.sends.submit([{ body, contentType: "json", delaySeconds: next.delaySeconds }]);
      message.ack();
    } catch {
      // The Queue refused the new message: wait through this one instead.
      await retryOrContinue(message, env, delivery.id, next.delaySeconds, options);
    }
  } else if (next.kind === "retry") {
    await retryOrContinue(message, env, delivery.id, next.delaySeconds, options);
  } else if (message.attempts >= options.maxMessageDeliveries) {
    // Past max_retries, a retry moves the message to the dead-letter queue.
    message.retry();
  } else {
    message.retry({ delaySeconds: 0 });
  }
}

/** Logs a message whose handling threw and retries it after 60 s (or continues it when out of budget). */
async function retryAfterError(
  message: Message<WebhookMessage>,
  env: OutboxBindings,
  options: ConsumerOptions,
  error: unknown,
): Promise<void> {
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

/**
 * The `queue` handler of the Worker.
 *
 * @param overrides timing to change (tests shorten the 10 s limit); the rest keeps the contract's.
 * @returns a handler that reads the batch's deliveries in one query, then
 *   processes its messages concurrently, one attempt each, their writes group
 *   committed; a message whose handling throws (D1 unavailable, ...) is retried
 *   after 60 s (or continued by a new message when out of budget).
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
    const io: BatchIo = {
      writes: new GroupCommit((statements) => db.batch(statements)),
      sends: new GroupCommit((messages) => env.WEBHOOK_QUEUE.sendBatch(messages), SEND_BATCH_MAX),
    };
    // The first message of each delivery makes its attempt; a second one in the
    // same batch (a duplicate) is acked, since the first carries the delivery on.
    const owners = new Map<string, Message<WebhookMessage>>();
    for (const message of batch.messages) {
      const deliveryId = deliveryIdOf(message);
      if (deliveryId !== undefined && !owners.has(deliveryId)) owners.set(deliveryId, message);
    }
    // Undefined when the read failed: every message then takes the error path.
    let deliveries: Map<string, DeliveryContext> | undefined;
    let loadError: unknown;
    try {
      deliveries = await loadDeliveries(db, [...owners.keys()]);
    } catch (error) {
      loadError = error;
    }
    await Promise.all(
      batch.messages.map(async (message) => {
        const deliveryId = deliveryIdOf(message);
        if (deliveryId === undefined) {
          console.error(
            JSON.stringify({ level: "error", msg: "malformed webhook message", id: message.id }),
          );
          message.ack();
          return;
        }
        if (owners.get(deliveryId) !== message) {
          message.ack();
          return;
        }
        try {
          if (deliveries === undefined) throw loadError;
          const delivery = deliveries.get(deliveryId);
          await handleMessage(message, env, db, io, delivery, urlOptions, options);
        } catch (error) {
          await retryAfterError(message, env, options, error);
        }
      }),
    );
  };
}
