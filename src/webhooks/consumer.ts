/**
 * The Queue consumer: one message = one delivery = one round of attempts.
 *
 * docs/webhooks.md: a round is up to 3 attempts at 0 s, 1 s, 2 s (a
 * `Retry-After` of at most 10 s replaces the wait; a longer one ends the
 * round). An attempt is one signed POST with a 10 s limit covering the
 * DNS-over-HTTPS check, the connection and the response, `redirect: "manual"`.
 * 2XX = delivered; time-out, network error, 408, 429, 5XX = retryable; 3XX and
 * any other 4XX, and a destination that breaks the endpoint rules = failed for
 * good. A failed round is retried through the Queue after 1 min, 5 min,
 * 30 min, 2 h, 6 h, 12 h, 24 h (capped at the Queues maximum delay, 12 h, up
 * to 10 % jitter); after the 8th round the delivery is failed and the message
 * goes to the dead-letter queue (`max_retries = 7` in wrangler.toml). The
 * messages of a batch are handled concurrently, so one slow endpoint never
 * delays another.
 */
import { eq, sql } from "drizzle-orm";
import { createDb, type Database } from "../db/client";
import {
  companies,
  webhookAttempts,
  webhookDeliveries,
  webhookEvents,
  webhooks,
} from "../db/schema";
import { type Env, readSettings } from "../env";
import type { WebhookMessage } from "./outbox";
import { signatureHeader } from "./signing";
import { checkEndpoint, type UrlSafetyOptions } from "./url-safety";

/** Timing of rounds and attempts; the defaults are the contract's. */
export interface ConsumerOptions {
  /** Time limit of one attempt, DNS included, ms. */
  attemptTimeoutMs: number;
  /** Wait before each attempt of a round, ms (the first is 0). */
  attemptWaitsMs: readonly number[];
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
}

export const DEFAULT_CONSUMER_OPTIONS: ConsumerOptions = {
  attemptTimeoutMs: 10_000,
  attemptWaitsMs: [0, 1_000, 2_000],
  maxInRoundRetryAfterSeconds: 10,
  roundDelaysSeconds: [60, 300, 1_800, 7_200, 21_600, 43_200, 86_400],
  maxDelaySeconds: 43_200,
  jitter: 0.1,
  random: Math.random,
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
  rounds: number;
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

const sleep = (ms: number) =>
  ms <= 0 ? Promise.resolve() : new Promise<void>((resolve) => setTimeout(resolve, ms));

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
 * One round of up to `attemptWaitsMs.length` attempts, each recorded.
 *
 * @returns the last attempt's result.
 */
async function runRound(
  db: Database,
  delivery: DeliveryContext,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<AttemptResult> {
  let last: AttemptResult | undefined;
  for (const [index, scheduledWait] of options.attemptWaitsMs.entries()) {
    if (index > 0) {
      const retryAfter = last?.retryAfterSeconds ?? null;
      await sleep(retryAfter === null ? scheduledWait : retryAfter * 1000);
    }
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
    last = result;
    if (result.verdict !== "retryable") return result;
    if ((result.retryAfterSeconds ?? 0) > options.maxInRoundRetryAfterSeconds) return result;
  }
  if (!last) throw new Error("a round has at least one attempt");
  return last;
}

async function setOutcome(
  db: Database,
  deliveryId: string,
  status: "pending" | "delivered" | "failed",
  rounds: number,
): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status, rounds, updatedAt: sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)` })
    .where(eq(webhookDeliveries.id, deliveryId));
}

/**
 * Handles one message: skips a delivery that is no longer pending (a
 * duplicate message), runs a round, records the outcome, and acks or retries.
 */
async function handleMessage(
  message: Message<WebhookMessage>,
  db: Database,
  urlOptions: UrlSafetyOptions,
  options: ConsumerOptions,
): Promise<void> {
  const deliveryId =
    typeof message.body === "object" && message.body !== null ? message.body.deliveryId : undefined;
  if (typeof deliveryId !== "string") {
    console.error(
      JSON.stringify({ level: "error", msg: "malformed webhook message", id: message.id }),
    );
    message.ack();
    return;
  }
  const delivery = await loadDelivery(db, deliveryId);
  if (delivery?.status !== "pending") {
    message.ack();
    return;
  }
  if (delivery.webhookDeletedAt !== null) {
    // The registration was deleted while the delivery waited: nobody to deliver to.
    await setOutcome(db, delivery.id, "failed", delivery.rounds);
    message.ack();
    return;
  }
  const result = await runRound(db, delivery, urlOptions, options);
  const rounds = delivery.rounds + 1;
  if (result.verdict !== "retryable") {
    await setOutcome(db, delivery.id, result.verdict, rounds);
    message.ack();
    return;
  }
  if (rounds >= maxRounds(options)) {
    await setOutcome(db, delivery.id, "failed", rounds);
    // Past max_retries, a retry moves the message to the dead-letter queue. A
    // duplicate message that still has retries is simply acked.
    if (message.attempts >= maxRounds(options)) message.retry();
    else message.ack();
    return;
  }
  await setOutcome(db, delivery.id, "pending", rounds);
  message.retry({ delaySeconds: nextRoundDelaySeconds(rounds, result.retryAfterSeconds, options) });
}

/**
 * The `queue` handler of the Worker.
 *
 * @param overrides timing to change (tests shorten the 10 s limit); the rest keeps the contract's.
 * @returns a handler that processes the messages of a batch concurrently; a
 *   message whose handling throws (D1 unavailable, ...) is retried after 60 s.
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
          await handleMessage(message, db, urlOptions, options);
        } catch (error) {
          console.error(
            JSON.stringify({
              level: "error",
              msg: "webhook message failed",
              id: message.id,
              error: String(error),
            }),
          );
          message.retry({ delaySeconds: 60 });
        }
      }),
    );
  };
}
