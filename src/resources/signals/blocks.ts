/**
 * The on-disk form of a signal's samples: one block per signal and UTC hour, the values as
 * float64 (bit for bit) then the instants as LEB128 deltas, beside the hour's rollup (count,
 * sum, min, max) and, above `MINUTES_FROM_SAMPLES` samples, its minute rollups. Sums combine
 * as sums of sums: exact for integer signals below 2^53 (docs/signal-storage.md, "Format").
 */
import { HOUR_MS, MINUTE_MS } from "../../time/units";

/** Width of a block, ms: one UTC hour. */
export const BLOCK_MS = HOUR_MS;
/** Minute rollups in a block. */
export const MINUTES_PER_BLOCK = BLOCK_MS / MINUTE_MS;
/**
 * A block keeps its minute rollups (1,920 bytes) only above this many samples: below it,
 * decoding the samples costs less than reading the rollups would save, and sparse
 * signals stay compact.
 */
export const MINUTES_FROM_SAMPLES = 240;
/**
 * Most samples in one block (about 55 Hz for a whole hour). A block's BLOB stays below
 * the 2 MB a Durable Object's SQLite allows in one value (8 bytes a value + at most 3 a
 * delta at this rate).
 */
export const MAX_SAMPLES_PER_BLOCK = 180_000;

/** A block's samples, decoded: parallel arrays in ascending instants (ms). */
export interface DecodedSamples {
  ts: Float64Array;
  values: Float64Array;
}

/** A block's hour rollup. */
interface BlockSummary {
  n: number;
  sum: number;
  min: number;
  max: number;
}

/**
 * Encodes a block's samples.
 *
 * @param hour the block's start, ms (a multiple of `BLOCK_MS`).
 * @param ts ascending, distinct instants in `[hour, hour + BLOCK_MS)`, integers (ms).
 * @param values the values, `values[i]` at `ts[i]`.
 * @returns the BLOB: `8 n` bytes of values, then `n` varint deltas.
 */
export function encodeSamples(
  hour: number,
  ts: ArrayLike<number>,
  values: ArrayLike<number>,
): Uint8Array<ArrayBuffer> {
  const n = ts.length;
  // At most 4 bytes a delta: every delta is below an hour, 3.6e6 ms < 2^28.
  const out = new Uint8Array(8 * n + 4 * n);
  new Float64Array(out.buffer, 0, n).set(values);
  let pos = 8 * n;
  let previous = hour;
  for (let i = 0; i < n; i++) {
    let delta = (ts[i] ?? 0) - previous;
    previous = ts[i] ?? 0;
    while (delta >= 0x80) {
      out[pos++] = (delta & 0x7f) | 0x80;
      delta >>>= 7;
    }
    out[pos++] = delta;
  }
  return out.slice(0, pos);
}

/**
 * Decodes a block's samples (the inverse of `encodeSamples`).
 *
 * @param hour the block's start, ms; `n` its sample count; `blob` its samples BLOB.
 */
export function decodeSamples(hour: number, n: number, blob: ArrayBuffer): DecodedSamples {
  const bytes = new Uint8Array(blob);
  // A copy: the BLOB's buffer need not be 8-byte aligned for a Float64Array view.
  const values = new Float64Array(bytes.slice(0, 8 * n).buffer);
  const ts = new Float64Array(n);
  let pos = 8 * n;
  let t = hour;
  for (let i = 0; i < n; i++) {
    let delta = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = bytes[pos++] ?? 0;
      delta |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    t += delta;
    ts[i] = t;
  }
  return { ts, values };
}

/** Count, sum (in time order), min and max of a block's values. */
export function summarize(values: ArrayLike<number>): BlockSummary {
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] ?? 0;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { n: values.length, sum, min, max };
}

/**
 * The minute rollups of a block: 60 x [count, sum, min, max] as float64 (an empty
 * minute has count 0).
 */
export function minuteRollups(
  hour: number,
  ts: ArrayLike<number>,
  values: ArrayLike<number>,
): Float64Array {
  const out = new Float64Array(MINUTES_PER_BLOCK * 4);
  for (let i = 0; i < ts.length; i++) {
    const m = Math.floor(((ts[i] ?? 0) - hour) / MINUTE_MS) * 4;
    const v = values[i] ?? 0;
    if (out[m] === 0) {
      out[m + 2] = v;
      out[m + 3] = v;
    } else {
      if (v < (out[m + 2] ?? v)) out[m + 2] = v;
      if (v > (out[m + 3] ?? v)) out[m + 3] = v;
    }
    out[m] = (out[m] ?? 0) + 1;
    out[m + 1] = (out[m + 1] ?? 0) + v;
  }
  return out;
}

/** Reads a minute-rollups BLOB back (see `minuteRollups`). */
export function decodeMinutes(blob: ArrayBuffer): Float64Array {
  return new Float64Array(new Uint8Array(blob).slice().buffer);
}

/**
 * Merges new samples into a block's stored ones; a new sample at a stored instant replaces it.
 *
 * @param stored the block's samples (ascending), or undefined for a new block.
 * @param ts ascending, distinct new instants of this block; `values` their values.
 * @returns the block's samples after the merge, ascending.
 */
export function mergeSamples(
  stored: DecodedSamples | undefined,
  ts: ArrayLike<number>,
  values: ArrayLike<number>,
): DecodedSamples {
  if (stored === undefined || stored.ts.length === 0) {
    return { ts: Float64Array.from(ts), values: Float64Array.from(values) };
  }
  const a = stored;
  const outTs = new Float64Array(a.ts.length + ts.length);
  const outValues = new Float64Array(a.ts.length + ts.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.ts.length || j < ts.length) {
    const ta = i < a.ts.length ? (a.ts[i] ?? 0) : Number.POSITIVE_INFINITY;
    const tb = j < ts.length ? (ts[j] ?? 0) : Number.POSITIVE_INFINITY;
    if (tb <= ta) {
      outTs[k] = tb;
      outValues[k++] = values[j++] ?? 0;
      if (tb === ta) i++;
    } else {
      outTs[k] = ta;
      outValues[k++] = a.values[i++] ?? 0;
    }
  }
  return { ts: outTs.slice(0, k), values: outValues.slice(0, k) };
}
