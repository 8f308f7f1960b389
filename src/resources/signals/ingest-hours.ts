/**
 * An ingestion's samples by UTC hour, and those hours in pieces, for `SignalSampleStore.ingest`
 * (./store.ts): a backfill is merged and encoded a piece at a time, giving way to the
 * isolate's other work between pieces (docs/signal-storage.md, "Writes").
 */
import { ITEMS_PER_TURN } from "../../http/budget";
import { hourStart } from "../../time/units";

/**
 * Most hours one piece of an ingestion merges and encodes before it gives way to the
 * isolate's other work (a backfill of hourly samples: 250 blocks, each read, merged, encoded
 * and summarized). A call within both bounds runs in one piece, as a live ingestion does.
 */
export const INGEST_HOURS_PER_TURN = ITEMS_PER_TURN;
/** Most new samples one piece of an ingestion merges (about 7 hours of a 1 Hz signal). */
export const INGEST_SAMPLES_PER_TURN = 25_000;

/**
 * The hours of an ingestion in pieces of at most `INGEST_HOURS_PER_TURN` hours and about
 * `INGEST_SAMPLES_PER_TURN` new samples (an hour is never split).
 */
export function piecesOf(
  byHour: ReadonlyMap<number, HourSamples>,
  hours: readonly number[],
): number[][] {
  const pieces: number[][] = [];
  let piece: number[] = [];
  let samples = 0;
  for (const hour of hours) {
    const n = byHour.get(hour)?.ts.length ?? 0;
    if (
      piece.length >= INGEST_HOURS_PER_TURN ||
      (piece.length > 0 && samples + n > INGEST_SAMPLES_PER_TURN)
    ) {
      pieces.push(piece);
      piece = [];
      samples = 0;
    }
    piece.push(hour);
    samples += n;
  }
  if (piece.length > 0) pieces.push(piece);
  return pieces;
}

/**
 * The indices of `ts` in ascending instant order, ties in input order (so the last sample
 * of an instant comes last). Samples usually arrive in order: then no sort runs (a sort of
 * 10,000 indices with a comparator is about a millisecond).
 */
export function ascendingOrder(ts: readonly number[]): number[] {
  const order = ts.map((_, i) => i);
  for (let i = 1; i < ts.length; i++) {
    if ((ts[i] ?? 0) < (ts[i - 1] ?? 0)) {
      return order.sort((a, b) => (ts[a] ?? 0) - (ts[b] ?? 0) || a - b);
    }
  }
  return order;
}

/** One hour's samples of an ingestion: ascending distinct instants, ms, and their values. */
export interface HourSamples {
  ts: number[];
  values: number[];
}

/**
 * An ingestion's samples by UTC hour (ms), each hour's instants ascending and distinct, the
 * last sample of an instant winning (`ascendingOrder` keeps ties in input order).
 */
export function groupByHour(
  ts: readonly number[],
  values: readonly number[],
): Map<number, HourSamples> {
  const byHour = new Map<number, HourSamples>();
  for (const i of ascendingOrder(ts)) {
    const t = ts[i] ?? 0;
    const hour = hourStart(t);
    let group = byHour.get(hour);
    if (group === undefined) {
      group = { ts: [], values: [] };
      byHour.set(hour, group);
    }
    if (group.ts[group.ts.length - 1] === t) group.values[group.values.length - 1] = values[i] ?? 0;
    else {
      group.ts.push(t);
      group.values.push(values[i] ?? 0);
    }
  }
  return byHour;
}
