/**
 * Names and shapes shared by the stream-events object, its publishers and its routes:
 * the object names (one per machine stream, company stream, credential and company
 * ticket store) and the event envelope.
 */

/** Every kind of event a stream carries (`reset` only as the first event of a client too far behind). */
export const EVENT_KINDS = [
  "segment.changed",
  "segment.updated",
  "operator.assigned",
  "production",
  "stop.started",
  "stop.ended",
  "stop.updated",
  "stop.deleted",
  "stop.classified",
  "stop.unclassified",
  "shift.started",
  "shift.ended",
  "oee",
  "reset",
] as const;

type StreamEventKind = (typeof EVENT_KINDS)[number];

/** An event as a publisher gives it. */
export interface StreamEventInput {
  type: Exclude<StreamEventKind, "reset">;
  /** The machine the event is about. */
  machineId: number;
  /** When it happened, ms; default: when the stream recorded it. */
  at?: number;
  /** On a company stream: the event's id in its machine's stream. */
  machineEventId?: number;
  data: unknown;
}

/**
 * An event as subscribers get it (the SSE `data` line, or a WebSocket text message):
 * `id` is strictly increasing within its stream (the machine's, or the company's).
 */
export interface StreamEvent {
  id: number;
  type: StreamEventKind;
  /** ISO 8601 instant. */
  at: string;
  /** The machine; null on a company stream's `reset`. */
  machineId: number | null;
  /** On a company stream: the id of the same event in its machine's stream. */
  machineEventId?: number;
  data: unknown;
}

/** Which piece of state an event kind updates, for `reset` (absent = none). */
export const STATE_KEY_OF: Partial<Record<StreamEventKind, string>> = {
  "segment.changed": "segment",
  "segment.updated": "segmentUpdate",
  "operator.assigned": "operators",
  production: "production",
  "stop.started": "stop",
  "stop.ended": "stop",
  "stop.updated": "stop",
  "stop.deleted": "stop",
  "stop.classified": "classification",
  "shift.started": "shift",
  "shift.ended": "shift",
  oee: "oee",
};

/** A machine's stream object. */
export function machineStream(companyId: number, machineId: number): string {
  return `m:${companyId}:${machineId}`;
}

/** A company's stream object. */
export function companyStream(companyId: number): string {
  return `c:${companyId}`;
}

/** The company's ticket store. */
export function ticketStore(companyId: number): string {
  return `t:${companyId}`;
}

export type StreamName =
  | { kind: "machine"; companyId: number; machineId: number }
  | { kind: "company"; companyId: number };

/** Parses a stream object's name; null for the other kinds of objects. */
export function parseStreamName(name: string): StreamName | null {
  const machine = /^m:(\d+):(\d+)$/.exec(name);
  if (machine) {
    return { kind: "machine", companyId: Number(machine[1]), machineId: Number(machine[2]) };
  }
  const company = /^c:(\d+)$/.exec(name);
  if (company) return { kind: "company", companyId: Number(company[1]) };
  return null;
}
