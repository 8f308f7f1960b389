/**
 * The live figures of a machine's running shift, for its event stream: the production so far
 * (the `count` signal's pulses summed over the instance, as the realtime timeline sums them)
 * and the OEE (exactly as the metrics report computes it: the report's own function, on this
 * machine and instance; the final figures of an ended shift after the realtime read barrier,
 * so that they equal its report row).
 *
 * Why the running shift's figures skip the barrier: it would make every realtime write flush
 * the realtime object's write-behind within a second (src/realtime/realtime-machine.ts), which
 * exists so that a busy line costs D1 one batch per interval. The live OEE may therefore lag
 * realtime writes by the write-behind interval (2 s); the final figures do not.
 */
import { createDb } from "../db/client";
import type { Env } from "../env";
import { syncPendingMachines } from "../realtime/barrier";
import { metricsReport } from "../reports/metrics-report";
import type { ProductionMetrics } from "../reports/oee";
import { sumCountSignal } from "../resources/signals/count-sums";
import { runningInstance } from "../shifts/queries";
import type { EventInput } from "./names";

/** A shift instance in events; instants ISO 8601. */
export interface LiveShift {
  id: number;
  name: string;
  start: string;
  end: string;
  isConsidered: boolean;
}

/** The OEE figures of the metrics report's `productionMetrics` (fractions). */
export type LiveOee = Omit<ProductionMetrics, "minutesLostByLowSpeed" | "minutesLostByLowQuality">;

/** What the stream last emitted, to emit only changes. */
export interface LiveFigures {
  shift: LiveShift & { startMs: number; endMs: number };
  production: { sensorCount: number } | null;
  oee: LiveOee | null;
}

/** The OEE of one instance, from the metrics report; null when the report has no row for it. */
async function reportOee(
  env: Env,
  companyId: number,
  machineId: number,
  instanceStart: number,
  instanceId: number,
  now: number,
  barrier: boolean,
): Promise<LiveOee | null> {
  const db = createDb(env.DB);
  const page = await metricsReport(
    db,
    {
      companyId,
      companyName: "",
      timezone: "UTC",
      credentialId: "events",
      kind: "api_key",
      scopes: new Set(),
      rateLimit: null,
    },
    { machines: { include: [machineId] }, startDate: { equal: instanceStart } },
    { page: 1, limit: 10 },
    now,
    // The final figures wait for the machine's held realtime writes (the read barrier); the
    // live ones do not, so that they leave the write-behind alone.
    async (machineIds) => {
      if (barrier) await syncPendingMachines(env, companyId, machineIds);
    },
  );
  const row = page.rows.find((r) => r.shiftIndicators.indicatorId === instanceId);
  if (!row) return null;
  const m = row.productionMetrics;
  return {
    availability: m.availability,
    netAvailability: m.netAvailability,
    effectiveness: m.effectiveness,
    quality: m.quality,
    oee: m.oee,
    netOee: m.netOee,
  };
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
 * @param env the bindings (D1, the realtime objects).
 * @param previous the figures of the last computation (null = none).
 * @param now the instant, ms.
 * @returns the events (without `machineId`) and the figures to keep (null = no shift runs).
 */
export async function computeLive(
  env: Env,
  companyId: number,
  machineId: number,
  options: { previous: LiveFigures | null; now: number },
): Promise<{ events: Omit<EventInput, "machineId">[]; figures: LiveFigures | null }> {
  const { previous, now } = options;
  const db = createDb(env.DB);
  const events: Omit<EventInput, "machineId">[] = [];
  const instance = await runningInstance(db, companyId, machineId, now);
  const shift = instance
    ? {
        id: instance.id,
        name: instance.name,
        start: new Date(instance.start).toISOString(),
        end: new Date(instance.end).toISOString(),
        isConsidered: instance.isConsidered,
        startMs: instance.start,
        endMs: instance.end,
      }
    : null;
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
      ? await reportOee(
          env,
          companyId,
          machineId,
          previous.shift.startMs,
          previous.shift.id,
          now,
          true,
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

  const [sensorCount = 0] = await sumCountSignal(env, { companyId, machineId }, [
    { start: shift.startMs, end: Math.min(now + 1, shift.endMs) },
  ]);
  const production = { sensorCount };
  if (!same(production, figures.production)) {
    events.push({ type: "production", data: { shiftId: shift.id, ...production } });
    figures = { ...figures, production };
  }
  if (shift.isConsidered) {
    const oee = await reportOee(env, companyId, machineId, shift.startMs, shift.id, now, false);
    if (oee && !same(oee, figures.oee)) {
      events.push({ type: "oee", data: { shiftId: shift.id, final: false, ...oee } });
      figures = { ...figures, oee };
    }
  }
  return { events, figures };
}
