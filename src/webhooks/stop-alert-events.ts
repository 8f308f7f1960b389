/**
 * The D1 half of the alerts (the webhook events of a stop's state, docs/webhooks.md): what a
 * company registered for them (types and thresholds), and the statements that write one
 * alert to the webhook outbox, at most once per stop, event type and threshold.
 *
 * At most once: an alert's `eventId` is derived from its key (company, event type, stop,
 * threshold), so writing it again finds the event there and writes nothing, neither the
 * event nor its deliveries. A write repeated after a crash (the machine's stream object
 * sends what it had not recorded as sent) is therefore harmless; its deliveries, written the
 * first time, are sent by the Queue hand-over or by the outbox sweeper. The deliveries go
 * through the same outbox, Queue, signing and retry schedule as every other event
 * (./webhook-events.ts `dispatchDeliveries`).
 */
import { type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, notDeleted, ownedSql } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { webhookDeliveries, webhookEvents, webhooks } from "../db/schema";
import type { StopEventRow } from "../reports/stops-report";
import {
  isStopAlertType,
  isThresholdType,
  STOP_ALERT_EVENT_TYPES,
  type StopAlertType,
  type ThresholdEventType,
} from "./event-types";
import { NOW_MS, SQL_UUID } from "./webhook-events";

/** What a company registered for the alerts. */
export interface AlertRegistrations {
  /** The alert event types with at least one registration. */
  types: ReadonlySet<StopAlertType>;
  /** Each threshold type's thresholds over all its registrations, minutes, ascending. */
  thresholds: Record<ThresholdEventType, number[]>;
}

/** One alert: an event type about one stop (and one threshold of a threshold type). */
export interface StopAlert {
  type: StopAlertType;
  stopId: number;
  /** Minutes, for a threshold type; null for `MachineStopStarted` and `MachineStopEnded`. */
  thresholdMinutes: number | null;
}

/**
 * The company's registrations of the alert event types that are not deleted, gathered: one
 * read of the registrations (the index on company and event type).
 */
export async function alertRegistrations(scope: CompanyScope): Promise<AlertRegistrations> {
  const rows = await scope.db
    .select({ eventType: webhooks.eventType, thresholds: webhooks.thresholdsMinutes })
    .from(webhooks)
    .where(notDeleted(scope, webhooks, inJsonList(webhooks.eventType, STOP_ALERT_EVENT_TYPES)))
    .all();
  const types = new Set<StopAlertType>();
  const thresholds: Record<ThresholdEventType, Set<number>> = {
    MachineStopLongerThan: new Set(),
    MachineStopReasonMissing: new Set(),
  };
  for (const row of rows) {
    if (!isStopAlertType(row.eventType)) continue;
    types.add(row.eventType);
    if (isThresholdType(row.eventType)) {
      for (const minutes of row.thresholds ?? []) thresholds[row.eventType].add(minutes);
    }
  }
  const sorted = (set: Set<number>) => [...set].sort((a, b) => a - b);
  return {
    types,
    thresholds: {
      MachineStopLongerThan: sorted(thresholds.MachineStopLongerThan),
      MachineStopReasonMissing: sorted(thresholds.MachineStopReasonMissing),
    },
  };
}

/** True when some registration of the company wants `alert` (its type, and its threshold). */
export function isRegistered(registrations: AlertRegistrations, alert: StopAlert): boolean {
  if (!registrations.types.has(alert.type)) return false;
  if (!isThresholdType(alert.type)) return true;
  return registrations.thresholds[alert.type].includes(alert.thresholdMinutes ?? -1);
}

/** Lowercase hexadecimal of bytes. */
const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");

/**
 * The `eventId` of an alert: a UUID (RFC 9562 version 8, the layout for names of one's own)
 * made of the SHA-256 of its key, company, event type, stop and threshold. The same alert
 * always has the same id, which is what makes it at most once.
 */
async function alertEventId(companyId: number, alert: StopAlert): Promise<string> {
  const key = `${companyId}:${alert.type}:${alert.stopId}:${alert.thresholdMinutes ?? ""}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  const b = new Uint8Array(digest).slice(0, 16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x80;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = hex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The registrations of the company that want `alert` (alias `w`): its event type, not
 * deleted, and for a threshold type the threshold among theirs.
 */
function wanting(companyId: number, alert: StopAlert): SQL {
  const threshold =
    alert.thresholdMinutes === null
      ? sql``
      : sql` AND EXISTS (SELECT 1 FROM json_each(w.thresholds_minutes) t WHERE t.value = ${alert.thresholdMinutes})`;
  return sql`${ownedSql({ companyId }, "w.company_id")} AND w.event_type = ${alert.type} AND w.deleted_at IS NULL${threshold}`;
}

/** The `event` of an alert: the stop's row (the stops report's shapes), and its threshold. */
function payloadOf(alert: StopAlert, row: StopEventRow) {
  return {
    stop: row.stop,
    machine: row.machine,
    shift: row.shift,
    classification: row.classification,
    ...(alert.thresholdMinutes === null ? {} : { thresholdMinutes: alert.thresholdMinutes }),
  };
}

/**
 * The two statements that write an alert, to run in one `db.batch` in this order (other
 * alerts' pairs may follow): the event, written when a registration wants it and it is not
 * there already; then one delivery per registration that wants it, written only when the
 * event was (SQLite's `changes()`, the rows of the statement just before). The columns
 * follow the tables' schema order, as in ./webhook-events.ts.
 *
 * @param scope the company and its shard.
 * @param alert the alert.
 * @param row the stop as the stops report shows it now (the payload).
 * @param now the instant the event is queued (`eventTimestamp`), ms.
 * @returns the event id and the statements; the second returns the deliveries written
 *   (`{id, webhookId}[]`, empty when the alert was written before), for `dispatchDeliveries`.
 */
export async function alertStatements(
  scope: CompanyScope,
  alert: StopAlert,
  row: StopEventRow,
  now: number,
) {
  const { db, companyId } = scope;
  const eventId = await alertEventId(companyId, alert);
  const body = JSON.stringify({
    eventId,
    eventTimestamp: new Date(now).toISOString(),
    eventType: alert.type,
    event: payloadOf(alert, row),
  });
  const event: BatchItem<"sqlite"> = db.insert(webhookEvents).select(sql`
    SELECT ${eventId}, ${companyId}, ${alert.type}, ${body}, CAST(${now} AS INTEGER), ${NOW_MS}
    WHERE EXISTS (SELECT 1 FROM webhooks w WHERE ${wanting(companyId, alert)})
      AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.id = ${eventId})`);
  const deliveries = db
    .insert(webhookDeliveries)
    .select(sql`
    SELECT ${SQL_UUID}, w.company_id, ${eventId}, w.id, 'pending', NULL, 0, 0, NULL, ${NOW_MS}, ${NOW_MS}
    FROM webhooks w
    WHERE ${wanting(companyId, alert)} AND changes() > 0`)
    .returning({ id: webhookDeliveries.id, webhookId: webhookDeliveries.webhookId });
  return { eventId, event, deliveries };
}
