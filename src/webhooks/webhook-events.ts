/**
 * Webhook events written in the same batch as the change they report (the
 * outbox of docs/webhooks.md): the event row, whose `body` is the exact bytes
 * every attempt sends and signs, and one delivery row per matching
 * registration, whose statement returns the ids of the deliveries it wrote.
 * After the batch commits, `dispatchDeliveries` sends one Queue message per
 * delivery (one `sendBatch`) and records that they were sent: the ids come from
 * the batch itself, so no read follows the commit.
 */

import { type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { type CompanyScope, ownedSql, scopeIn } from "../db/company-scope";
import { webhookDeliveries, webhookEvents } from "../db/schema";
import type { Env } from "../env";
import type { ClassificationOut, ReportShift, StopOut } from "../reports/schemas";
import { endpointDeliverer } from "./endpoint-deliverer";
import { type OutboxBindings, sendDeliveries } from "./webhook-outbox";

/** The event types a registration can name (docs/webhooks.md). */
export const CLASSIFICATION_EVENT_TYPES = [
  "MachineStopClassificationCreated",
  "MachineStopClassificationUpdated",
  "MachineStopClassificationDeleted",
] as const;

/** The test event; it reaches a registration whatever its type. */
const PING_EVENT_TYPE = "Ping";

/** Which `MachineStopClassification*` event a classification write emits. */
export type ClassificationChangeKind = "Created" | "Updated" | "Deleted";

/** Everything a stop-classification event needs, in the stops report's shapes. */
export interface ClassificationChange {
  kind: ClassificationChangeKind;
  companyId: number;
  stopId: number;
  /** The stop, as the stops report shows it, at the time of the change. */
  stop: StopOut;
  machine: { id: number; name: string };
  /** The shift instance containing the stop's start, or null. */
  shift: ReportShift | null;
  /**
   * The classification before the change: null for `Created`, the old value
   * for `Updated` (the event's `previous`) and for `Deleted` (the event's
   * `classification`, as it was before deletion).
   */
  previous: ClassificationOut | null;
}

/** The statements of one event, and its id (to dispatch it once they have committed). */
interface OutboxWrite {
  /** `eventId` of the event; no row is written when no registration matches. */
  eventId: string;
  /** Writes the event row. */
  event: BatchItem<"sqlite">;
  /**
   * Writes its deliveries, after `event` in the same batch; its result is the
   * ids of the deliveries written (`{ id }[]`, empty when none), for
   * `dispatchDeliveries`.
   */
  deliveries: DeliveriesInsert;
}

/** An INSERT of deliveries returning their ids and registrations. */
type DeliveriesInsert = ReturnType<typeof deliveriesStatement>;

/** ISO 8601 UTC with milliseconds of an integer ms column, as `Date#toISOString` writes it. */
function isoOf(column: SQL): SQL {
  return sql`(strftime('%Y-%m-%dT%H:%M:%S', ${column} / 1000, 'unixepoch') || '.' || printf('%03d', ${column} % 1000) || 'Z')`;
}

/** A random UUID (version 4 layout) made by SQLite, one per row of an INSERT ... SELECT. */
export const SQL_UUID = sql`(lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6))))`;

/** The current instant in ms, as the schema's defaults compute it. */
export const NOW_MS = sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

/**
 * True when the statement run just before changed a row: `changes()` is evaluated before
 * this INSERT changes anything, so it still counts the previous statement's rows.
 */
const WRITE_CHANGED_A_ROW = sql`changes() > 0`;

/** Registrations of the company for `eventType` that are not deleted (SQL condition on alias `w`). */
function matchingRegistrations(companyId: number, eventType: string): SQL {
  return sql`${ownedSql({ companyId }, "w.company_id")} AND w.event_type = ${eventType} AND w.deleted_at IS NULL`;
}

/**
 * One delivery per matching registration, written only if the event row was. The selected
 * values follow the table's columns in the schema's order (id, company, event, webhook,
 * status, enqueued_at, rounds, attempts_in_round, next_attempt_at, created_at, updated_at).
 */
function deliveriesStatement(scope: CompanyScope, eventId: string, eventType: string) {
  const { db, companyId } = scope;
  return db
    .insert(webhookDeliveries)
    .select(sql`
    SELECT ${SQL_UUID}, w.company_id, ${eventId}, w.id, 'pending', NULL, 0, 0, NULL, ${NOW_MS}, ${NOW_MS}
    FROM webhooks w
    WHERE ${matchingRegistrations(companyId, eventType)}
      AND EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = ${eventId})`)
    .returning({ id: webhookDeliveries.id, webhookId: webhookDeliveries.webhookId });
}

/**
 * The statements that record the webhook event of a stop-classification
 * change; the caller appends `event` then `deliveries` to the SAME `db.batch`
 * as the write, right after it, so that the event exists if and only if the
 * change does, and passes the result of `deliveries` to `dispatchDeliveries`.
 * `event` is written only when the statement just before it changed a row
 * (SQLite's `changes()`, which counts the rows of the last completed INSERT,
 * UPDATE or DELETE, not those of its triggers): a write guarded on what it
 * replaces, and refused because another request changed it first, emits nothing.
 *
 * The statements are INSERT ... SELECT through Drizzle's `insert().select(sql)`
 * (raw `db.run` statements cannot be batched by drizzle-orm 0.45 on D1), which
 * lists EVERY column of the table in schema order: a new column of
 * `webhook_events` or `webhook_deliveries` must be added to these SELECTs.
 *
 * The body is the envelope `{eventId, eventTimestamp, eventType, event}` with
 * `event = {classification, stop, machine, shift}` (+ `previous` for
 * `Updated`) in the stops report's shapes. For `Created` and `Updated` the new
 * classification (its id and timestamps are set by the database) is read by
 * SQL from the row the batch has just written, with the same shape as
 * `toClassificationOut`; the other parts are built here. Nothing is written
 * when the company has no registration for the type.
 *
 * @param db Drizzle client (to build statements, not to run them).
 * @param change what changed, with the stop, machine, shift and previous classification.
 * @param now the instant the event is queued (`eventTimestamp`), ms since the epoch.
 * @returns the event id and the two statements to append to the write's batch.
 */
export function classificationEventStatements(
  db: Database,
  change: ClassificationChange,
  now: number = Date.now(),
): OutboxWrite {
  const eventId = crypto.randomUUID();
  const eventType = `MachineStopClassification${change.kind}`;
  const eventTimestamp = new Date(now).toISOString();
  const { companyId } = change;
  const registered = sql`EXISTS (SELECT 1 FROM webhooks w WHERE ${matchingRegistrations(companyId, eventType)})`;

  let insertEvent: BatchItem<"sqlite">;
  if (change.kind === "Deleted") {
    const body = JSON.stringify({
      eventId,
      eventTimestamp,
      eventType,
      event: {
        classification: change.previous,
        stop: change.stop,
        machine: change.machine,
        shift: change.shift,
      },
    });
    insertEvent = db.insert(webhookEvents).select(sql`
      SELECT ${eventId}, ${companyId}, ${eventType}, ${body}, CAST(${now} AS INTEGER), ${NOW_MS}
      WHERE ${WRITE_CHANGED_A_ROW} AND ${registered}`);
  } else {
    const cause = (alias: string) =>
      sql`json_object('id', ${sql.raw(alias)}.id, 'name', ${sql.raw(alias)}.name)`;
    const classification = sql`json_object(
      'id', sc.id,
      'createdAt', ${isoOf(sql`sc.created_at`)},
      'updatedAt', ${isoOf(sql`sc.updated_at`)},
      'description', sc.description,
      'component', ${cause("comp")},
      'specificCause', ${cause("spec")},
      'generalCause', ${cause("gen")})`;
    const previous =
      change.kind === "Updated"
        ? sql`, 'previous', json(${JSON.stringify(change.previous)})`
        : sql``;
    insertEvent = db.insert(webhookEvents).select(sql`
      SELECT ${eventId}, ${companyId}, ${eventType},
        json_object(
          'eventId', ${eventId},
          'eventTimestamp', ${eventTimestamp},
          'eventType', ${eventType},
          'event', json_object(
            'classification', ${classification},
            'stop', json(${JSON.stringify(change.stop)}),
            'machine', json(${JSON.stringify(change.machine)}),
            'shift', json(${JSON.stringify(change.shift)})${previous})),
        CAST(${now} AS INTEGER), ${NOW_MS}
      FROM stop_classifications sc
      LEFT JOIN stop_causes comp ON comp.id = sc.component_id
      LEFT JOIN stop_causes spec ON spec.id = sc.specific_cause_id
      LEFT JOIN stop_causes gen ON gen.id = sc.general_cause_id
      WHERE ${WRITE_CHANGED_A_ROW} AND sc.stop_id = ${change.stopId}
        AND ${ownedSql({ companyId }, "sc.company_id")} AND ${registered}`);
  }
  return {
    eventId,
    event: insertEvent,
    deliveries: deliveriesStatement(scopeIn(db, companyId), eventId, eventType),
  };
}

/**
 * The statements of a test ping to one registration, whatever its event type:
 * the event `{"text": "ping"}` and its one delivery.
 *
 * @param db Drizzle client.
 * @param webhook the registration (id and company).
 * @param now the instant the event is queued, ms since the epoch.
 * @returns the event and delivery ids and the statements to run in one batch
 *   (`event` then `deliveries`).
 */
export function pingEventStatements(
  db: Database,
  webhook: { id: string; companyId: number },
  now: number = Date.now(),
): OutboxWrite & { deliveryId: string } {
  const eventId = crypto.randomUUID();
  const deliveryId = crypto.randomUUID();
  const body = JSON.stringify({
    eventId,
    eventTimestamp: new Date(now).toISOString(),
    eventType: PING_EVENT_TYPE,
    event: { text: "ping" },
  });
  return {
    eventId,
    deliveryId,
    event: db.insert(webhookEvents).values({
      id: eventId,
      companyId: webhook.companyId,
      eventType: PING_EVENT_TYPE,
      body,
      eventTimestamp: now,
    }),
    deliveries: db
      .insert(webhookDeliveries)
      .values({ id: deliveryId, companyId: webhook.companyId, eventId, webhookId: webhook.id })
      .returning({ id: webhookDeliveries.id, webhookId: webhookDeliveries.webhookId }),
  };
}

/**
 * Sends the Queue messages of an event's deliveries (one `sendBatch`) and
 * records them sent (`sendDeliveries`), once the batch that wrote them has
 * committed; then hands them straight to their registrations' deliverers
 * (one `accept` per registration, concurrently), so that the first attempt
 * does not wait for the Queue: a local Queue hands out one batch at a time,
 * a deployed one waits up to `max_batch_timeout` (docs/webhook-delivery.md).
 * The Queue message stays the durable way in: when it arrives, the delivery
 * is held already (or done) and the message is acked.
 *
 * Never throws: a failure is logged and left to the Queue message or, failing
 * that, to the outbox sweeper, because the change itself is already saved.
 *
 * @param env the Queue and deliverer bindings.
 * @param scope the company of the event and its shard.
 * @param eventId the event, for the log.
 * @param deliveries the result of the event's `deliveries` statement.
 */
export async function dispatchDeliveries(
  env: OutboxBindings & Pick<Env, "WEBHOOK_ENDPOINT">,
  scope: CompanyScope,
  eventId: string,
  deliveries: readonly { id: string; webhookId: string }[],
): Promise<void> {
  const { db, companyId } = scope;
  if (deliveries.length === 0) return;
  const fail = (msg: string, error: unknown) =>
    console.error(JSON.stringify({ level: "error", msg, eventId, error: String(error) }));
  try {
    await sendDeliveries(
      env,
      db,
      deliveries.map((d) => ({ id: d.id, companyId })),
      Date.now(),
    );
  } catch (error) {
    fail("webhook dispatch failed", error);
  }
  const byWebhook = new Map<string, string[]>();
  for (const d of deliveries)
    byWebhook.set(d.webhookId, [...(byWebhook.get(d.webhookId) ?? []), d.id]);
  await Promise.all(
    [...byWebhook].map(([webhookId, ids]) =>
      endpointDeliverer(env.WEBHOOK_ENDPOINT, webhookId)
        .accept(ids, companyId)
        .catch((error: unknown) => fail("webhook hand-over failed", error)),
    ),
  );
}
