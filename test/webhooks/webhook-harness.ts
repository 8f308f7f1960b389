/**
 * Helpers of the webhook tests: registrations, a "handling" (the consumer run on chosen
 * messages with `createMessageBatch` / `getQueueResult`, then the alarm of each registration's
 * deliverer), deliveries as the operator lists them, and the clock the deliverers' alarms
 * are set on ({@link clockAhead}: no alarm fires by itself, the test runs it).
 */
import {
  createExecutionContext,
  createMessageBatch,
  getQueueResult,
  listDurableObjectIds,
  runDurableObjectAlarm,
  runInDurableObject,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { vi } from "vitest";
import { createDb } from "../../src/db/client";
import { shardBindings } from "../../src/db/shards";
import worker from "../../src/index";
import { loadRoutes } from "../../src/webhooks/delivery-records";
import { endpointDeliverer, type WebhookEndpoint } from "../../src/webhooks/endpoint-deliverer";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";
import type { OperatorSchemas, WebhookDeliveryPage } from "../fixtures/api-types";
import { operator, operatorJson } from "../harness";

/** A registration as the operator API answers it. */
export type Webhook = OperatorSchemas["Webhook"];

/** A delivery as the operator API lists it, with its attempts. */
export type Delivery = OperatorSchemas["WebhookDelivery"];

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
  return ((await res.json()) as WebhookDeliveryPage).deliveries;
}

/** The one delivery of `deliveryId` of a registration. */
export async function deliveryOf(webhookId: string, deliveryId: string): Promise<Delivery> {
  const found = (await deliveriesOf(webhookId, "?limit=100")).find((d) => d.id === deliveryId);
  if (!found) throw new Error(`delivery ${deliveryId} not listed`);
  return found;
}

/**
 * Runs the test's `Date` a day ahead of workerd's clock (advancing with it). A deliverer sets
 * its alarm on `Date`, so no alarm fires by itself during the test: the harness runs them
 * ({@link runDeliverer}, {@link runMessages}) and, for "the wait is over", moves this clock
 * to the instant the deliverer holds. Undone by `vi.useRealTimers()` (the tests' afterEach).
 */
export function clockAhead(): void {
  vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 86_400_000, shouldAdvanceTime: true });
}

/**
 * Moves the test's clock to `at` (ms since the epoch) unless it is there already: the wait
 * until then is over.
 *
 * @throws when `Date` is real (the test did not call {@link clockAhead}).
 */
function waitUntil(at: number): void {
  if (at <= Date.now()) return;
  if (!vi.isFakeTimers()) throw new Error("a wait in a test on the real clock: call clockAhead()");
  vi.setSystemTime(at);
}

/** The deliveries a deliverer holds, with their due instants. */
function held(stub: DurableObjectStub<WebhookEndpoint>) {
  return runInDurableObject(stub, (instance) => instance.held());
}

/** The deliveries a registration's deliverer holds, with their due instants. */
export function heldBy(webhookId: string): Promise<{ deliveryId: string; dueAt: number }[]> {
  return held(endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId));
}

/**
 * Runs a deliverer's alarm now and returns once what is due has been attempted. On the real
 * clock the platform may have fired the alarm first: then this waits until its attempts are
 * recorded (nothing held is due).
 */
async function runAlarm(stub: DurableObjectStub<WebhookEndpoint>): Promise<void> {
  if (await runDurableObjectAlarm(stub)) return;
  await vi.waitUntil(async () => (await held(stub)).every((h) => h.dueAt > Date.now()), {
    timeout: 10_000,
    interval: 20,
  });
}

/**
 * Runs the alarm of registration `webhookId`'s deliverer, as the platform would once the
 * waits of what it holds are over (the clock moves to the latest), and returns once the
 * deliveries due have been attempted.
 */
export async function runDeliverer(webhookId: string): Promise<void> {
  const stub = endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId);
  waitUntil(Math.max(0, ...(await held(stub)).map((h) => h.dueAt)));
  await runAlarm(stub);
}

/**
 * Lets every deliverer of the test file attempt what is due now, so that no attempt outlives
 * the test's fake network: for tests on the real clock that make deliveries without
 * delivering them (their afterEach, before the mocks are restored).
 */
export async function settleDeliverers(): Promise<void> {
  for (const id of await listDurableObjectIds(env.WEBHOOK_ENDPOINT)) {
    await runAlarm(env.WEBHOOK_ENDPOINT.get(id));
  }
}

/** What the consumer did with each message, and what the deliverers did next. */
export interface HandlingOutcome {
  /** Messages the consumer acked (handed over, or nothing left to do). */
  acked: string[];
  /** Messages the consumer retried, with the delay asked for. */
  retried: { msgId: string; delaySeconds?: number }[];
  /**
   * The handed-over messages whose delivery was attempted by the handling, in message order,
   * each with the delivery's record afterwards (as the operator lists it).
   */
  attempted: { msgId: string; delivery: Delivery }[];
}

