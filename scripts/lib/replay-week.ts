/**
 * Sends the demo week (scripts/lib/replay-week-plan.ts) to a deployment, as the plant's
 * systems would have sent it at the time: samples through operator ingestion, production
 * logs of the closed shifts through the public API (`POST /v1/production-logs`, as a
 * partner's MES would), unplanned stops through the operator API.
 *
 * Idempotent, so that every `npm start` can run it: a sample at an instant that already
 * has one replaces it; a machine's shift instance that already has a production log (from
 * an earlier fill, or played live by an earlier replay) gets none; a stop is created only
 * when none of the machine starts at the same instant (an open one is closed when its
 * recorded end has passed).
 */
import { DEMO_PLANT_A } from "./demo-data";
import { IDLE_SHIFT, idleShifts, plantAWeekends, type SmeRow, skuCode } from "./demo-operations";
import { playedRows } from "./replay-plan";
import { type WeekFill, weekFill } from "./replay-week-plan";

/**
 * What the fill uses of a replay (`Replay` of ./replay.ts is one, after its `resolve`):
 * declared here so that replay.ts, which runs the fill, is the only one of the two files
 * that imports the other.
 */
export interface WeekReplay {
  /** The recorded rows by asset. */
  readonly rows: Map<number, SmeRow[]>;
  /** The "Asset N" machines by asset number, with their signals' public ids. */
  readonly machines: Map<number, { id: number; powerId: string; countId: string }>;
  /** Open stops created, by `machineId:startMs`, for closing them later. */
  readonly openStops: Map<string, number>;
  /** One call, JSON in and out (see `Replay.call`); throws on an answer other than 2XX. */
  call<T>(path: string, init?: { method?: string; body?: unknown; operator?: boolean }): Promise<T>;
}

/** What the fill sent. */
export interface WeekCounts {
  samples: number;
  productionLogs: number;
  /** Machine shift instances that already had logs, left as they were. */
  shiftsKept: number;
  stopsCreated: number;
  stopsClosed: number;
  /** Closures of the plant calendar new this time (weekends, shifts not run; the others existed). */
  closuresCreated: number;
}

/** Items per create call (the API takes at most 1,000). */
const CHUNK = 1_000;
/** Samples per ingestion call (the operator API takes at most 10,000). */
const SAMPLE_CHUNK = 10_000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Fills the last 7 days before the running shift.
 *
 * @param replay a replay whose `resolve` has run.
 * @param now the current instant, ms.
 * @returns what was sent, and the plan (its `until` is where live play begins).
 * @throws CallError on an answer other than 2XX.
 */
export async function fillWeek(
  replay: WeekReplay,
  now: number,
): Promise<{ counts: WeekCounts; plan: WeekFill }> {
  const plan = weekFill(replay.rows, now);
  const counts: WeekCounts = {
    samples: 0,
    productionLogs: 0,
    shiftsKept: 0,
    stopsCreated: 0,
    stopsClosed: 0,
    closuresCreated: 0,
  };
  // The weekends first: the samples of a closed day make no detected stop (the recorded
  // plant stood still on them; docs/demo-data.md).
  await sendWeekends(replay, plan, now, counts);
  // The recorded stops before the samples: the machines' stop detection then never makes a
  // stop of the time an alarm stop takes (docs/machine-state.md).
  await sendStops(replay, plan, counts);
  for (const [asset, machine] of replay.machines) {
    const samples = plan.samples.get(asset) ?? [];
    for (let i = 0; i < samples.length; i += SAMPLE_CHUNK) {
      const chunk = samples.slice(i, i + SAMPLE_CHUNK);
      const timestamps = chunk.map((s) => iso(s.at));
      for (const [id, values] of [
        [machine.powerId, chunk.map((s) => s.power)],
        [machine.countId, chunk.map((s) => s.count)],
      ] as const) {
        await replay.call(`/operator/v1/signals/${id}/samples`, {
          operator: true,
          body: { timestamps, values },
        });
        counts.samples += chunk.length;
      }
    }
  }
  await sendProductionLogs(replay, plan, counts);
  return { counts, plan };
}

/** How far ahead the weekends are closed: a server left running keeps its calendar. */
const CALENDAR_AHEAD_MS = 28 * 86_400_000;

/**
 * Closes Demo Plant A's weekends from the day before the week to 4 weeks ahead, and the
 * weekday shifts a machine did not run in the rows sent (`idleShifts`), through the operator
 * API's plant calendar (idempotent: a closure that exists is answered as is).
 */
async function sendWeekends(
  replay: WeekReplay,
  plan: WeekFill,
  now: number,
  counts: WeekCounts,
): Promise<void> {
  const companies = await replay.call<{ id: number; name: string }[]>("/operator/v1/companies", {
    operator: true,
  });
  const company = companies.find((c) => c.name === DEMO_PLANT_A);
  if (!company) return;
  const path = `/operator/v1/companies/${company.id}/closures`;
  const before = await replay.call<unknown[]>(path, { operator: true });
  const weekends = plantAWeekends(plan.from - 86_400_000, now + CALENDAR_AHEAD_MS);
  // The shifts a machine did not run, among those the samples sent cover wholly (from a
  // day before the week to now): the same rows the machines' detection reads.
  const sent = new Map(
    [...playedRows(replay.rows, plan.from - 86_400_000, now + 1)].map(([asset, rows]) => [
      asset,
      rows.filter((row) => row.ts >= plan.from - 86_400_000 && row.ts <= now),
    ]),
  );
  const idle = idleShifts(sent).flatMap((shift) => {
    const machine = replay.machines.get(shift.asset);
    return machine
      ? [{ name: IDLE_SHIFT, start: iso(shift.start), end: iso(shift.end), machineId: machine.id }]
      : [];
  });
  await replay.call(path, { operator: true, body: [...weekends, ...idle] });
  const after = await replay.call<unknown[]>(path, { operator: true });
  counts.closuresCreated += after.length - before.length;
}

