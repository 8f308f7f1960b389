/**
 * What the board knows and holds between refreshes: the key, the machines, their realtime
 * state and report rows, the machine shown in detail, and the stream's bookkeeping. One
 * object for the page; the stops live in ./board-stops.ts.
 */
import type { Machine, MetricsRow, ProductionLog, RealtimeState } from "./board-types";

/** The tab's session storage entry of the key. */
export const KEY_STORAGE = "pm-board-key";

/** The board's state (one per page). */
interface BoardState {
  key: string;
  machines: Machine[];
  /** Realtime state by machine id (machines running a shift). */
  realtime: Map<number, RealtimeState>;
  /** Machines that answered 409 (no shift now): when to ask again, ms. */
  noShift: Map<number, number>;
  /** Metrics rows of the last two days by `<machine id>:<shift instance id>`. */
  metrics: Map<string, MetricsRow>;
  /** Production logs reaching into the timelines' window, by machine id; null when the key cannot read them. */
  logs: Map<number, ProductionLog[]> | null;
  selected: Machine | null;
  timer: ReturnType<typeof setInterval> | undefined;
  slowTimer: ReturnType<typeof setInterval> | undefined;
  events: EventSource | null;
  lastEventId: string | null;
  /** A ticket taken with the company's zone, for the stream's first connection. */
  ticket: string | null;
  /** Machines with events not yet read again. */
  pending: Set<number>;
  flushTimer: ReturnType<typeof setTimeout> | null;
}

export const state: BoardState = {
  key: sessionStorage.getItem(KEY_STORAGE) ?? "",
  machines: [],
  realtime: new Map(),
  noShift: new Map(),
  metrics: new Map(),
  logs: new Map(),
  selected: null,
  timer: undefined,
  slowTimer: undefined,
  events: null,
  lastEventId: null,
  ticket: null,
  pending: new Set(),
  flushTimer: null,
};
