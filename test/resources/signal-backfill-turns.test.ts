/**
 * A backfill gives way (issue 48, docs/bounded-work.md "Background work gives way"): a
 * machine's `SignalStore` taking a large history in one call merges and encodes it a piece
 * at a time and lets the isolate's other work run between pieces, so another company's
 * requests are answered meanwhile; the call's samples are still written together (a read of
 * the store sees all of them or none) and stored as a call of one piece would store them.
 * Counted in answers, not timed: the runtime's clock stands still while it computes.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  INGEST_HOURS_PER_TURN,
  INGEST_SAMPLES_PER_TURN,
} from "../../src/resources/signals/ingest-hours";
import { api, createCompany } from "../harness";

const HOUR = 3_600_000;
/** One call of hourly samples at the operator API's bound: 10,000 hours, about 14 months. */
const HOURS = 10_000;
/** The neighbour's reads that must be answered before the backfill is. */
const NEIGHBOUR_READS = 5;

/** A fresh store, as if of a new machine. */
const newStore = () => env.SIGNAL_STORE.get(env.SIGNAL_STORE.idFromName(crypto.randomUUID()));

/** Hourly samples ending before now: an instant 7 s into each hour, values 0 to 96. */
function hourlyHistory(hours: number): { ts: number[]; values: number[]; first: number } {
  const first = (Math.floor(Date.now() / HOUR) - hours - 1) * HOUR;
  const ts = Array.from({ length: hours }, (_, i) => first + i * HOUR + 7_000);
  return { ts, values: ts.map((_, i) => i % 97), first };
}

/** Count and sum of a signal's samples over `[from, to)`, by the store's daily buckets. */
async function countAndSum(
  store: ReturnType<typeof newStore>,
  from: number,
  to: number,
): Promise<{ count: number; sum: number }> {
  const q = { from, to, bucketWidthMs: 24 * HOUR };
  const counts = await store.aggregate(1, q, "count");
  const sums = await store.aggregate(1, q, "sum");
  return {
    count: counts.values.reduce((a, v) => a + v, 0),
    sum: sums.values.reduce((a, v) => a + v, 0),
  };
}

describe("a backfill into a machine's signal store", () => {
  it("lets another company's requests be answered while it is stored, and is written whole", async () => {
    // The bounds make this call many pieces (40 of 250 hours).
    expect(HOURS / INGEST_HOURS_PER_TURN).toBeGreaterThanOrEqual(20);
    expect(HOURS).toBeLessThanOrEqual(10_000);
    const neighbour = await createCompany();
    const first = await api(neighbour.key, "/v1/machines");
    expect(first.status).toBe(200);
    await first.text();

    const store = newStore();
    const history = hourlyHistory(HOURS);
    const end = history.first + (HOURS + 1) * HOUR;
    let done = false;
    const backfill = store.ingest(1, history.ts, history.values, null).finally(() => {
      done = true;
    });
    // The neighbour's reads, one after another, while the backfill goes on (at most
    // NEIGHBOUR_READS, within its key's rate limit); and one read of the backfilled store
    // itself, sent while the backfill goes on.
    let answered = 0;
    let sameStore: Promise<{ count: number; sum: number }> | null = null;
    while (!done && answered < NEIGHBOUR_READS) {
      const res = await api(neighbour.key, "/v1/machines");
      expect(res.status).toBe(200);
      await res.text();
      if (done) break;
      answered += 1;
      sameStore ??= countAndSum(store, history.first, end);
    }
    expect(await backfill).toEqual({ accepted: HOURS });
    // Before, the store merged, encoded and wrote the 10,000 hours in one synchronous run:
    // the neighbour's first read waited for all of it (none answered meanwhile).
    expect(answered).toBe(NEIGHBOUR_READS);

    const sum = history.values.reduce((a, v) => a + v, 0);
    // All or nothing: the pieces are written in one synchronous step at the end.
    if (sameStore) expect([0, HOURS]).toContain((await sameStore).count);
    expect(await countAndSum(store, history.first, end)).toEqual({ count: HOURS, sum });
  });

  it("stores a call of many pieces as calls of one piece each would", async () => {
    // Hours of a 1 Hz signal: pieces bounded by samples (about 7 hours each), some hours
    // already holding samples that the call replaces or adds to.
    const hours = 12;
    expect(hours * 3_600).toBeGreaterThan(INGEST_SAMPLES_PER_TURN);
    const h0 = (Math.floor(Date.now() / HOUR) - 48) * HOUR;
    const ts: number[] = [];
    const values: number[] = [];
    for (let t = h0; t < h0 + hours * HOUR; t += 1_000) {
      ts.push(t);
      values.push(Math.round(Math.sin(t / 60_000) * 100));
    }
    const earlier = { ts: ts.filter((_, i) => i % 7 === 0), values: [] as number[] };
    earlier.values = earlier.ts.map((t) => t % 13);

    const whole = newStore();
    const pieces = newStore();
    for (const store of [whole, pieces]) {
      // Three hours stored before, at every seventh second (replaced by the call below).
      const before = earlier.ts.flatMap((t, i) => (t < h0 + 3 * HOUR ? [i] : []));
      await store.ingest(
        1,
        before.map((i) => earlier.ts[i] ?? 0),
        before.map((i) => earlier.values[i] ?? 0),
        null,
      );
    }
    // One call (several pieces) against calls of an hour each (one piece each).
    expect(await whole.ingest(1, ts, values, null)).toEqual({ accepted: ts.length });
    for (let h = 0; h < hours; h++) {
      const from = h * 3_600;
      await pieces.ingest(1, ts.slice(from, from + 3_600), values.slice(from, from + 3_600), null);
    }
    const q = { from: h0, to: h0 + hours * HOUR, bucketWidthMs: 60_000 };
    for (const fn of ["count", "sum", "min", "max"] as const) {
      expect(await whole.aggregate(1, q, fn)).toEqual(await pieces.aggregate(1, q, fn));
      expect(await whole.aggregate(1, q, fn, false)).toEqual(
        await pieces.aggregate(1, q, fn, false),
      );
    }
  });

  it("keeps both of two backfills sent at once into the same hours", async () => {
    // Two gateways catching up on the same signal: each call many pieces, the same hours,
    // other instants. They take turns, so neither writes over what the other merged.
    const hours = 2_000;
    const store = newStore();
    const a = hourlyHistory(hours);
    const b = { ts: a.ts.map((t) => t + 2_000), values: a.values.map((v) => v + 1_000) };
    const [first, second] = await Promise.all([
      store.ingest(1, a.ts, a.values, null),
      store.ingest(1, b.ts, b.values, null),
    ]);
    expect([first, second]).toEqual([{ accepted: hours }, { accepted: hours }]);
    const sum = [...a.values, ...b.values].reduce((x, v) => x + v, 0);
    expect(await countAndSum(store, a.first, a.first + (hours + 1) * HOUR)).toEqual({
      count: 2 * hours,
      sum,
    });
  });
});
