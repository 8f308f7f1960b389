/**
 * Helpers of the webhook tests: registrations, a "handling" (the consumer run
 * on chosen messages with `createMessageBatch` / `getQueueResult`, then the
 * deliverer of each registration run on what it holds), deliveries as the
 * operator lists them.
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { createDb } from "../../src/db/client";
import { shardBindings } from "../../src/db/shards";
import worker from "../../src/index";
import type { DeliveryStep } from "../../src/webhooks/deliver";
import { loadRoutes } from "../../src/webhooks/delivery-records";
import { endpointDeliverer, type RunOverrides } from "../../src/webhooks/endpoint-deliverer";
import type { RetryPolicy } from "../../src/webhooks/retry-policy";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";
import { operator, operatorJson } from "../harness";

export interface Webhook {
  id: string;
  name: string;
  url: string;
  eventType: string;
  createdAt: string;
}

export interface Attempt {
  requestId: string;
  at: string;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  status: "pending" | "delivered" | "failed";
  rounds: number;
  attemptsInRound: number;
  /** ISO 8601, or null before the first attempt and once the delivery ended. */
  nextAttemptAt: string | null;
  attempts: Attempt[];
}

/** Registers one webhook and returns it. */
export async function register(
  companyId: number,
  url: string,
  eventType = "MachineStopClassificationCreated",
): Promise<Webhook> {
  const [hook] = await operatorJson<Webhook[]>("POST", `/companies/${companyId}/webhooks`, [
    { name: "test hook", url, eventType },
  ]);
  if (!hook) throw new Error("no webhook registered");
  return hook;
}

/** Asks for a test ping; returns its ids. */
export function ping(webhookId: string): Promise<{ eventId: string; deliveryId: string }> {
  return operatorJson("POST", `/webhooks/${webhookId}/ping`);
}

/** The deliveries of a registration, newest first. */
export async function deliveriesOf(webhookId: string, query = ""): Promise<Delivery[]> {
  const res = await operator("GET", `/webhooks/${webhookId}/deliveries${query}`);
  if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { deliveries: Delivery[] }).deliveries;
}

/** The one delivery of `deliveryId` of a registration. */
export async function deliveryOf(webhookId: string, deliveryId: string): Promise<Delivery> {
  const found = (await deliveriesOf(webhookId, "?limit=100")).find((d) => d.id === deliveryId);
  if (!found) throw new Error(`delivery ${deliveryId} not listed`);
  return found;
}

/** What the consumer did with each message, and what the deliverers did next. */
export interface HandlingOutcome {
  /** Messages the consumer acked (handed over, or nothing left to do). */
  acked: string[];
  /** Messages the consumer retried, with the delay asked for. */
  retried: { msgId: string; delaySeconds?: number }[];
  /** What the deliverer did with each handed-over message's delivery, in message order. */
  steps: { msgId: string; step: DeliveryStep }[];
}

/** An instant after every due one: a deliverer run at it stands for "the wait is over". */
export const LATER = Number.MAX_SAFE_INTEGER;

/**
 * Runs the deliverer of registration `webhookId` on what it holds, as its
 * alarm would once the waits are over (`now` = {@link LATER} by default).
 */
export function runDeliverer(
  webhookId: string,
  overrides: RunOverrides = {},
  now = LATER,
): Promise<Map<string, DeliveryStep>> {
  const stub = endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId);
  return runInDurableObject(stub, (instance) => instance.runDue(now, overrides));
}

/** The deliveries a registration's deliverer holds, with their due instants. */
export function heldBy(webhookId: string): Promise<{ deliveryId: string; dueAt: number }[]> {
  const stub = endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId);
  return runInDurableObject(stub, (instance) => instance.held());
}

/**
 * One handling of messages: the Worker's queue handler on a batch of them
 * (which hands their deliveries to the deliverers), then, unless `deliver` is
 * false, one run of the deliverer of each registration concerned (one
 * attempt per delivery due).
 *
 * `getQueueResult` reports retried messages without their delay, so the
 * delay is read from a spy on each message's `retry`.
 *
 * @param bodies the message bodies, one message each, ids `m0`, `m1`, ...
 * @param options `attempts` (how many times the Queue has delivered each message),
 *   `timing` (retry-policy overrides of the deliverers' run), `environment`
 *   (the deliverers judge URLs as in that environment), `env` (bindings for the
 *   consumer instead of the test's).
 */
