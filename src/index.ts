/**
 * Worker entry: the HTTP app, the webhook Queue consumer, the outbox sweeper
 * (cron trigger) and the Durable Object classes.
 */
import { createApp } from "./app";
import { createDb } from "./db/client";
import { shardBindings } from "./db/shards";
import { type Env, readSettings } from "./env";
import { webhookQueueHandler } from "./webhooks/consumer";
import { sweepOutbox, type WebhookMessage } from "./webhooks/outbox";

export { CompanyStream } from "./events/company-stream";
export { ConnectionLeases } from "./events/lease-object";
export { MachineStream } from "./events/machine-stream";
export { RealtimeTickets } from "./events/ticket-object";
export { RateLimiter } from "./rate-limit/rate-limiter";
export { RealtimeMachine } from "./realtime/realtime-machine";
export { SignalStore } from "./resources/signals/store";
export { WebhookEndpoint } from "./webhooks/endpoint-deliverer";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: webhookQueueHandler(),
  async scheduled(_controller, env, ctx) {
    const { stalledMarginSeconds } = readSettings(env).webhooks;
    // Cross-company work runs per shard: each shard's outbox on its own.
    const now = Date.now();
    for (const shard of shardBindings(env).values()) {
      ctx.waitUntil(
        sweepOutbox(env, createDb(shard), now, { stalledMarginMs: stalledMarginSeconds * 1000 }),
      );
    }
  },
} satisfies ExportedHandler<Env, WebhookMessage>;
