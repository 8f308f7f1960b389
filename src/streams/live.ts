/**
 * The live figures of a machine's running shift, for its stream: production and OEE so far,
 * computed from memory (`LiveState`) with the metrics report's own functions (src/reports/oee.ts)
 * on the instance's stops and logs, read from D1 once per instance and kept current by the
 * realtime flushes (./live-inputs.ts). They skip the read barrier (so may lag a realtime write
 * by the write-behind interval); an ended shift's final figures are the report's own row.
 * docs/stream-events.md ("Event types"), docs/scaling.md (its D1 cost).
 */

import { companyScope, loadNamedScope } from "../db/company-scope";
import { type FlushHeldWrites, syncPendingMachines } from "../durable/realtime-barrier";
import type { Env } from "../env";
import { metricsReport } from "../reports/metrics-report";
import {
  computeProductionMetrics,
  OEE_FIGURES,
  type OeeFigure,
  type OeeFigures,
  type ProductionMetrics,
} from "../reports/oee";
import { computeShiftIndicators } from "../reports/shift-time";
import { sumCountSignal } from "../resources/signals/count-sums";
import { instanceContains } from "../shifts/instances";
import { runningInstance } from "../shifts/queries";
import { MINUTE_MS } from "../time/units";
import {
  applyLogChange,
  type InstanceInputs,
  type LiveLogChange,
  type LiveLogSpan,
  loadInstanceInputs,
  RELOAD_MS,
  spansOf,
} from "./live-inputs";
import type { StreamEventInput } from "./names";

/** Most stops and logs of an instance kept in the stream object's storage (see `LiveState`). */
export const MAX_STORED_SPANS = 1_000;

/** How long "this machine runs no shift now" is kept before D1 is asked again, ms. */
const NO_SHIFT_RECHECK_MS = MINUTE_MS;

/**
 * What a machine stream keeps for its live figures: in memory, and in the object's storage
 * so that an eviction does not cost a read from D1. One tick at a time uses it; changes
 * told meanwhile are applied at once, or after the read in flight.
 */
export class LiveState {
  /** The running instance's stops and logs (null: not read yet, or no instance). */
  private kept: InstanceInputs | null = null;
  private restored = false;

  /**
   * @param storage keeps the inputs across an eviction of the object (its SQLite), so that
   *   an object woken by the next sample does not read them from D1 again.
   */
  constructor(private readonly storage: { get(): string | null; set(text: string | null): void }) {}

  /** The inputs, from memory or (after an eviction) from the object's storage. */
  get inputs(): InstanceInputs | null {
    if (!this.restored) {
      this.restored = true;
      const text = this.storage.get();
      if (text !== null) {
        const { logs, ...rest } = JSON.parse(text) as Omit<InstanceInputs, "logs"> & {
          logs: LiveLogSpan[];
        };
        this.kept = { ...rest, logs: new Map(logs.map((l) => [l.id, l])) };
      }
    }
    return this.kept;
  }

  set inputs(inputs: InstanceInputs | null) {
    this.restored = true;
    this.kept = inputs;
    // A shift of thousands of logs is not copied on every change (and would pass the 2 MB
    // of a stored value): after an eviction it is read from D1 again instead.
    const small = inputs !== null && inputs.logs.size + inputs.stops.length <= MAX_STORED_SPANS;
    this.storage.set(
      inputs && small ? JSON.stringify({ ...inputs, logs: [...inputs.logs.values()] }) : null,
    );
  }

  /** The stops changed (a stop event): read them again at the next tick. */
  stale = false;
  /** No shift ran at the last look: do not ask D1 again before this instant, ms. */
  noShiftUntil = 0;
  /** Log changes told while a read is in flight, applied after it. */
  private held: LiveLogChange[] | null = null;

  /** The stream was told a realtime flush's log changes. */
  tell(change: LiveLogChange): void {
    if (this.held) {
      this.held.push(change);
      return;
    }
    const inputs = this.inputs;
    if (!inputs) return;
    // Applied: stored again; for another instance: forgotten, read at the next tick.
    this.inputs = applyLogChange(inputs, change) ? inputs : null;
  }

  /**
   * Whether an event makes the figures stale (and marks the stops for a new read when it is a
   * stop's). Not the figures' own events, not the realtime writes' (a write reaches the
   * figures through the logs its object's flush writes and tells), not a stop's that cannot
   * touch the instance the figures hold (`outsideInstance`), and not a stop's
   * classification: no live figure depends on it (a stop's reason counts only in the
   * report's annotated downtime, which no event carries), and a recomputation is work a
   * person giving a reason at the machine would share the runtime with, for no event.
   */
  note(input: Pick<StreamEventInput, "type" | "data">): boolean {
    const { type } = input;
    if (type === "stop.classified" || type === "stop.unclassified") return false;
    if (type.startsWith("stop.")) {
      if (this.outsideInstance(input)) return false;
      this.stale = true;
    }
    return !(
      type === "production" ||
      type === "oee" ||
      type === "segment.changed" ||
      type === "segment.updated" ||
      type === "operator.assigned"
    );
  }

