/**
 * The demo week: what the replay fills in for the days before the running shift, as pure
 * functions of Demo Plant A's recorded rows (the SME data set) and the current instant.
 *
 * The recorded week plays on every real local date as scripts/lib/replay-plan.ts says (the
 * recorded day of the same weekday, at the same time of day). For the closed shift instances
 * of the last 7 days, that is, from the shift instance running 7 days ago to the start of the
 * one running now, it gives what a plant's systems would have recorded then:
 *
 * - every row as a `power` and a `count` sample (up to now), from a day before the window
 *   (what the machines' stop detection reads at the window's start, on a fresh install as
 *   on one that played the days before);
 * - production logs by the rules of the seed (scripts/lib/demo-operations.ts): each
 *   production run cut at the shift boundaries, one log per piece, `count` = its items;
 * - one unplanned stop per alarm run that began before the running shift (open when its
 *   recorded end is still to come).
 *
 * The running shift itself is played as live realtime writes (scripts/lib/replay.ts).
 */
import {
  cutRun,
  type DerivedAlarmStop,
  type DerivedProductionLog,
  PLANT_A_SHIFTS,
  PLANT_A_TIMEZONE,
  type SmeRow,
  smeRuns,
  wallClockInstants,
} from "./demo-operations";
import { playedRows } from "./replay-plan";

const DAY_MS = 24 * 3_600_000;
/** How far back the demo week reaches. */
export const WEEK_MS = 7 * DAY_MS;

/** The shift starts (06:00, 14:00, 22:00 Europe/Rome) in `[from, to]`, ascending, ms. */
export function shiftStarts(from: number, to: number): number[] {
  return wallClockInstants(
    PLANT_A_SHIFTS.map((s) => s.startTime),
    PLANT_A_TIMEZONE,
    from - 1,
    to + 1,
  );
}

/**
 * The window of the demo week at instant `now`.
 *
 * @returns `from`: the start of the shift instance running 7 days before `now`;
 *   `until`: the start of the one running at `now` (ms). Everything in `[from, until)`
 *   belongs to closed shift instances.
 */
export function weekWindow(now: number): { from: number; until: number } {
  const weekAgo = now - WEEK_MS;
  const from = shiftStarts(weekAgo - DAY_MS, weekAgo).at(-1);
  const until = shiftStarts(now - DAY_MS, now).at(-1);
  if (from === undefined || until === undefined) throw new Error("no shift start in a day");
  return { from, until };
}

/** A sample pair of one row: `power` (kW) and `count` (pieces) at `at` (ms). */
export interface WeekSample {
  at: number;
  power: number;
  count: number;
}

/** A stop to create; `end` null while its recorded end is after `now`. */
export type WeekStop = Omit<DerivedAlarmStop, "end" | "rows"> & { end: number | null };

/** What the demo week fills in. */
export interface WeekFill {
  from: number;
  until: number;
  /** Samples by asset, `from - 1 day <= at <= now`, ascending. */
  samples: Map<number, WeekSample[]>;
  /** Production logs of the closed shift instances, by asset then start. */
  productionLogs: DerivedProductionLog[];
  /** Stops that began in `[from, until)`, by asset then start. */
  stops: WeekStop[];
  /** The start of the shift instance that contains each log's start, by log (same order). */
  logShiftStarts: number[];
}

/**
 * The demo week at instant `now` (see the module's comment).
 *
 * @param rowsByAsset the parsed SME rows (`parseSmeRows`).
 * @param now the current instant, ms.
 * @returns the samples, production logs and stops to send.
 */
export function weekFill(
  rowsByAsset: ReadonlyMap<number, readonly SmeRow[]>,
  now: number,
): WeekFill {
  const { from, until } = weekWindow(now);
  const cuts = shiftStarts(from - DAY_MS, now + DAY_MS);
  const samples = new Map<number, WeekSample[]>();
  const productionLogs: DerivedProductionLog[] = [];
  const logShiftStarts: number[] = [];
  const stops: WeekStop[] = [];
  for (const [asset, rows] of playedRows(rowsByAsset, from, now)) {
    samples.set(
      asset,
      rows
        .filter((row) => row.ts >= from - DAY_MS && row.ts <= now)
        .map((row) => ({ at: row.ts, power: row.power, count: row.items })),
    );
    for (const run of smeRuns(rows)) {
      if (run.kind === "production") {
        for (const piece of cutRun(run, cuts)) {
          if (piece.start < from || piece.end > until) continue;
          productionLogs.push({
            asset,
            product: run.product,
            start: piece.start,
            end: piece.end,
            count: piece.items,
          });
          logShiftStarts.push(cuts.filter((cut) => cut <= piece.start).at(-1) ?? from);
        }
      } else if (run.kind === "alarm" && run.start >= from && run.start < until) {
        stops.push({ asset, start: run.start, end: run.end <= now ? run.end : null });
      }
    }
  }
  return { from, until, samples, productionLogs, stops, logShiftStarts };
}
