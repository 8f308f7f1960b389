/**
 * The machine's signal store (`SignalStore`) against a straightforward reference: a map
 * of instant to value (the last ingested wins) and a one-pass aggregation per bucket,
 * i.e. the row-per-sample computation the store replaces.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AggFunction } from "../../src/resources/signals/aggregate";
import { decodeSamples, encodeSamples } from "../../src/resources/signals/blocks";
import { ascendingOrder } from "../../src/resources/signals/ingest-hours";

const S = 1_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const FUNCTIONS: readonly AggFunction[] = ["avg", "max", "min", "sum", "count"];

/** A fresh store, as if of a new machine. */
const newStore = () => env.SIGNAL_STORE.get(env.SIGNAL_STORE.idFromName(crypto.randomUUID()));

/** Row-per-sample aggregation: buckets of `width` aligned to the epoch, empty ones left out. */
function reference(
  samples: ReadonlyMap<number, number>,
  q: { from: number; to: number; bucketWidthMs: number },
  fn: AggFunction,
): { buckets: number[]; values: number[] } {
  const byBucket = new Map<number, number[]>();
  for (const t of [...samples.keys()].sort((a, b) => a - b)) {
    if (t < q.from || t >= q.to) continue;
    const b = Math.floor(t / q.bucketWidthMs) * q.bucketWidthMs;
    const list = byBucket.get(b) ?? [];
    list.push(samples.get(t) ?? Number.NaN);
    byBucket.set(b, list);
  }
  const buckets = [...byBucket.keys()].sort((a, b) => a - b);
  const values = buckets.map((b) => {
    const vs = byBucket.get(b) ?? [];
    const sum = vs.reduce((a, v) => a + v, 0);
    if (fn === "avg") return sum / vs.length;
    if (fn === "sum") return sum;
    if (fn === "count") return vs.length;
    return fn === "min" ? Math.min(...vs) : Math.max(...vs);
  });
  return { buckets, values };
}

/** The float64 bit patterns of values (so that -0 and 0 differ). */
const bits = (values: ArrayLike<number>) => [
  ...new BigUint64Array(Float64Array.from(values).buffer),
];

function expectClose(actual: readonly number[], expected: readonly number[], label: string) {
  expect(actual.length, label).toBe(expected.length);
  actual.forEach((v, i) => {
    const want = expected[i] ?? Number.NaN;
    if (!(Math.abs(v - want) <= 1e-9 * Math.max(1, Math.abs(want)))) {
      throw new Error(`${label}: value ${i} is ${v}, expected ${want}`);
    }
  });
}

describe("block codec", () => {
  it("gives back every instant and every value bit for bit", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: HOUR - 1 }), { maxLength: 300 }),
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 300 }),
        (offsets, doubles) => {
          const hour = 473_000 * HOUR;
          const ts = offsets.sort((a, b) => a - b).map((o) => hour + o);
          const values = ts.map((_, i) => doubles[i % Math.max(1, doubles.length)] ?? -0);
          const back = decodeSamples(hour, ts.length, encodeSamples(hour, ts, values).buffer);
          expect([...back.ts]).toEqual(ts);
          expect(bits(back.values)).toEqual(bits(values));
        },
      ),
    );
  });
});

describe("ascendingOrder", () => {
  it("orders by instant, ties in input order, whether or not the input was sorted", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 200 }),
        fc.boolean(),
        (raw, sorted) => {
          const ts = sorted ? [...raw].sort((a, b) => a - b) : raw;
          const want = ts.map((_, i) => i).sort((a, b) => (ts[a] ?? 0) - (ts[b] ?? 0) || a - b);
          expect(ascendingOrder(ts)).toEqual(want);
        },
      ),
    );
  });
});

