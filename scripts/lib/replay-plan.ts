/**
 * What the demo replay sends, as pure functions of Demo Plant A's real data (the SME data
 * set) and a window of real time: the plant plays its recorded week again, at the current
 * time of day.
 *
 * Each real local date D (Europe/Rome) plays the recorded day with D's weekday from the
 * week of 2022-09-05 (Monday) to 2022-09-11: its rows move by whole local days, so a row
 * recorded at 10:05 local plays at 10:05 local on D. From the rows of each machine
 * (asset), in the order they play:
 *
 * - every row is a `power` and a `count` sample at its instant (kW, pieces);
 * - a production run (rows of one product) whose product differs from the machine's
 *   previous production run is a realtime SKU write at its start;
 * - an alarm run opens an unplanned stop at its start and closes it at its end;
 * - each shift start (06:00, 14:00, 22:00 local) assigns an operator to every machine.
 */
import { TZDate } from "@date-fns/tz";
import {
  PLANT_A_SHIFTS,
  PLANT_A_TIMEZONE,
  type SmeRow,
  skuCode,
  smeRuns,
  wallClockInstants,
} from "./demo-operations";

const DAY_MS = 24 * 3_600_000;

/** The recorded week that plays again: Monday 2022-09-05 to Sunday 2022-09-11 (local). */
export const SOURCE_WEEK_MONDAY = { year: 2022, month: 8, day: 5 } as const;

/** One thing the replay sends, at instant `at` (ms). */
export type ReplayEvent =
  | { kind: "sample"; at: number; asset: number; power: number; count: number }
  | { kind: "sku"; at: number; asset: number; sku: string }
  | { kind: "stop-open"; at: number; asset: number }
  | { kind: "stop-close"; at: number; asset: number; openedAt: number }
  | { kind: "shift-start"; at: number };

/** Local midnight of the date `dayOffset` days after the one containing `instant`. */
function localMidnight(instant: number, dayOffset = 0): TZDate {
  const t = new TZDate(instant, PLANT_A_TIMEZONE);
  return new TZDate(t.getFullYear(), t.getMonth(), t.getDate() + dayOffset, PLANT_A_TIMEZONE);
}

/**
 * How far the recorded day that plays on the local date of `instant` moves: the
 * difference between that date's local midnight and its source day's local midnight.
 *
 * @returns ms to add to a recorded `ts` (whole local days; DST-correct at midnight).
 */
export function replayOffset(instant: number): { sourceStart: number; offset: number } {
  const day = localMidnight(instant);
  const weekday = (day.getDay() + 6) % 7; // 0 = Monday
  const source = new TZDate(
    SOURCE_WEEK_MONDAY.year,
    SOURCE_WEEK_MONDAY.month,
    SOURCE_WEEK_MONDAY.day + weekday,
    PLANT_A_TIMEZONE,
  );
  return { sourceStart: source.getTime(), offset: day.getTime() - source.getTime() };
}

/**
 * The recorded rows of each asset as they play between `from` and `to`, moved to real
 * time, with one local day of context before `from` (so that runs that began earlier
 * are whole).
 */
export function playedRows(
  rowsByAsset: ReadonlyMap<number, readonly SmeRow[]>,
  from: number,
  to: number,
): Map<number, SmeRow[]> {
  const out = new Map<number, SmeRow[]>();
  for (let d = -1; ; d += 1) {
    const day = localMidnight(from, d).getTime();
    if (day >= to) break;
    const next = localMidnight(from, d + 1).getTime();
    const { sourceStart, offset } = replayOffset(day);
    const sourceEnd = sourceStart + (next - day);
    for (const [asset, rows] of rowsByAsset) {
      const list = out.get(asset) ?? [];
      for (const row of rows) {
        if (row.ts < sourceStart || row.ts >= sourceEnd) continue;
        list.push({ ...row, ts: row.ts + offset, end: Math.min(row.end, sourceEnd) + offset });
      }
      out.set(asset, list);
    }
  }
  for (const list of out.values()) list.sort((a, b) => a.ts - b.ts);
  return out;
}

/**
 * The events of the replay with `from < at <= to`, in time order (samples before the
 * other events of the same instant).
 *
 * @param rowsByAsset the parsed SME rows (`parseSmeRows`).
 * @param from window start, ms (excluded); `to` its end (included).
 */
export function replayEvents(
  rowsByAsset: ReadonlyMap<number, readonly SmeRow[]>,
  from: number,
  to: number,
): ReplayEvent[] {
  const events: ReplayEvent[] = [];
  const inWindow = (at: number) => at > from && at <= to;
  for (const [asset, rows] of playedRows(rowsByAsset, from, to)) {
    for (const row of rows) {
      if (inWindow(row.ts)) {
        events.push({ kind: "sample", at: row.ts, asset, power: row.power, count: row.items });
      }
    }
    let product: number | undefined;
    for (const run of smeRuns(rows)) {
      if (run.kind === "production") {
        if (run.product !== product && inWindow(run.start)) {
          events.push({ kind: "sku", at: run.start, asset, sku: skuCode(run.product) });
        }
        product = run.product;
      } else if (run.kind === "alarm") {
        if (inWindow(run.start)) events.push({ kind: "stop-open", at: run.start, asset });
        if (inWindow(run.end)) {
          events.push({ kind: "stop-close", at: run.end, asset, openedAt: run.start });
        }
      }
    }
  }
  const starts = PLANT_A_SHIFTS.map((s) => s.startTime);
  for (const at of wallClockInstants(starts, PLANT_A_TIMEZONE, from, to + 1)) {
    events.push({ kind: "shift-start", at });
  }
  const order = { sample: 0, "shift-start": 1, sku: 2, "stop-open": 3, "stop-close": 4 };
  return events.sort((a, b) => a.at - b.at || order[a.kind] - order[b.kind]);
}

/**
 * The SKU each asset was making at `at` in the replay (the product of its latest
 * production run that began at or before `at`, within the last local day), so that a
 * replay that starts mid-shift can set it at the shift's start.
 *
 * @returns SKU codes by asset; an asset without production that day has none.
 */
export function skusRunningAt(
  rowsByAsset: ReadonlyMap<number, readonly SmeRow[]>,
  at: number,
): Map<number, string> {
  const out = new Map<number, string>();
  for (const [asset, rows] of playedRows(rowsByAsset, at - DAY_MS, at)) {
    for (const run of smeRuns(rows)) {
      if (run.kind === "production" && run.start <= at) out.set(asset, skuCode(run.product));
    }
  }
  return out;
}
