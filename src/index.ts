/**
 * Worker entry: the HTTP app, the webhook Queue consumer, the outbox sweeper
 * (cron trigger) and the Durable Object classes.
 */
import { createApp } from "./app";
import { createDb } from "./db/client";
import { repairPendingMirrors } from "./db/company-mirror";
import { shardBindings } from "./db/shards";
import type { FlushHeldWrites } from "./durable/realtime-barrier";
import { type Env, readSettings } from "./env";
import { heldWritesOf } from "./realtime/machine-stub";
import { MachineStreamObject } from "./streams/machine-stream";
import { SECOND_MS } from "./time/units";
import { webhookQueueHandler } from "./webhooks/consumer";
import { sweepOutbox, type WebhookMessage } from "./webhooks/webhook-outbox";

export { CompanyExports } from "./exports/export-object";
export { SignalStore } from "./machine-state/signal-store";
export { RateLimiter } from "./rate-limit/rate-limiter";
export { RealtimeMachine } from "./realtime/realtime-machine";
export { CompanyStream } from "./streams/company-stream";
export { ConnectionLeases } from "./streams/lease-object";
export { RealtimeTickets } from "./streams/ticket-object";
export { WebhookEndpoint } from "./webhooks/endpoint-deliverer";

/**
 * A machine's stream-event stream (src/streams/machine-stream.ts), handed the realtime layer's
 * way to flush a machine's held writes, which streams/ does not name.
 */
export class MachineStream extends MachineStreamObject {
  protected heldWrites(): FlushHeldWrites {
    return heldWritesOf(this.env);
  }
}

const app = createApp();

export default {
  fetch: app.fetch,
  queue: webhookQueueHandler(),
  async scheduled(_controller, env, ctx) {
    const { stalledMarginSeconds } = readSettings(env).webhooks;
    // Cross-company work runs per shard: each shard's outbox on its own.
    const now = Date.now();
    const shards = shardBindings(env);
    // Company mirrors a crash left pending and nothing has touched since (one directory read
    // through an index of pending rows when there are none).
    ctx.waitUntil(repairPendingMirrors(env.DB, shards));
    for (const shard of shards.values()) {
      ctx.waitUntil(
        sweepOutbox(env, createDb(shard), now, {
          stalledMarginMs: stalledMarginSeconds * SECOND_MS,
        }),
      );
    }
  },
} satisfies ExportedHandler<Env, WebhookMessage>;