/** The registration of each known delivery of `deliveryIds`, by delivery id (every shard). */
async function registrationsOf(deliveryIds: readonly string[]): Promise<Map<string, string>> {
  const webhookOf = new Map<string, string>();
  for (const shard of shardBindings(env).values()) {
    for (const [id, route] of await loadRoutes(createDb(shard), deliveryIds)) {
      webhookOf.set(id, route.webhookId);
    }
  }
  return webhookOf;
}

/**
 * One handling of messages: the Worker's queue handler on a batch of them (which hands their
 * deliveries to the deliverers), then, unless `deliver` is false, the alarm of the deliverer
 * of each registration concerned once its waits are over (one attempt per delivery held).
 *
 * `getQueueResult` reports retried messages without their delay, so the
 * delay is read from a spy on each message's `retry`.
 *
 * @param bodies the message bodies, one message each, ids `m0`, `m1`, ...
 * @param options `attempts` (how many times the Queue has delivered each message),
 *   `env` (bindings for the consumer instead of the test's).
 */
export async function runMessages(
  bodies: readonly WebhookMessage[],
  options: { attempts?: number; env?: Cloudflare.Env; deliver?: boolean } = {},
): Promise<HandlingOutcome> {
  const webhookOf = await registrationsOf([
    ...new Set(bodies.map((b) => b.deliveryId).filter((id) => typeof id === "string")),
  ]);
  const attemptsBefore = new Map<string, number>();
  for (const [deliveryId, webhookId] of webhookOf) {
    attemptsBefore.set(deliveryId, (await deliveryOf(webhookId, deliveryId)).attempts.length);
  }
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
  const attempted: HandlingOutcome["attempted"] = [];
  if (options.deliver !== false) {
    const handed = batch.messages.filter(
      (m) => acked.includes(m.id) && webhookOf.has(m.body.deliveryId),
    );
    const webhookIds = new Set(handed.map((m) => webhookOf.get(m.body.deliveryId) ?? ""));
    for (const webhookId of webhookIds) await runDeliverer(webhookId);
    for (const message of handed) {
      const { deliveryId } = message.body;
      const delivery = await deliveryOf(webhookOf.get(deliveryId) ?? "", deliveryId);
      if (delivery.attempts.length > (attemptsBefore.get(deliveryId) ?? 0)) {
        attempted.push({ msgId: message.id, delivery });
      }
    }
  }
  return {
    acked,
    retried: result.retryMessages.map(({ msgId }: { msgId: string }) => {
      const delaySeconds = delays.get(msgId);
      return delaySeconds === undefined ? { msgId } : { msgId, delaySeconds };
    }),
    attempted,
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
): Promise<HandlingOutcome[]> {
  const outcomes: HandlingOutcome[] = [];
  for (const n of attempts) outcomes.push(await runMessages([body], { attempts: n }));
  return outcomes;
}

/** The record of the first message's delivery after a handling that attempted it. */
function attemptedDelivery(outcome: HandlingOutcome): Delivery {
  const delivery = outcome.attempted[0]?.delivery;
  if (!delivery) throw new Error("the delivery was not attempted");
  return delivery;
}

/**
 * The wait the delivery's record schedules after its last attempt, seconds: from the
 * attempt's end (`at` + `durationMs`) to `nextAttemptAt`; "done" when the delivery ended
 * (delivered, failed for good, every round failed).
 */
export function waitAfterLastAttempt(delivery: Delivery): number | "done" {
  const last = delivery.attempts.at(-1);
  if (delivery.status !== "pending" || delivery.nextAttemptAt === null || !last) return "done";
  return (Date.parse(delivery.nextAttemptAt) - Date.parse(last.at) - last.durationMs) / 1000;
}

/**
 * The wait after each handling's attempt, seconds (the next attempt of the
 * round, or the next round), or "done" when the delivery ended.
 */
export function delaysOf(outcomes: readonly HandlingOutcome[]): (number | "done")[] {
  return outcomes.map((o) => waitAfterLastAttempt(attemptedDelivery(o)));
}

/** How each handling went on, by the record: the next attempt of the round, the next round, or done. */
export function howOf(
  outcomes: readonly HandlingOutcome[],
): ("next attempt" | "next round" | "done")[] {
  return outcomes.map((o) => {
    const delivery = attemptedDelivery(o);
    if (delivery.status !== "pending") return "done";
    return delivery.attemptsInRound > 0 ? "next attempt" : "next round";
  });
}