export async function runMessages(
  bodies: readonly WebhookMessage[],
  options: {
    attempts?: number;
    timing?: Partial<RetryPolicy>;
    environment?: string;
    env?: Cloudflare.Env;
    deliver?: boolean;
  } = {},
): Promise<HandlingOutcome> {
  const batch = createMessageBatch<WebhookMessage>(
    "webhook-deliveries-dev",
    bodies.map((body, index) => ({
      id: `m${index}`,
      timestamp: new Date(),
      attempts: options.attempts ?? 1,
      body,
    })),
  );
  const delays = new Map<string, number | undefined>();
  for (const message of batch.messages) {
    const retry = message.retry.bind(message);
    vi.spyOn(message, "retry").mockImplementation((retryOptions?: QueueRetryOptions) => {
      delays.set(message.id, retryOptions?.delaySeconds);
      retry(retryOptions);
    });
  }
  const ctx = createExecutionContext();
  await worker.queue(batch, options.env ?? env);
  const result = await getQueueResult(batch, ctx);
  const acked: string[] = result.explicitAcks;
  const steps: HandlingOutcome["steps"] = [];
  if (options.deliver !== false) {
    const handed = batch.messages.filter((m) => acked.includes(m.id));
    const ids = [...new Set(handed.map((m) => m.body.deliveryId))];
    const webhookIds = new Set<string>();
    for (const shard of shardBindings(env).values()) {
      for (const route of (await loadRoutes(createDb(shard), ids)).values()) {
        webhookIds.add(route.webhookId);
      }
    }
    const overrides: RunOverrides = {
      ...(options.timing ? { policy: options.timing } : {}),
      ...(options.environment ? { urlOptions: { environment: options.environment } } : {}),
    };
    const byDelivery = new Map<string, DeliveryStep>();
    for (const webhookId of webhookIds) {
      for (const [id, step] of await runDeliverer(webhookId, overrides)) byDelivery.set(id, step);
    }
    for (const message of handed) {
      const step = byDelivery.get(message.body.deliveryId);
      if (step) steps.push({ msgId: message.id, step });
    }
  }
  return {
    acked,
    retried: result.retryMessages.map(({ msgId }: { msgId: string }) => {
      const delaySeconds = delays.get(msgId);
      return delaySeconds === undefined ? { msgId } : { msgId, delaySeconds };
    }),
    steps,
  };
}

/**
 * Runs one handling of a message per entry of `attempts` (how many times the
 * Queue has delivered it: the consumer's budget), in turn, one attempt each,
 * and returns the outcome of each.
 */
export async function runHandlings(
  body: WebhookMessage,
  attempts: readonly number[],
  options: { timing?: Partial<RetryPolicy> } = {},
): Promise<HandlingOutcome[]> {
  const outcomes: HandlingOutcome[] = [];
  for (const n of attempts) outcomes.push(await runMessages([body], { ...options, attempts: n }));
  return outcomes;
}

/** The step of the first message of a handling. */
function firstStep(outcome: HandlingOutcome): DeliveryStep {
  const step = outcome.steps[0]?.step;
  if (!step) throw new Error("the delivery was not attempted");
  return step;
}

/**
 * The wait after each handling's attempt, seconds (the next attempt of the
 * round, or the next round), or "done" when the delivery ended (delivered,
 * failed for good, every round failed, or nothing to do).
 */
export function delaysOf(outcomes: readonly HandlingOutcome[]): (number | "done")[] {
  return outcomes.map((o) => {
    const step = firstStep(o);
    return step.kind === "next-attempt" || step.kind === "next-round" ? step.delaySeconds : "done";
  });
}

/** How each handling went on: the next attempt of the round, the next round, or done. */
export function howOf(
  outcomes: readonly HandlingOutcome[],
): ("next attempt" | "next round" | "done")[] {
  return outcomes.map((o) => {
    const step = firstStep(o);
    if (step.kind === "next-attempt") return "next attempt";
    if (step.kind === "next-round") return "next round";
    return "done";
  });
}
