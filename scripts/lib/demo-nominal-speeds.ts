/**
 * The nominal speeds of Demo Plant A, from what its recorded machines do (data/README.md,
 * "Nominal speeds"): each machine/product pair starts at the 95th percentile of its automatic
 * rate, then is raised where a recorded shift instance would run above it, so that no shift
 * of the recording has an effectiveness above 1 (docs/metrics.md, "Speed above nominal").
 */
import { detectedStops, type Interval, joined, lengthOf, without } from "./demo-detected-stops";
import {
  isRateRow,
  nearestRankPercentile,
  PLANT_A_SHIFTS,
  PLANT_A_TIMEZONE,
  rowKind,
  type SmeRow,
  wallClockInstants,
} from "./demo-operations";

/** Percentile of the automatic production rate a nominal speed starts from. */
export const NOMINAL_SPEED_PERCENTILE = 95;

/** Rounds rates of the fit: at most this many passes over the shifts (each raises a speed). */
const MAX_FIT_PASSES = 50;

/** A derived nominal speed. */
export interface DerivedNominalSpeed {
  asset: number;
  product: number;
  /** Pieces per minute, a multiple of 0.1. */
  nominalSpeed: number;
  /** How many rate rows it comes from (0 = the machine-wide fallback). */
  rateRows: number;
}

/** Rounds a rate up to 0.1 piece/min, never below 0.1 (the API wants > 0). */
function roundRateUp(rate: number): number {
  return Math.max(0.1, Math.ceil(rate * 10 - 1e-9) / 10);
}

/**
 * The starting speed of every (asset, product) pair that has production rows: the
 * {@link NOMINAL_SPEED_PERCENTILE}th percentile (nearest rank) of `items / 5` over the
 * pair's rate rows (`isRateRow`), rounded up to 0.1 piece/min. A pair without rate rows gets
 * the same percentile over all rate rows of its machine (none in this data).
 *
 * @throws Error when a machine with production has no rate row at all.
 */
function percentileSpeeds(rowsByAsset: Map<number, SmeRow[]>): DerivedNominalSpeed[] {
  const out: DerivedNominalSpeed[] = [];
  for (const [asset, rows] of rowsByAsset) {
    const products = new Set<number>();
    const byProduct = new Map<number, number[]>();
    const all: number[] = [];
    for (const row of rows) {
      if (rowKind(row) === "production") products.add(row.product);
      if (!isRateRow(row)) continue;
      const rate = row.items / 5;
      all.push(rate);
      byProduct.set(row.product, [...(byProduct.get(row.product) ?? []), rate]);
    }
    all.sort((a, b) => a - b);
    for (const product of [...products].sort((a, b) => a - b)) {
      const rates = (byProduct.get(product) ?? []).sort((a, b) => a - b);
      const source = rates.length > 0 ? rates : all;
      if (source.length === 0) {
        throw new Error(`Asset ${asset} has production but no automatic-rate row`);
      }
      const nominalSpeed = roundRateUp(nearestRankPercentile(source, NOMINAL_SPEED_PERCENTILE));
      out.push({ asset, product, nominalSpeed, rateRows: rates.length });
    }
  }
  return out;
}

/** One shift instance of one asset as the metrics report sees it: ideal minutes by product, run time. */
interface RecordedShift {
  /** Items made in the instance by product (rows whose `ts` lies in it). */
  items: Map<number, number>;
  /** Minutes of production rows inside the instance not covered by a stop. */
  runMinutes: number;
}

/**
 * The shift instances of one asset's recording: windows between the shift boundaries
 * (06:00, 14:00, 22:00 Europe/Rome), each with its items by product and its run time, the
 * production rows' time less the recorded stops (alarm rows) and the stops the count signal
 * makes (./demo-detected-stops.ts), as docs/metrics.md classifies time.
 */
function recordedShifts(rows: readonly SmeRow[], now: number): RecordedShift[] {
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last) return [];
  const interval = (r: SmeRow): Interval => ({ start: r.ts, end: r.end });
  const alarms = joined(rows.filter((r) => rowKind(r) === "alarm").map(interval));
  const stops = joined([...alarms, ...detectedStops(rows, now)]);
  const production = rows.filter((r) => rowKind(r) === "production");
  const cuts = wallClockInstants(
    PLANT_A_SHIFTS.map((shift) => shift.startTime),
    PLANT_A_TIMEZONE,
    first.ts,
    last.end,
  );
  const bounds = [first.ts, ...cuts, last.end];
  const shifts: RecordedShift[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const w0 = bounds[i] as number;
    const w1 = bounds[i + 1] as number;
    const items = new Map<number, number>();
    const inside: Interval[] = [];
    for (const row of production) {
      if (row.ts >= w0 && row.ts < w1 && row.items > 0) {
        items.set(row.product, (items.get(row.product) ?? 0) + row.items);
      }
      if (row.end > w0 && row.ts < w1) {
        inside.push({ start: Math.max(row.ts, w0), end: Math.min(row.end, w1) });
      }
    }
    if (items.size > 0) {
      shifts.push({ items, runMinutes: lengthOf(without(joined(inside), stops)) / 60_000 });
    }
  }
  return shifts;
}

/**
 * Nominal speed of every (asset, product) pair of Demo Plant A: the percentile speed,
 * raised until no recorded shift instance runs above it. A shift whose effectiveness
 * (ideal minutes `sum(items / nominalSpeed)` over its run time, docs/metrics.md) is above 1
 * multiplies the speeds of the products it made by that effectiveness, rounded up to 0.1;
 * passes repeat until no shift is above 1 (speeds only grow, so this ends; at most
 * {@link MAX_FIT_PASSES} passes). A shift with items and no run time (every item inside a
 * stop) has no effectiveness and is left alone.
 *
 * @param rowsByAsset rows from `parseSmeRows`.
 * @param now the current instant, ms (where a stop at the end of the data ends).
 * @returns one speed per pair, by asset then product.
 * @throws Error when a machine with production has no rate row, or the fit does not settle.
 */
export function deriveNominalSpeeds(
  rowsByAsset: Map<number, SmeRow[]>,
  now: number,
): DerivedNominalSpeed[] {
  const speeds = percentileSpeeds(rowsByAsset);
  for (const [asset, rows] of rowsByAsset) {
    const own = new Map(speeds.filter((s) => s.asset === asset).map((s) => [s.product, s]));
    const shifts = recordedShifts(rows, now);
    for (let pass = 0; ; pass++) {
      if (pass === MAX_FIT_PASSES) throw new Error(`Asset ${asset}: nominal speeds do not settle`);
      let raised = false;
      for (const shift of shifts) {
        let ideal = 0;
        for (const [product, items] of shift.items) {
          ideal += items / (own.get(product)?.nominalSpeed ?? Number.NaN);
        }
        const effectiveness = ideal / shift.runMinutes;
        if (!(shift.runMinutes > 0 && effectiveness > 1)) continue;
        raised = true;
        for (const product of shift.items.keys()) {
          const speed = own.get(product);
          if (speed) speed.nominalSpeed = roundRateUp(speed.nominalSpeed * effectiveness);
        }
      }
      if (!raised) break;
    }
  }
  return speeds;
}
