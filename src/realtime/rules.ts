/**
 * The rules of a realtime write, in one place: the machine's object applies them to every
 * write (`./realtime-machine.ts`), and the route applies the same functions before a write
 * that creates a work order (a refused call must write nothing). Pure: no clock, no I/O.
 * The route only turns a refusal into an HTTP answer (`./routes.ts`).
 */

import { instanceContains } from "../shifts/instances";
import type { RealtimeInstance, RealtimeRefusal } from "./machine-types";

/** No shift instance runs now. */
export const NOT_RUNNING: RealtimeRefusal = { ok: false, reason: "not_running" };

/**
 * `end` must come after `start` (both ms).
 *
 * @returns the refusal, or null when they are in order (or `end` is absent).
 */
export function refuseEndBeforeStart(start: number, end: number | null): RealtimeRefusal | null {
  return end !== null && end <= start ? { ok: false, reason: "end_not_after_start" } : null;
}

/**
 * A write's `start` (ms) must fall in the running instance, `[start, end)`.
 *
 * @returns `not_running` without an instance, `outside_instance` (naming the field and the
 *   instance) when it falls outside, else null.
 */
export function refuseStart(
  instance: RealtimeInstance | null,
  start: number,
): RealtimeRefusal | null {
  if (!instance) return NOT_RUNNING;
  if (!instanceContains(instance, start)) {
    return { ok: false, reason: "outside_instance", field: "start", instance };
  }
  return null;
}

/**
 * A SKU write: its `start` (null = `now`, ms) in the running instance, its `end` after it.
 *
 * @returns the first refusal in that order, or null when the write may be applied.
 */
export function refuseSkuWrite(
  instance: RealtimeInstance | null,
  write: { start: number | null; end: number | null },
  now: number,
): RealtimeRefusal | null {
  const start = write.start ?? now;
  return refuseStart(instance, start) ?? refuseEndBeforeStart(start, write.end);
}