  /**
   * True when a stop's event cannot change the held instance's figures: a stop that starts
   * (`stop.started`), ends (`stop.ended`) or goes (`stop.deleted`) wholly outside the held
   * instance, and is not one of its open stops (a stop the figures hold as open that ends
   * now is their change, wherever it ends). So a backfill of history, whose detected stops
   * end long before the running shift, costs the live figures no read of D1. An update
   * (which does not carry the stop's former span) always counts.
   */
  private outsideInstance(input: Pick<StreamEventInput, "type" | "data">): boolean {
    if (
      input.type !== "stop.started" &&
      input.type !== "stop.ended" &&
      input.type !== "stop.deleted"
    ) {
      return false;
    }
    const kept = this.inputs;
    const stop = (input.data as { stop?: { startTime?: unknown; endTime?: unknown } } | null)?.stop;
    if (!kept || typeof stop?.startTime !== "string") return false;
    const start = Date.parse(stop.startTime);
    const end =
      typeof stop.endTime === "string" ? Date.parse(stop.endTime) : Number.POSITIVE_INFINITY;
    if (!Number.isFinite(start) || Number.isNaN(end)) return false;
    if (start < kept.end && end > kept.start) return false;
    return !kept.stops.some((s) => s.end === null && s.start === start);
  }

  /** The inputs of `shift` at `now`: from memory, or read from D1 when missing or stale. */
  async inputsFor(
    env: Env,
    machine: { companyId: number; machineId: number },
    shift: { id: number; startMs: number; endMs: number },
    now: number,
  ): Promise<InstanceInputs> {
    const kept = this.inputs;
    if (kept && kept.instanceId === shift.id && !this.stale && now - kept.loadedAt < RELOAD_MS) {
      return kept;
    }
    this.stale = false;
    this.held = [];
    try {
      const loaded = await loadInstanceInputs(
        await companyScope(env, machine.companyId),
        machine,
        { instanceId: shift.id, start: shift.startMs, end: shift.endMs },
        now,
      );
      for (const change of this.held) applyLogChange(loaded, change);
      this.inputs = loaded;
      return loaded;
    } finally {
      this.held = null;
    }
  }
}

/** The figures of the live `oee` event, out of a report row's `productionMetrics`: the OEE figure list. */
function liveOeeOf(m: ProductionMetrics): LiveOee {
  const figures = { aboveNominalSpeed: m.aboveNominalSpeed } as LiveOee;
  for (const figure of Object.keys(OEE_FIGURES) as OeeFigure[]) figures[figure] = m[figure];
  return figures;
}

/** The live OEE of one instance from its inputs (the report's functions, at `now`). */
export function liveOee(inputs: InstanceInputs, now: number): LiveOee {
  const { stops, overlapping, owned } = spansOf(inputs);
  const indicators = computeShiftIndicators(
    { start: inputs.start, end: inputs.end },
    stops,
    overlapping,
    now,
  );
  return liveOeeOf(computeProductionMetrics(indicators, owned));
}

/** A shift instance in events; instants ISO 8601. */
export interface LiveShift {
  id: number;
  name: string;
  start: string;
  end: string;
  isConsidered: boolean;
}

/** The OEE figures of the metrics report's `productionMetrics` (fractions, null without a denominator). */
export type LiveOee = OeeFigures;

/** What the stream last emitted, to emit only changes. */
export interface LiveFigures {
  shift: LiveShift & { startMs: number; endMs: number };
  production: { sensorCount: number } | null;
  oee: LiveOee | null;
}

/**
 * The final OEE of an ended instance: its metrics-report row after the realtime read
 * barrier (once per instance); null when the report has no row for it.
 */
