/**
 * A machine with a count signal on a 24-hour shift, for the detection tests: samples in,
 * the detector settled, the stops out through the public stops report.
 */
import { env } from "cloudflare:test";
import { observedStore } from "../fixtures/observed-signal-store";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operatorJson,
  type TestCompany,
} from "../harness";

export const S = 1_000;
export const MIN = 60_000;
export const HOUR = 3_600_000;

export interface DetectedStop {
  id: number;
  startTime: string;
  endTime: string | null;
  isProgrammed: boolean;
  isIncludedInAvailability: boolean;
  isIncludedInStops: boolean;
  isManual: boolean;
}

export interface ReportRow {
  stop: DetectedStop;
  classification: { id: number | null; generalCause: { name: string | null } };
}

export interface Plant {
  co: TestCompany;
  machineId: number;
  count: string;
  /** Ingests `[ms, value]` samples into the count signal and waits for the detector. */
  send(samples: readonly (readonly [number, number])[]): Promise<void>;
  /** Waits for the detector's pending work. */
  settle(): Promise<void>;
  /** The machine's stops in the stops report, by start. */
  stops(): Promise<DetectedStop[]>;
  /** The machine's rows of the stops report, by start. */
  report(): Promise<ReportRow[]>;
}

/**
 * A company in UTC with one machine, its `count` signal and a shift from 00:00 to 00:00
 * every day (or the shifts given).
 */
export async function detectionPlant(
  shifts: { name: string; startTime: string; endTime: string; weekdays?: number[] }[] = [
    { name: "Day", startTime: "00:00", endTime: "00:00" },
  ],
): Promise<Plant> {
  const co = await createCompany({ timezone: "UTC" });
  const [m] = await createMachines(co.id, [{ name: "Press" }]);
  if (!m) throw new Error("no machine");
  if (shifts.length > 0) await operatorJson("POST", `/companies/${co.id}/shifts`, shifts);
  const count = await createSignal(m.id, { name: "count", kind: "counter" });
  const store = () => observedStore(env, co.id, m.id);
  const settle = () => store().settleDetection();
  const report = async (): Promise<ReportRow[]> => {
    const res = await api(co.key, "/v1/reports/stops", {
      method: "POST",
      json: { machines: { include: [m.id] }, limit: 100 },
    });
    if (res.status !== 200) throw new Error(`stops -> ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { stops: ReportRow[] }).stops;
  };
  return {
    co,
    machineId: m.id,
    report,
    count,
    settle,
    async send(samples) {
      await ingest(count, samples);
      await settle();
    },
    async stops() {
      return (await report()).map((r) => r.stop);
    },
  };
}

/** `[t, v]` samples every `periodMs` from `from` (inclusive) to `to` (exclusive). */
export function series(
  from: number,
  to: number,
  periodMs: number,
  value: (t: number) => number,
): [number, number][] {
  const out: [number, number][] = [];
  for (let t = from; t < to; t += periodMs) out.push([t, value(t)]);
  return out;
}

export const iso = (ms: number) => new Date(ms).toISOString();
