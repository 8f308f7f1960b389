/**
 * The 1 Hz series of `bench/signals-plant.ts`: its values, the operator API's bodies for
 * it, and the aggregation of it computed here (the independent reference every answer of
 * the API is compared with).
 */

/** The first instant of every series, ms. */
export const START = Date.UTC(2024, 0, 1);

/** The sample at second `i` of a series: a 1-hour sine, a daily drift and noise. */
export function valueAt(i: number, salt = 0): number {
  const noise = ((((i + salt) * 2_654_435_761) >>> 0) % 10_000) / 10_000 - 0.5;
  return (
    50 + 20 * Math.sin((2 * Math.PI * i) / 3600) + 5 * Math.sin((2 * Math.PI * i) / 86_400) + noise
  );
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** The operator API's body for seconds `[first, first + count)` of a series from `start`. */
export function chunkBody(start: number, first: number, count: number, salt = 0) {
  const timestamps: string[] = [];
  const values: number[] = [];
  for (let i = first; i < first + count; i++) {
    timestamps.push(iso(start + i * 1000));
    values.push(valueAt(i, salt));
  }
  return JSON.stringify({ timestamps, values });
}

/** The aggregation computed here from the generated series (seconds `[0, seconds)`). */
export function reference(seconds: number, from: number, to: number, width: number) {
  const buckets = new Map<number, [number, number]>();
  const first = Math.max(0, Math.ceil((from - START) / 1000));
  const last = Math.min(seconds, Math.ceil((to - START) / 1000));
  for (let i = first; i < last; i++) {
    const t = START + i * 1000;
    const b = Math.floor(t / width) * width;
    const acc = buckets.get(b) ?? [0, 0];
    acc[0] += 1;
    acc[1] += valueAt(i);
    buckets.set(b, acc);
  }
  return [...buckets].map(([b, [n, s]]) => ({ timestamp: iso(b), value: s / n }));
}
