/**
 * A machine's timeline: what each instant of a window was, in the classes of the metrics
 * report (docs/metrics.md, "The time of one shift instance"), so that the picture and the
 * availability on the same card agree:
 *
 * - `not-scheduled`: outside every shift instance of the machine that the reports count
 *   (and the running one);
 * - `planned`: inside a programmed stop;
 * - `down`: inside any other stop (counted in availability or not);
 * - `running`: inside a production log;
 * - `no-data`: scheduled, and none of the above (late start, no data, early stop).
 *
 * Where records overlap the first class of that list wins, as in the report. Pure: no DOM,
 * no clock (test/board/timeline.test.ts).
 */
import { MINUTE_MS } from "../../time/units";

/** The class of an instant on the timeline. */
export type TimelineState = "running" | "down" | "planned" | "no-data" | "not-scheduled";

/** A half-open span `[start, end)`, ms since the epoch. */
export interface TimelineSpan {
  start: number;
  end: number;
}

/** One stretch of the timeline: a span and its class. */
export interface Stretch extends TimelineSpan {
  state: TimelineState;
}

/** What a machine's timeline is made of, every span in ms. */
export interface TimelineRecords {
  /** Its shift instances. */
  shifts: TimelineSpan[];
  /** Its stops (an open stop ends at the window's end). */
  stops: (TimelineSpan & { isProgrammed: boolean })[];
  /** Its production logs (a live one up to now). */
  production: TimelineSpan[];
}

type Layer = "shift" | "planned" | "down" | "production";

function stateOf(open: Record<Layer, number>): TimelineState {
  if (open.shift === 0) return "not-scheduled";
  if (open.planned > 0) return "planned";
  if (open.down > 0) return "down";
  if (open.production > 0) return "running";
  return "no-data";
}

/**
 * The stretches of `[from, to)`: contiguous, in order, each as long as its class lasts
 * (two neighbours never share a class). Work: O(n log n) in the records.
 *
 * @returns an empty list when `to <= from`.
 */
export function timelineStretches(records: TimelineRecords, from: number, to: number): Stretch[] {
  const edges: { at: number; layer: Layer; step: 1 | -1 }[] = [];
  const add = (span: TimelineSpan, layer: Layer) => {
    const start = Math.max(span.start, from);
    const end = Math.min(span.end, to);
    if (end <= start) return;
    edges.push({ at: start, layer, step: 1 }, { at: end, layer, step: -1 });
  };
  for (const shift of records.shifts) add(shift, "shift");
  for (const stop of records.stops) add(stop, stop.isProgrammed ? "planned" : "down");
  for (const log of records.production) add(log, "production");
  edges.sort((a, b) => a.at - b.at);
  const open: Record<Layer, number> = { shift: 0, planned: 0, down: 0, production: 0 };
  const out: Stretch[] = [];
  let i = 0;
  for (let cursor = from; cursor < to; ) {
    for (; i < edges.length && (edges[i]?.at ?? to) <= cursor; i += 1) {
      const edge = edges[i];
      if (edge) open[edge.layer] += edge.step;
    }
    const next = Math.min(edges[i]?.at ?? to, to);
    const state = stateOf(open);
    const last = out[out.length - 1];
    if (last && last.state === state) last.end = next;
    else out.push({ state, start: cursor, end: next });
    cursor = next;
  }
  return out;
}

/** Minutes of each class in `stretches` (classes absent from them are 0). */
export function minutesByState(stretches: Stretch[]): Record<TimelineState, number> {
  const minutes: Record<TimelineState, number> = {
    running: 0,
    down: 0,
    planned: 0,
    "no-data": 0,
    "not-scheduled": 0,
  };
  for (const s of stretches) minutes[s.state] += (s.end - s.start) / MINUTE_MS;
  return minutes;
}
