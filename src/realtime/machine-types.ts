/**
 * What the per-machine realtime object (`./realtime-machine.ts`) takes and answers: the
 * writes as the Worker resolved them, the refusals, and the snapshot of the GET.
 */
import type { Assignment, Segment, SegmentSku } from "./timeline";

/** The machine an object is for (its name carries it: `machineObject`, `machineKeyOf`). */
export type { MachineKey } from "../db/machines";

/**
 * `POST /v1/realtime/{machine_id}/sku`, resolved by the Worker: the segment it starts
 * (its log id is the object's to give).
 */
export interface SkuWrite extends Omit<Segment, "logId" | "start"> {
  /** ms; null = when the object applies the write. */
  start: number | null;
}

/**
 * `POST /v1/realtime/{machine_id}/sku` without a SKU, resolved by the Worker: changes
 * to the segment running when the object applies it. An absent field is unchanged.
 */
export interface SegmentUpdate {
  simpleWorkOrder?: { id: string; name: string };
  quantity?: number;
  /** The `custom` object as JSON text. */
  customJson?: string;
}

/** `POST /v1/realtime/{machine_id}/operator`, resolved by the Worker. */
export interface OperatorWrite {
  operatorId: number;
  firstName: string | null;
  lastName: string | null;
  /** ms. */
  start: number;
}

/** A shift instance as the object keeps it; instants in ms. */
export interface RealtimeInstance {
  id: number;
  name: string;
  start: number;
  end: number;
  isConsidered: boolean;
}

/** Why a write or a read was refused. */
export type RealtimeRefusal =
  | { ok: false; reason: "not_running" }
  | { ok: false; reason: "outside_instance"; field: "start" | "end"; instance: RealtimeInstance }
  | { ok: false; reason: "end_not_after_start" }
  | { ok: false; reason: "no_current_segment" };

export type WriteResult = { ok: true; revision: number } | RealtimeRefusal;

/** One segment with its log's counts, for the GET. */
export interface SegmentView {
  productionLogId: string;
  sku: SegmentSku;
  simpleWorkOrder: { id: string; name: string } | null;
  quantity: number | null;
  customJson: string | null;
  nominalSpeed: number;
  countingFactor: number;
  /** ms. */
  start: number;
  /** ms: where the segment ends on the timeline (null = open, until the instance ends). */
  end: number | null;
  /** ms: end of its log now; null = not begun, no log yet. */
  logEnd: number | null;
  sensorCount: number;
  count: number;
}

/** The state of a machine's running instance, for the GET. */
export interface Snapshot {
  ok: true;
  instance: RealtimeInstance;
  current: SegmentView | null;
  operators: Assignment[];
  segments: SegmentView[];
  revision: number;
  /** ms: the instant the snapshot was taken. */
  at: number;
}

export type SnapshotResult = Snapshot | { ok: false; reason: "not_running" };
