/**
 * The webhook deliverer of one registration (`WebhookEndpoint`, one object per webhook id):
 * it holds that endpoint's pending deliveries in its SQLite table `due` (delivery id, next
 * attempt), attempts the due ones when its alarm fires, and sets the alarm to the next. The
 * requests and the Queue consumer only hand deliveries over, so an endpoint that hangs holds
 * only its own object, never a Queue batch or another endpoint's delivery. The delivery's
 * record in D1 stays the single truth of its rounds (docs/webhook-delivery.md).
 */

import { DurableObject } from "cloudflare:workers";
import type { Database } from "../db/client";
import { migrateObject } from "../db/object-migrations";
import { companyDb } from "../db/shards";
import { namedStub } from "../durable/named-stub";
import { type Env, readSettings } from "../env";
import { logError } from "../observability/log";
import { MINUTE_MS } from "../time/units";
import { type DeliveryStep, deliverDue } from "./deliver";
import { ENDPOINT_MIGRATIONS } from "./endpoint-migrations";
import { DEFAULT_RETRY_POLICY } from "./retry-policy";
import type { UrlSafetyOptions } from "./url-safety";

/** Most deliveries one alarm attempts (one D1 read: at most 100 ids per statement). */
const MAX_DUE_PER_RUN = 100;
/** Wait after a handling that failed on D1, ms. */
const ERROR_RETRY_MS = MINUTE_MS;

/** The Durable Object class; its name is the webhook id (see {@link endpointDeliverer}). */
export class WebhookEndpoint extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  /** The run in progress, if any: an alarm's run starts after it, never beside it. */
  #running: Promise<unknown> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, ENDPOINT_MIGRATIONS);
    this.sql = ctx.storage.sql;
  }

  /**
   * Takes deliveries over: each is due now, unless already held (a duplicate
   * hand-over keeps the instant it had). Persisted before it returns, so the
   * Queue message can be acked.
   *
   * @param deliveryIds deliveries of this object's registration.
   * @param companyId the registration's company (kept: it names the deliveries' shard).
   * @returns how many were new.
   */
  async accept(deliveryIds: readonly string[], companyId: number): Promise<number> {
    const now = Date.now();
    if (this.#owner() !== companyId) {
      this.sql.exec("DELETE FROM owner");
      this.sql.exec("INSERT INTO owner (company_id) VALUES (?)", companyId);
    }
    let added = 0;
    for (const id of deliveryIds) {
      added += this.sql.exec(
        "INSERT INTO due (delivery_id, due_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
        id,
        now,
      ).rowsWritten;
    }
    await this.#schedule();
    return added;
  }

  /** The registration's company, as the last hand-over told it. */
  #owner(): number | undefined {
    return this.sql.exec<{ company_id: number }>("SELECT company_id FROM owner").toArray()[0]
      ?.company_id;
  }

  /** The shard of the registration's company (src/db/shards.ts). */
  async #shard(): Promise<Database> {
    const companyId = this.#owner();
    if (companyId === undefined) throw new Error("deliverer has no company: nothing accepted");
    return companyDb(this.env, companyId);
  }

  /** The deliveries held, with their next attempt's instant (ms since the epoch), soonest first. */
  held(): { deliveryId: string; dueAt: number }[] {
    return this.sql
      .exec<{ delivery_id: string; due_at: number }>(
        "SELECT delivery_id, due_at FROM due ORDER BY due_at, delivery_id",
      )
      .toArray()
      .map((r) => ({ deliveryId: r.delivery_id, dueAt: r.due_at }));
  }

  /**
   * Makes one attempt of every delivery due now (up to {@link MAX_DUE_PER_RUN}), records
   * them, and schedules what follows: the next attempt of the round, the next round, or
   * nothing (the delivery ended). The platform never overlaps two alarms of one object;
   * the runs are chained all the same, so one invoked by hand beside the platform's (the
   * tests' `runDurableObjectAlarm`) cannot attempt a delivery twice.
   */
  override alarm(): Promise<void> {
    const run = this.#running.then(() => this.#run(Date.now()));
    this.#running = run.catch(() => undefined);
    return run;
  }

  /** One run: the deliveries due at `now` (ms since the epoch). */
  async #run(now: number): Promise<void> {
    const ids = this.sql
      .exec<{ delivery_id: string }>(
        "SELECT delivery_id FROM due WHERE due_at <= ? ORDER BY due_at LIMIT ?",
        now,
        MAX_DUE_PER_RUN,
      )
      .toArray()
      .map((r) => r.delivery_id);
    const settings = readSettings(this.env);
    const urlOptions: UrlSafetyOptions = {
      environment: settings.environment,
      dohUrl: settings.webhooks.dohUrl,
      exemptOrigins: settings.webhooks.exemptOrigins,
    };
    const steps =
      ids.length === 0
        ? new Map<string, DeliveryStep>()
        : await deliverDue(await this.#shard(), ids, urlOptions, DEFAULT_RETRY_POLICY);
    // The instant the retry policy scheduled and the delivery's record keeps (deliver.ts).
    const ended = Date.now();
    for (const [id, step] of steps) {
      const dueAt =
        step.kind === "next-attempt" || step.kind === "next-round"
          ? step.dueAt
          : step.kind === "error"
            ? ended + ERROR_RETRY_MS
            : null;
      if (dueAt === null) this.sql.exec("DELETE FROM due WHERE delivery_id = ?", id);
      else this.sql.exec("UPDATE due SET due_at = ? WHERE delivery_id = ?", dueAt, id);
      if (step.kind === "error") {
        logError("webhook_delivery_failed", step.error, {
          msg: "webhook delivery failed",
          deliveryId: id,
        });
      }
    }
    await this.#schedule();
  }

  /** Sets the alarm to the earliest due instant (none when nothing is held). */
  async #schedule(): Promise<void> {
    const next = this.sql.exec<{ at: number | null }>("SELECT min(due_at) AS at FROM due").one().at;
    if (next === null) {
      await this.ctx.storage.deleteAlarm();
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next) await this.ctx.storage.setAlarm(next);
  }
}

/** The stub of the deliverer of registration `webhookId` (id cached per isolate). */
export function endpointDeliverer(
  ns: DurableObjectNamespace<WebhookEndpoint>,
  webhookId: string,
): DurableObjectStub<WebhookEndpoint> {
  return namedStub(ns, webhookId);
}