async function finalOee(
  env: Env,
  heldWrites: FlushHeldWrites,
  companyId: number,
  machineId: number,
  instanceStart: number,
  instanceId: number,
  now: number,
): Promise<LiveOee | null> {
  // The company's row, read once per ended instance: the report shows its name.
  const scope = await loadNamedScope(env, companyId);
  if (!scope) return null;
  const page = await metricsReport(
    scope,
    { machines: { include: [machineId] }, startDate: { equal: instanceStart } },
    { page: 1, limit: 10 },
    now,
    // The final figures wait for the machine's held realtime writes (the read barrier).
    (machineIds) => syncPendingMachines(heldWrites, scope, machineIds),
  );
  const row = page.rows.find((r) => r.shiftIndicators.indicatorId === instanceId);
  if (!row) return null;
  return liveOeeOf(row.productionMetrics);
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Recomputes a machine's live figures and says which events that makes.
 *
 * Events, in order: when the running instance changed, the previous shift's final `oee`
 * (`final: true`, when the report has a row for it) and `shift.ended`, then `shift.started`;
 * then `production` and `oee` of the running shift when they differ from `previous`.
 *
 * @param env the bindings (D1, the signal stores).
 * @param options.heldWrites flushes a machine's realtime object (the read barrier before the
 *   final figures; src/index.ts hands the realtime layer's `heldWritesOf`).
 * @param options.previous the figures of the last computation (null = none).
 * @param options.state what the stream keeps in memory (`LiveState`).
 * @param options.now the instant, ms.
 * @returns the events (without `machineId`) and the figures to keep (null = no shift runs).
 */
export async function computeLive(
  env: Env,
  companyId: number,
  machineId: number,
  options: {
    heldWrites: FlushHeldWrites;
    previous: LiveFigures | null;
    state: LiveState;
    now: number;
  },
): Promise<{ events: Omit<StreamEventInput, "machineId">[]; figures: LiveFigures | null }> {
  const { previous, state, now } = options;
  const events: Omit<StreamEventInput, "machineId">[] = [];
  const shift = await currentShift(env, companyId, machineId, previous, state, now);
  const publicShift = (s: LiveFigures["shift"]): LiveShift => ({
    id: s.id,
    name: s.name,
    start: s.start,
    end: s.end,
    isConsidered: s.isConsidered,
  });
  let figures: LiveFigures | null =
    previous && shift && previous.shift.id === shift.id ? previous : null;

  if (previous && previous.shift.id !== shift?.id) {
    const final = previous.shift.isConsidered
      ? await finalOee(
          env,
          options.heldWrites,
          companyId,
          machineId,
          previous.shift.startMs,
          previous.shift.id,
          now,
        )
      : null;
    if (final) {
      events.push({
        type: "oee",
        at: Math.min(now, previous.shift.endMs),
        data: { shiftId: previous.shift.id, final: true, ...final },
      });
    }
    events.push({
      type: "shift.ended",
      at: Math.min(now, previous.shift.endMs),
      data: { shift: publicShift(previous.shift) },
    });
  }
  if (!shift) return { events, figures: null };
  if (!figures) {
    events.push({ type: "shift.started", at: shift.startMs, data: { shift: publicShift(shift) } });
    figures = { shift, production: null, oee: null };
  }

  const machine = { companyId, machineId };
  const [sensorCount = 0] = await sumCountSignal(env, machine, [
    { start: shift.startMs, end: Math.min(now + 1, shift.endMs) },
  ]);
  const production = { sensorCount };
  if (!same(production, figures.production)) {
    events.push({ type: "production", data: { shiftId: shift.id, ...production } });
    figures = { ...figures, production };
  }
  if (shift.isConsidered) {
    const oee = liveOee(await state.inputsFor(env, machine, shift, now), now);
    if (!same(oee, figures.oee)) {
      events.push({ type: "oee", data: { shiftId: shift.id, final: false, ...oee } });
      figures = { ...figures, oee };
    }
  }
  return { events, figures };
}

/**
 * The machine's running instance at `now`: the one of `previous` while it runs (no D1),
 * else D1's (`runningInstance`, a read once the instance is stored), and "none" kept for
 * `NO_SHIFT_RECHECK_MS`.
 */
async function currentShift(
  env: Env,
  companyId: number,
  machineId: number,
  previous: LiveFigures | null,
  state: LiveState,
  now: number,
): Promise<LiveFigures["shift"] | null> {
  if (
    previous &&
    instanceContains({ start: previous.shift.startMs, end: previous.shift.endMs }, now)
  ) {
    return previous.shift;
  }
  if (!previous && now < state.noShiftUntil) return null;
  const instance = await runningInstance(await companyScope(env, companyId), machineId, now);
  if (!instance) {
    state.noShiftUntil = now + NO_SHIFT_RECHECK_MS;
    return null;
  }
  state.noShiftUntil = 0;
  return {
    id: instance.id,
    name: instance.name,
    start: new Date(instance.start).toISOString(),
    end: new Date(instance.end).toISOString(),
    isConsidered: instance.isConsidered,
    startMs: instance.start,
    endMs: instance.end,
  };
}
