/**
 * The size of a Gorilla encoding of a series (Pelkonen et al., "Gorilla: A Fast, Scalable,
 * In-Memory Time Series Database", VLDB 2015, section 4.1): the yardstick the archive's
 * bytes a sample are compared with (bench/archive.ts). Only the bits are counted; nothing is
 * stored or decoded.
 *
 * Instants: the first in 64 bits, then the delta of deltas in the paper's buckets ('0';
 * '10' + 7 bits; '110' + 9; '1110' + 12; '1111' + 32), widened to 64 bits past 32 since ours
 * are milliseconds. Values: the first in 64 bits, then the XOR with the previous value: '0'
 * when equal; '10' + the meaningful bits when they fit the previous window; else '11', 5
 * bits of leading zeros, 6 of length and the meaningful bits.
 */

const view = new DataView(new ArrayBuffer(8));

function bitsOf(v: number): bigint {
  view.setFloat64(0, v);
  return view.getBigUint64(0);
}

function leadingZeros(x: bigint): number {
  let n = 0;
  for (let bit = 63n; bit >= 0n && ((x >> bit) & 1n) === 0n; bit--) n++;
  return n;
}

function trailingZeros(x: bigint): number {
  let n = 0;
  while ((x & 1n) === 0n) {
    x >>= 1n;
    n++;
  }
  return n;
}

/**
 * Bytes of the Gorilla encoding of one series.
 *
 * @param ts ascending instants, ms; `values[i]` at `ts[i]`.
 * @returns whole bytes (the bit count rounded up).
 */
export function gorillaBytes(ts: ArrayLike<number>, values: ArrayLike<number>): number {
  if (ts.length === 0) return 0;
  let bits = 128;
  let previousT = ts[0] ?? 0;
  let previousDelta = 0;
  let previousV = bitsOf(values[0] ?? 0);
  let lead = -1;
  let trail = -1;
  for (let i = 1; i < ts.length; i++) {
    const t = ts[i] ?? 0;
    const delta = t - previousT;
    const dod = delta - previousDelta;
    previousT = t;
    previousDelta = delta;
    if (dod === 0) bits += 1;
    else if (dod >= -63 && dod <= 64) bits += 9;
    else if (dod >= -255 && dod <= 256) bits += 12;
    else if (dod >= -2047 && dod <= 2048) bits += 16;
    else if (dod >= -(2 ** 31) && dod < 2 ** 31) bits += 36;
    else bits += 68;
    const v = bitsOf(values[i] ?? 0);
    const x = v ^ previousV;
    previousV = v;
    if (x === 0n) {
      bits += 1;
      continue;
    }
    const l = leadingZeros(x);
    const r = trailingZeros(x);
    if (lead >= 0 && l >= lead && r >= trail) {
      bits += 2 + (64 - lead - trail);
    } else {
      lead = Math.min(l, 31);
      trail = r;
      bits += 2 + 5 + 6 + (64 - lead - trail);
    }
  }
  return Math.ceil(bits / 8);
}
