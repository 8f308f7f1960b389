/**
 * Series of samples cut and joined at hour boundaries, for rewriting archive objects
 * (archive.ts): every function takes and returns ascending instants with their values.
 */
import { hourStart } from "../../time/units";
import type { DecodedSamples } from "./blocks";

/** The samples of `s` in the hours (block starts, ms) of `hours`. */
export function keepHours(s: DecodedSamples, hours: ReadonlySet<number>): DecodedSamples {
  const ts: number[] = [];
  const values: number[] = [];
  for (let i = 0; i < s.ts.length; i++) {
    const t = s.ts[i] ?? 0;
    if (!hours.has(hourStart(t))) continue;
    ts.push(t);
    values.push(s.values[i] ?? 0);
  }
  return { ts: Float64Array.from(ts), values: Float64Array.from(values) };
}

/** Parts covering disjoint hours, merged into one ascending series. */
export function mergeByTime(parts: DecodedSamples[]): DecodedSamples {
  const hours = new Map<number, DecodedSamples>();
  for (const part of parts) for (const [hour, s] of splitByHour(part)) hours.set(hour, s);
  const sorted = [...hours.entries()].sort((a, b) => a[0] - b[0]);
  const n = sorted.reduce((sum, [, s]) => sum + s.ts.length, 0);
  const ts = new Float64Array(n);
  const values = new Float64Array(n);
  let at = 0;
  for (const [, s] of sorted) {
    ts.set(s.ts, at);
    values.set(s.values, at);
    at += s.ts.length;
  }
  return { ts, values };
}

/** An ascending series cut at hour boundaries. */
export function splitByHour(s: DecodedSamples): Map<number, DecodedSamples> {
  const out = new Map<number, DecodedSamples>();
  let start = 0;
  for (let i = 1; i <= s.ts.length; i++) {
    if (i === s.ts.length || hourStart(s.ts[i] ?? 0) !== hourStart(s.ts[start] ?? 0)) {
      out.set(hourStart(s.ts[start] ?? 0), {
        ts: s.ts.subarray(start, i),
        values: s.values.subarray(start, i),
      });
      start = i;
    }
  }
  return out;
}

/** Whether two series hold the same instants and the same values, bit for bit. */
export function sameSamples(a: DecodedSamples, b: DecodedSamples): boolean {
  if (a.ts.length !== b.ts.length) return false;
  const av = new Uint8Array(a.values.buffer, a.values.byteOffset, a.values.byteLength);
  const bv = new Uint8Array(b.values.buffer, b.values.byteOffset, b.values.byteLength);
  for (let i = 0; i < a.ts.length; i++) if (a.ts[i] !== b.ts[i]) return false;
  for (let i = 0; i < av.length; i++) if (av[i] !== bv[i]) return false;
  return true;
}
