/**
 * Fleet B's demo week: its recorded week from Monday 2015-01-19 (UTC, the fleet's zone;
 * 7 failures and 16 maintenance records) played onto the last 7 days at the same weekday and
 * hour, as scripts/lib/replay-plan.ts does for Demo Plant A: the hourly `voltage`,
 * `rotation`, `pressure` and `vibration` samples (operator ingestion, fixed public ids) and
 * the failure and maintenance stops with their classification (component and general
 * cause), by the seed's rules (scripts/lib/demo-operations.ts). Stops still going at `now`
 * are left out (nothing would close them). Fleet B has no count signal and its 24-hour
 * shift is not considered in the reports, so there is no production to replay.
 *
 * Idempotent: a sample at an existing instant replaces it, and a stop is created only when
 * none of its machine starts at the same instant.
 */
import { buildFleetB } from "./demo-data";
import { type DerivedFleetStop, deriveFleetStops } from "./demo-operations";

const DAY_MS = 24 * 3_600_000;

/**
 * What sending needs of a replay (scripts/lib/replay.ts `Replay.call`): one call to the
 * public API with the key, or to the operator API with `operator: true`, JSON in and out.
 */
export interface ApiCaller {
  call<T>(path: string, init?: { method?: string; body?: unknown; operator?: boolean }): Promise<T>;
}
/** The recorded week of Fleet B that plays again: Monday 2015-01-19, 00:00 UTC. */
export const FLEET_SOURCE_MONDAY = Date.UTC(2015, 0, 19);

/** The source files, as text (data/azure-pdm/). */
export interface FleetFiles {
  telemetry: string;
  machines: string;
  failures: string;
  maintenance: string;
}

/** What the week sends. */
export interface FleetWeek {
  /** By signal public id: instants (ms) and values, ascending. */
  samples: Map<string, { at: number[]; values: number[] }>;
  /** The stops that began and ended in `[now - 7 days, now]`, moved to real time. */
  stops: DerivedFleetStop[];
}

/** How far the recorded day that plays on the UTC date of `instant` moves, ms. */
export function fleetOffset(instant: number): { sourceStart: number; offset: number } {
  const day = Math.floor(instant / DAY_MS) * DAY_MS;
  const weekday = (new Date(day).getUTCDay() + 6) % 7; // 0 = Monday
  const sourceStart = FLEET_SOURCE_MONDAY + weekday * DAY_MS;
  return { sourceStart, offset: day - sourceStart };
}

/**
 * Fleet B's week at instant `now`: what played in `[now - 7 days, now]`.
 *
 * @throws Error on a malformed file.
 */
export function fleetWeek(files: FleetFiles, now: number): FleetWeek {
  const from = now - 7 * DAY_MS;
  const fleet = buildFleetB(files.telemetry, files.machines);
  const samples = new Map<string, { at: number[]; values: number[] }>();
  const stops: DerivedFleetStop[] = [];
  const period = { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };
  for (let day = Math.floor(from / DAY_MS) * DAY_MS; day <= now; day += DAY_MS) {
    const { sourceStart, offset } = fleetOffset(day);
    for (const machine of fleet.machines) {
      for (const signal of machine.signals) {
        const id = signal.input.publicId ?? "";
        const series = samples.get(id) ?? { at: [], values: [] };
        for (const sample of signal.samples) {
          const t = Date.parse(sample.timestamp);
          period.min = Math.min(period.min, t);
          period.max = Math.max(period.max, t);
          if (t < sourceStart || t >= sourceStart + DAY_MS) continue;
          const at = t + offset;
          if (at < from || at > now) continue;
          series.at.push(at);
          series.values.push(sample.value);
        }
        samples.set(id, series);
      }
    }
  }
  const recorded = deriveFleetStops(files.failures, files.maintenance, period.min, period.max);
  for (let day = Math.floor(from / DAY_MS) * DAY_MS; day <= now; day += DAY_MS) {
    const { sourceStart, offset } = fleetOffset(day);
    for (const stop of recorded) {
      if (stop.start < sourceStart || stop.start >= sourceStart + DAY_MS) continue;
      const moved = { ...stop, start: stop.start + offset, end: stop.end + offset };
      if (moved.start >= from && moved.end <= now) stops.push(moved);
    }
  }
  for (const series of samples.values()) {
    const order = series.at
      .map((_, i) => i)
      .sort((a, b) => (series.at[a] ?? 0) - (series.at[b] ?? 0));
    series.at = order.map((i) => series.at[i] ?? 0);
    series.values = order.map((i) => series.values[i] ?? 0);
  }
  stops.sort((a, b) => a.machine - b.machine || a.start - b.start);
  return { samples, stops };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Sends Fleet B's week through `replay` (made with a Fleet B key; its `resolve` is not
 * needed). Machines are found by name ("Machine n") from `GET /v1/machines`.
 *
 * @returns the samples sent and the stops created (with their classification).
 * @throws CallError on an answer other than 2XX.
 */
export async function fillFleetWeek(
  replay: ApiCaller,
  files: FleetFiles,
  now: number,
): Promise<{ samples: number; stops: number }> {
  const week = fleetWeek(files, now);
  let samples = 0;
  for (const [publicId, series] of week.samples) {
    if (series.at.length === 0) continue;
    await replay.call(`/operator/v1/signals/${publicId}/samples`, {
      operator: true,
      body: { timestamps: series.at.map(iso), values: series.values },
    });
    samples += series.at.length;
  }
  const machines = await replay.call<{ id: number; name: string }[]>("/v1/machines");
  const idOf = new Map(machines.map((m) => [m.name, m.id]));
  const existing = new Set<string>();
  for (let page = 1; ; page++) {
    const body = await replay.call<{
      totalPages: number;
      stops: { machine: { id: number }; stop: { startTime: string } }[];
    }>("/v1/reports/stops", {
      body: { startDate: { after: iso(now - 8 * DAY_MS) }, limit: 100, page },
    });
    for (const row of body.stops)
      existing.add(`${row.machine.id}:${Date.parse(row.stop.startTime)}`);
    if (page >= body.totalPages) break;
  }
  let created = 0;
  for (const stop of week.stops) {
    const machineId = idOf.get(`Machine ${stop.machine}`);
    if (machineId === undefined || existing.has(`${machineId}:${stop.start}`)) continue;
    const [row] = await replay.call<{ id: number }[]>(`/operator/v1/machines/${machineId}/stops`, {
      operator: true,
      body: [
        { startTime: iso(stop.start), endTime: iso(stop.end), isProgrammed: stop.isProgrammed },
      ],
    });
    if (!row) continue;
    await replay.call(`/operator/v1/stops/${row.id}/classification`, {
      method: "PUT",
      operator: true,
      body: { component: { name: stop.component }, generalCause: { name: stop.generalCause } },
    });
    existing.add(`${machineId}:${stop.start}`);
    created += 1;
  }
  return { samples, stops: created };
}
