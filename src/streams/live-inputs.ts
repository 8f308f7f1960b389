/**
 * What a machine stream computes its live OEE from, held in memory: the running instance's
 * stops and logs, read from D1 by the report's own reader (`loadPageSpans`) once per instance,
 * on a `stop.*` event and every `RELOAD_MS`, and kept current between reads by the logs each
 * realtime flush wrote (`LiveLogChange`). So a tick reads no D1 and computes from the same
 * records the report would read. docs/scaling.md ("What a busy machine costs D1").
 */
import type { CompanyScope } from "../db/company-scope";
import type { LogSpan, StopSpan } from "../reports/oee";
import { loadPageSpans } from "../reports/page-spans";
import { instanceContains, overlapsInstance } from "../shifts/instances";
import { MINUTE_MS } from "../time/units";

/** How often the inputs are read again even when nothing said they changed, ms. */
export const RELOAD_MS = 15 * MINUTE_MS;

/** A production log as the live figures keep it: its span, and its id to update it by. */
export interface LiveLogSpan extends LogSpan {
  id: string;
}

/**
 * What one flush of a realtime object changed in D1: the logs it wrote (as D1 stored them)
 * and the ones it removed, for its instance.
 */
export interface LiveLogChange {
  instanceId: number;
  upserted: LiveLogSpan[];
  removed: string[];
}

/** The stops and logs of one instance, as last read or told. */
export interface InstanceInputs {
  instanceId: number;
  start: number;
  end: number;
  stops: StopSpan[];
  logs: Map<string, LiveLogSpan>;
  /** When they were read from D1, ms. */
  loadedAt: number;
}

/**
 * Reads the stops and production logs of one machine that overlap `[start, end)` through
 * the metrics report's own reader (`loadPageSpans`, src/reports/page-spans.ts: deleted ones
 * left out, closed ones from the machine's longest one before the window, open stops by
 * (machine, end_time)), with each log's id: the live figures and the report read the same
 * records the same way.
 *
 * @param scope the machine's company.
 * @param machine the company and machine (internal ids).
 * @param window the instance, ms.
 * @param now the instant of the read, ms (kept as `loadedAt`).
 */
export async function loadInstanceInputs(
  scope: CompanyScope,
  machine: { companyId: number; machineId: number },
  window: { instanceId: number; start: number; end: number },
  now: number,
): Promise<InstanceInputs> {
  const { machineId } = machine;
  const { start, end } = window;
  const spans = await loadPageSpans(scope, [{ machineId, start, end }], "identified");
  const byId = new Map<string, LiveLogSpan>();
  for (const l of spans.logsOverlapping(machineId, start, end)) {
    if (l.id === undefined) continue;
    byId.set(l.id, {
      id: l.id,
      start: l.start,
      end: l.end,
      type: l.type,
      count: l.count,
      nominalSpeed: l.nominalSpeed,
    });
  }
  const stops = spans.stopsOverlapping(machineId, start, end).map(
    (s): StopSpan => ({
      start: s.start,
      end: s.end,
      isProgrammed: s.isProgrammed,
      isIncludedInAvailability: s.isIncludedInAvailability,
      isClassified: s.isClassified,
    }),
  );
  return { ...window, stops, logs: byId, loadedAt: now };
}

/**
 * Applies what a realtime flush wrote to the inputs it concerns (the same instance).
 *
 * @returns false when the change is for another instance (the inputs are left as they are).
 */
export function applyLogChange(inputs: InstanceInputs, change: LiveLogChange): boolean {
  if (change.instanceId !== inputs.instanceId) return false;
  for (const id of change.removed) inputs.logs.delete(id);
  for (const log of change.upserted) inputs.logs.set(log.id, { ...log });
  return true;
}

/** The inputs' stops and logs as the report's functions take them, for `[start, end)`. */
export function spansOf(inputs: InstanceInputs): {
  stops: StopSpan[];
  overlapping: LiveLogSpan[];
  owned: LiveLogSpan[];
} {
  const logs = [...inputs.logs.values()].sort((a, b) => a.start - b.start);
  return {
    stops: inputs.stops.filter((s) =>
      overlapsInstance(inputs, { start: s.start, end: s.end ?? Number.POSITIVE_INFINITY }),
    ),
    overlapping: logs.filter((l) => overlapsInstance(inputs, l)),
    // docs/metrics.md: a log belongs to the instance that contains its start.
    owned: logs.filter((l) => instanceContains(inputs, l.start)),
  };
}
