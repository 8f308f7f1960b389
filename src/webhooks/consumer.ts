/**
 * The Queue consumer: one message = one delivery, handed over to its registration's deliverer
 * (`WebhookEndpoint`, ./endpoint-deliverer.ts), which makes the attempts. The consumer makes
 * none, so a batch lasts one D1 read per shard and one `accept` per registration whatever the
 * endpoints do: a hanging endpoint holds back no batch. A message is acked once stored, or
 * when its delivery is unknown or no longer pending (docs/webhook-delivery.md).
 */
import { createDb } from "../db/client";
import { companyD1, shardBindings, UnknownCompanyError } from "../db/shards";
import type { Env } from "../env";
import { log, logError } from "../observability/log";
import { loadRoutes } from "./delivery-records";
import { endpointDeliverer } from "./endpoint-deliverer";
import type { OutboxBindings, WebhookMessage } from "./webhook-outbox";

/** `max_retries + 1` of every `[[queues.consumers]]` in wrangler.toml. */
const MAX_MESSAGE_DELIVERIES = 24;
/** Delay before a message whose hand-over failed is handled again, s. */
const HANDOVER_RETRY_SECONDS = 60;

/** The company of a message, or undefined when it carries none (sent before shards). */
function companyIdOf(message: Message<WebhookMessage>): number | undefined {
  const body: unknown = message.body;
  if (typeof body !== "object" || body === null || !("companyId" in body)) return undefined;
  return typeof body.companyId === "number" ? body.companyId : undefined;
}

type Routes = Awaited<ReturnType<typeof loadRoutes>>;

/**
 * The routes of a batch's deliveries, read in the shard of each message's company (one read
 * per company); a message without a company is looked for in every shard. A company the
 * directory no longer knows has no routes (its messages are acked as unknown).
 */
async function loadRoutesByShard(
  env: Env,
  deliveries: ReadonlyMap<string, number | undefined>,
): Promise<Routes> {
  const byShard = new Map<D1Database, string[]>();
  for (const [deliveryId, companyId] of deliveries) {
    let shards: D1Database[];
    if (companyId === undefined) {
      shards = [...shardBindings(env).values()];
    } else {
      try {
        shards = [await companyD1(env, companyId)];
      } catch (error) {
        if (!(error instanceof UnknownCompanyError)) throw error;
        shards = [];
      }
    }
    for (const shard of shards) byShard.set(shard, [...(byShard.get(shard) ?? []), deliveryId]);
  }
  const routes: Routes = new Map();
  for (const [shard, ids] of byShard) {
    for (const [id, route] of await loadRoutes(createDb(shard), ids)) routes.set(id, route);
  }
  return routes;
}

/** The delivery id of a message, or undefined when its body is not a `WebhookMessage`. */
function deliveryIdOf(message: Message<WebhookMessage>): string | undefined {
  const body: unknown = message.body;
  if (typeof body !== "object" || body === null || !("deliveryId" in body)) return undefined;
  return typeof body.deliveryId === "string" ? body.deliveryId : undefined;
}

/**
 * Retries a message after 60 s, or, when the message has used its whole
 * budget (so that a retry would dead-letter a pending delivery), sends a new
 * message for the delivery with that delay and acks this one.
 */
async function retryLater(
  message: Message<WebhookMessage>,
  env: OutboxBindings,
  maxMessageDeliveries: number,
  error: unknown,
): Promise<void> {
  logError("webhook_message_failed", error, { msg: "webhook message failed", id: message.id });
  const deliveryId = deliveryIdOf(message);
  if (deliveryId === undefined || message.attempts < maxMessageDeliveries) {
    message.retry({ delaySeconds: HANDOVER_RETRY_SECONDS });
    return;
  }
  try {
    // sendBatch, as the outbox sends: one way in for every message of a delivery.
    await env.WEBHOOK_QUEUE.sendBatch([
      {
        body: { deliveryId, companyId: companyIdOf(message) },
        contentType: "json",
        delaySeconds: HANDOVER_RETRY_SECONDS,
      },
    ]);
    message.ack();
  } catch {
    message.retry({ delaySeconds: HANDOVER_RETRY_SECONDS });
  }
}

/**
 * The `queue` handler of the Worker.
 *
 * @param maxMessageDeliveries handlings of a message before the Queue
 *   dead-letters it (`max_retries + 1` in wrangler.toml).
 * @returns a handler that hands each message's delivery to its registration's
 *   deliverer and acks it, or retries it after 60 s when that fails.
 */
export function webhookQueueHandler(maxMessageDeliveries = MAX_MESSAGE_DELIVERIES) {
  return async function consumeWebhookBatch(
    batch: MessageBatch<WebhookMessage>,
    env: Env,
  ): Promise<void> {
    const byDelivery = new Map<string, Message<WebhookMessage>[]>();
    const companies = new Map<string, number | undefined>();
    for (const message of batch.messages) {
      const deliveryId = deliveryIdOf(message);
      if (deliveryId === undefined) {
        log("error", "webhook_message_malformed", {
          msg: "malformed webhook message",
          id: message.id,
        });
        message.ack();
        continue;
      }
      byDelivery.set(deliveryId, [...(byDelivery.get(deliveryId) ?? []), message]);
      companies.set(deliveryId, companies.get(deliveryId) ?? companyIdOf(message));
    }
    let routes: Routes;
    try {
      routes = await loadRoutesByShard(env, companies);
    } catch (error) {
      for (const message of [...byDelivery.values()].flat()) {
        await retryLater(message, env, maxMessageDeliveries, error);
      }
      return;
    }
    // By registration: its company (which names the deliveries' shard) and its deliveries.
    const byWebhook = new Map<string, { companyId: number; deliveryIds: string[] }>();
    for (const [deliveryId, messages] of byDelivery) {
      const route = routes.get(deliveryId);
      if (route?.status !== "pending") {
        // Unknown, delivered or failed: a late or duplicate message, nothing to do.
        for (const message of messages) message.ack();
        continue;
      }
      const held = byWebhook.get(route.webhookId);
      if (held) held.deliveryIds.push(deliveryId);
      else
        byWebhook.set(route.webhookId, { companyId: route.companyId, deliveryIds: [deliveryId] });
    }
    await Promise.all(
      [...byWebhook].map(async ([webhookId, { companyId, deliveryIds }]) => {
        const messages = deliveryIds.flatMap((id) => byDelivery.get(id) ?? []);
        try {
          await endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId).accept(deliveryIds, companyId);
          for (const message of messages) message.ack();
        } catch (error) {
          for (const message of messages) {
            await retryLater(message, env, maxMessageDeliveries, error);
          }
        }
      }),
    );
  };
}
