/**
 * The event types a webhook registration can name (docs/webhooks.md, "Event types"): the
 * classification events of a stop (./webhook-events.ts) and the events of a stop's state, the
 * alerts (./stop-alert-events.ts), with the thresholds a registration of a threshold type
 * chooses and their bounds.
 */
import { CLASSIFICATION_EVENT_TYPES } from "./webhook-events";

/** Events of a stop's own course, without thresholds: it started, it ended. */
const STOP_STATE_EVENT_TYPES = ["MachineStopStarted", "MachineStopEnded"] as const;

/**
 * Events of a stop that passes a threshold a registration chose: down longer than it (still
 * open when it passed), no reason given when it passed.
 */
export const THRESHOLD_EVENT_TYPES = ["MachineStopLongerThan", "MachineStopReasonMissing"] as const;

/** Every event of a stop's state (the alerts). */
export const STOP_ALERT_EVENT_TYPES = [
  ...STOP_STATE_EVENT_TYPES,
  ...THRESHOLD_EVENT_TYPES,
] as const;

/** Every event type a registration can name. */
export const WEBHOOK_EVENT_TYPES = [
  ...CLASSIFICATION_EVENT_TYPES,
  ...STOP_ALERT_EVENT_TYPES,
] as const;

export type StopAlertType = (typeof STOP_ALERT_EVENT_TYPES)[number];
export type ThresholdEventType = (typeof THRESHOLD_EVENT_TYPES)[number];

/** Most thresholds one registration names. */
export const MAX_THRESHOLDS = 10;
/** The smallest threshold, minutes. */
export const MIN_THRESHOLD_MINUTES = 1;
/**
 * The largest threshold, minutes (24 hours: a person at the machine gives a reason to a stop
 * of the last 24 hours, docs/realtime.md; a machine's open stops are watched that long).
 */
export const MAX_THRESHOLD_MINUTES = 1440;

/** True for an event type whose registrations name thresholds. */
export function isThresholdType(type: string): type is ThresholdEventType {
  return (THRESHOLD_EVENT_TYPES as readonly string[]).includes(type);
}

/** True for an event type of a stop's state (an alert). */
export function isStopAlertType(type: string): type is StopAlertType {
  return (STOP_ALERT_EVENT_TYPES as readonly string[]).includes(type);
}