/** The shift instances (`machineId:startMs`) that already have a production log. */
async function shiftsWithLogs(replay: WeekReplay, plan: WeekFill): Promise<Set<string>> {
  const ids = [...replay.machines.values()].map((m) => m.id);
  const out = new Set<string>();
  for (let page = 1; ; page++) {
    const body = await replay.call<{
      totalPages: number;
      productionLogs: { machineId: number; shift: { start: string } | null }[];
    }>("/v1/production-logs/filters", {
      body: {
        machines: { include: ids },
        start: { between: { start: iso(plan.from), end: iso(plan.until) } },
        limit: 100,
        page,
      },
    });
    for (const log of body.productionLogs) {
      if (log.shift) out.add(`${log.machineId}:${Date.parse(log.shift.start)}`);
    }
    if (page >= body.totalPages) return out;
  }
}

async function sendProductionLogs(
  replay: WeekReplay,
  plan: WeekFill,
  counts: WeekCounts,
): Promise<void> {
  const existing = await shiftsWithLogs(replay, plan);
  const kept = new Set<string>();
  const logs = [];
  for (const [i, log] of plan.productionLogs.entries()) {
    const machine = replay.machines.get(log.asset);
    if (!machine) continue;
    const shift = `${machine.id}:${plan.logShiftStarts[i]}`;
    if (existing.has(shift)) {
      kept.add(shift);
      continue;
    }
    logs.push({
      start: iso(log.start),
      end: iso(log.end),
      count: log.count,
      type: "total",
      machine: { id: machine.id },
      // By code: the same on every install, unlike the SKU's id.
      sku: { name: skuCode(log.product) },
    });
  }
  for (let i = 0; i < logs.length; i += CHUNK) {
    await replay.call("/v1/production-logs", { body: logs.slice(i, i + CHUNK) });
  }
  counts.productionLogs += logs.length;
  counts.shiftsKept += kept.size;
}

/** The stops of the replayed machines that start in the week: `machineId:startMs` → stop. */
async function existingStops(
  replay: WeekReplay,
  plan: WeekFill,
): Promise<Map<string, { id: number; open: boolean }>> {
  const ids = [...replay.machines.values()].map((m) => m.id);
  const out = new Map<string, { id: number; open: boolean }>();
  for (let page = 1; ; page++) {
    const body = await replay.call<{
      totalPages: number;
      stops: {
        machine: { id: number };
        stop: { id: number; startTime: string; endTime: string | null; isManual: boolean };
      }[];
    }>("/v1/reports/stops", {
      body: {
        machines: { include: ids },
        startDate: { between: { start: iso(plan.from), end: iso(plan.until) } },
        limit: 100,
        page,
      },
    });
    for (const row of body.stops) {
      // The alarm stops the replay recorded, not the ones the count signal detected.
      if (!row.stop.isManual) continue;
      out.set(`${row.machine.id}:${Date.parse(row.stop.startTime)}`, {
        id: row.stop.id,
        open: row.stop.endTime === null,
      });
    }
    if (page >= body.totalPages) return out;
  }
}

async function sendStops(replay: WeekReplay, plan: WeekFill, counts: WeekCounts): Promise<void> {
  const existing = await existingStops(replay, plan);
  const byMachine = new Map<number, { startTime: string; endTime: string | null; key: string }[]>();
  for (const stop of plan.stops) {
    const machine = replay.machines.get(stop.asset);
    if (!machine) continue;
    const key = `${machine.id}:${stop.start}`;
    const found = existing.get(key);
    if (found) {
      if (found.open && stop.end !== null) {
        await replay.call(`/operator/v1/stops/${found.id}`, {
          method: "PATCH",
          operator: true,
          body: { endTime: iso(stop.end) },
        });
        counts.stopsClosed += 1;
      } else if (found.open) {
        replay.openStops.set(key, found.id);
      }
      continue;
    }
    const list = byMachine.get(machine.id) ?? [];
    list.push({
      startTime: iso(stop.start),
      endTime: stop.end === null ? null : iso(stop.end),
      key,
    });
    byMachine.set(machine.id, list);
  }
  for (const [machineId, stops] of byMachine) {
    const created = await replay.call<{ id: number }[]>(
      `/operator/v1/machines/${machineId}/stops`,
      {
        operator: true,
        body: stops.map((s) => ({
          startTime: s.startTime,
          endTime: s.endTime,
          isProgrammed: false,
          isIncludedInAvailability: true,
          isIncludedInStops: true,
          isManual: true,
        })),
      },
    );
    created.forEach((row, i) => {
      const stop = stops[i];
      if (stop && stop.endTime === null) replay.openStops.set(stop.key, row.id);
    });
    counts.stopsCreated += stops.length;
  }
}
