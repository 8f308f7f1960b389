/**
 * Helpers of the webhook tests: registrations, the consumer run on chosen
 * messages (`createMessageBatch` / `getQueueResult`), deliveries as the
 * operator lists them.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import worker from "../../src/index";
import { type ConsumerOptions, webhookQueueHandler } from "../../src/webhooks/consumer";
import type { WebhookMessage } from "../../src/webhooks/outbox";
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

/** Which messages of a batch were acked and which retried (with the delay asked for). */
export interface BatchOutcome {
  explicitAcks: string[];
  retryMessages: { msgId: string; delaySeconds?: number }[];
  /**
   * Acked messages followed by a new message for the same delivery, sent in
   * the same run (the next attempt of a round), with that message's delay.
   */
  nextMessages: { msgId: string; delaySeconds?: number }[];
}

/**
 * Runs the Worker's queue handler (or one with shorter timing) on a batch of
 * messages and returns which were acked and retried.
 *
 * `getQueueResult` reports retried messages without their delay, so the
 * delay is read from a spy on each message's `retry`.
 *
 * @param bodies the message bodies, one message each, ids `m0`, `m1`, ...
 * @param options `attempts` (how many times the Queue has delivered each message),
 *   `timing` (consumer option overrides; default: the Worker's own handler),
 *   `env` (bindings to pass instead of the test's).
 */
export async function runMessages(
  bodies: readonly WebhookMessage[],
  options: { attempts?: number; timing?: Partial<ConsumerOptions>; env?: Cloudflare.Env } = {},
): Promise<BatchOutcome> {
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
  const bindings = options.env ?? env;
  // The fake network (fake-network.ts) captures sends with a spy.
  const sendBatch = bindings.WEBHOOK_QUEUE.sendBatch;
  const sendsBefore = vi.isMockFunction(sendBatch) ? sendBatch.mock.calls.length : 0;
  if (options.timing) await webhookQueueHandler(options.timing)(batch, bindings);
  else await worker.queue(batch, bindings);
  const result = await getQueueResult(batch, ctx);
  const sends = vi.isMockFunction(sendBatch)
    ? sendBatch.mock.calls.slice(sendsBefore).flatMap(([messages]) => [...messages])
    : [];
  const nextMessages: BatchOutcome["nextMessages"] = [];
  for (const message of batch.messages) {
    if (!result.explicitAcks.includes(message.id)) continue;
    const sent = sends.find((m) => m.body.deliveryId === message.body.deliveryId);
    if (!sent) continue;
    nextMessages.push(
      sent.delaySeconds === undefined
        ? { msgId: message.id }
        : { msgId: message.id, delaySeconds: sent.delaySeconds },
    );
  }
  return {
    explicitAcks: result.explicitAcks,
    retryMessages: result.retryMessages.map(({ msgId }: { msgId: string }) => {
      const delaySeconds = delays.get(msgId);
      return delaySeconds === undefined ? { msgId } : { msgId, delaySeconds };
    }),
    nextMessages,
  };
}

/**
 * Runs the consumer on one message as the Queue would deliver it for the
 * `attempts`-th time, for each of `attempts` in turn (one attempt per
 * handling), and returns the outcome of each handling.
 */
export async function runHandlings(
  body: WebhookMessage,
  attempts: readonly number[],
  options: { timing?: Partial<ConsumerOptions> } = {},
): Promise<BatchOutcome[]> {
  const outcomes: BatchOutcome[] = [];
  for (const n of attempts) outcomes.push(await runMessages([body], { ...options, attempts: n }));
  return outcomes;
}

/**
 * The wait asked for by each handling: a number (the delay of the next
 * message of the round, or of the message's retry for the next round), "ack"
 * (done), or "retry" without delay. `howOf` tells which way.
 */
export function delaysOf(outcomes: readonly BatchOutcome[]): (number | "ack" | "retry")[] {
  return outcomes.map((o) => {
    const next = o.nextMessages[0];
    if (next) return next.delaySeconds ?? 0;
    if (o.explicitAcks.length > 0) return "ack";
    const retried = o.retryMessages[0];
    if (!retried) throw new Error("neither acked nor retried");
    return retried.delaySeconds ?? "retry";
  });
}

/** How each handling went on: a new message, a retry of the message, or done (acked). */
export function howOf(outcomes: readonly BatchOutcome[]): ("next message" | "retry" | "ack")[] {
  return outcomes.map((o) => {
    if (o.nextMessages.length > 0) return "next message";
    if (o.retryMessages.length > 0) return "retry";
    return "ack";
  });
}