describe("SignalStore", () => {
  it("aggregates like the row-per-sample computation, whatever the ingestion order", async () => {
    const widths = [S, 7 * S, MIN, 3 * MIN, 7 * MIN, HOUR, 2 * HOUR, 24 * HOUR];
    const base = Date.UTC(2025, 2, 30, 21, 0, 0);
    await fc.assert(
      fc.asyncProperty(
        // Samples over about 6 hours, dense enough for minute rollups in some hours.
        fc.array(
          fc.tuple(
            // Mostly whole seconds, so that later calls often replace earlier samples.
            fc.oneof(
              { weight: 2, arbitrary: fc.integer({ min: 0, max: 6 * 3600 }).map((s) => s * S) },
              {
                weight: 2,
                arbitrary: fc.integer({ min: 0, max: 600 }).map((s) => 2 * HOUR + s * S),
              },
              { weight: 1, arbitrary: fc.integer({ min: 0, max: 6 * HOUR }) },
            ),
            fc.oneof(
              fc.integer({ min: -1000, max: 1000 }),
              fc.double({ min: -1e6, max: 1e6, noNaN: true }),
            ),
          ),
          { minLength: 1, maxLength: 1500, size: "large" },
        ),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: -HOUR, max: 7 * HOUR }),
        fc.integer({ min: 1, max: 8 * HOUR }),
        fc.constantFrom(...widths),
        fc.constantFrom(...FUNCTIONS),
        async (pairs, calls, fromOffset, length, bucketWidthMs, fn) => {
          const store = newStore();
          const expected = new Map<number, number>();
          // Out of order, in several calls; a later call's sample at an instant replaces.
          const chunk = Math.ceil(pairs.length / calls);
          for (let i = 0; i < pairs.length; i += chunk) {
            const part = pairs.slice(i, i + chunk);
            const result = await store.ingest(
              1,
              part.map(([o]) => base + o),
              part.map(([, v]) => v),
              null,
            );
            for (const [o, v] of part) expected.set(base + o, v);
            expect(result.accepted).toBe(new Set(part.map(([o]) => o)).size);
          }
          // A dense hour, so that minute rollups serve.
          const q = { from: base + fromOffset, to: base + fromOffset + length, bucketWidthMs };
          const want = reference(expected, q, fn);
          const got = await store.aggregate(1, q, fn);
          const raw = await store.aggregate(1, q, fn, false);
          expect(got.buckets).toEqual(want.buckets);
          expectClose(got.values, want.values, `${fn} ${bucketWidthMs}`);
          expect(raw.buckets).toEqual(want.buckets);
          expectClose(raw.values, want.values, `raw ${fn} ${bucketWidthMs}`);
          // And the window sums the live logs use.
          const [sum] = await store.sums(1, [{ start: q.from, end: q.to }]);
          const wantSum = reference(expected, { ...q, bucketWidthMs: 1e15 }, "sum").values;
          expectClose([sum ?? Number.NaN], [wantSum.reduce((a, v) => a + v, 0)], "sum");
        },
      ),
      { numRuns: 40 },
    );
  });

  it("answers minutes and hours from rollups, exactly for integer values", async () => {
    const store = newStore();
    const h0 = Date.UTC(2025, 5, 1);
    // 3 hours at 1 Hz, integer values: every aggregate is exact.
    const ts = Array.from({ length: 3 * 3600 }, (_, i) => h0 + i * S);
    const values = ts.map((_, i) => (i * 7919) % 1000);
    for (let i = 0; i < ts.length; i += 10_000) {
      await store.ingest(7, ts.slice(i, i + 10_000), values.slice(i, i + 10_000), null);
    }
    const samples = new Map(ts.map((t, i) => [t, values[i] ?? 0]));
    for (const bucketWidthMs of [S, 3 * MIN, HOUR]) {
      for (const fn of FUNCTIONS) {
        const q = { from: h0 - 5 * S, to: h0 + 3 * HOUR - 17 * S, bucketWidthMs };
        expect(await store.aggregate(7, q, fn)).toEqual(reference(samples, q, fn));
      }
    }
    // Another signal of the same machine is not mixed in.
    expect(
      await store.aggregate(8, { from: h0, to: h0 + HOUR, bucketWidthMs: HOUR }, "count"),
    ).toEqual({ buckets: [], values: [] });
  });

  it("gives every value back bit for bit", async () => {
    const store = newStore();
    const t0 = Date.UTC(2025, 0, 1, 12);
    const values = [0.1 + 0.2, -0, 5e-324, -1.7976931348623157e308, Math.PI, 1 / 3, 2 ** 53 + 2];
    const ts = values.map((_, i) => t0 + i * 1500);
    await store.ingest(3, ts, values, null);
    const back = await store.aggregate(3, { from: t0, to: t0 + MIN, bucketWidthMs: S }, "avg");
    expect(back.buckets).toEqual(ts.map((t) => Math.floor(t / S) * S));
    expect(bits(back.values)).toEqual(bits(values));
  });

  it("keeps a day of 1 Hz float64 samples in at most 12 bytes a sample, database included", async () => {
    const store = newStore();
    const t0 = Date.UTC(2025, 0, 1);
    let state = 1;
    const ts = Array.from({ length: 86_400 }, (_, i) => t0 + i * S);
    // Noisy values: no byte of a float64 repeats, so nothing compresses by accident.
    const values = ts.map(() => {
      state = (state * 48271) % 2147483647;
      return 230 + state / 2147483647;
    });
    for (let i = 0; i < ts.length; i += 10_000) {
      await store.ingest(1, ts.slice(i, i + 10_000), values.slice(i, i + 10_000), null);
    }
    const bytes = await store.databaseSize();
    console.log(`signal store: ${(bytes / ts.length).toFixed(2)} bytes a sample (${bytes} bytes)`);
    expect(bytes / ts.length).toBeLessThanOrEqual(12);
  });
});
