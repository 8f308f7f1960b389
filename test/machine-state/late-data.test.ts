/**
 * Live, in one batch, or in shuffled batches with late and out-of-order samples: the same
 * stops, and the ones the sample-by-sample rule (./reference.ts) gives.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signals as signalsTable } from "../../src/db/schema";
import { observedStore } from "../fixtures/observed-signal-store";
import { MIN, S } from "../fixtures/plant";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  operatorJson,
  shardDb,
} from "../harness";
import { type Cls, referenceRuns } from "./reference";

// Just before an hour, so that runs cross the hours' edges.
const T0 = Date.UTC(2025, 4, 12, 3, 51, 0);
const THRESHOLD = 300 * S;
const GAP = 300 * S;

/** Stretches of one kind at one sampling period, some after a silence. */
const dayArb = fc
  .array(
    fc.record({
      kind: fc.constantFrom<"pieces" | "none">("pieces", "none"),
      minutes: fc.integer({ min: 1, max: 12 }),
      period: fc.constantFrom(S, 10 * S, MIN, 5 * MIN),
      silence: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: S, max: 20 * MIN })),
    }),
    { minLength: 2, maxLength: 8 },
  )
  .map((stretches) => {
    const samples: [number, number][] = [];
    let t = T0;
    for (const s of stretches) {
      t += s.silence;
      const end = t + s.minutes * MIN;
      for (; t < end; t += s.period) samples.push([t, s.kind === "pieces" ? 2 : 0]);
    }
    return samples;
  });

/** The stops the rule gives (one planned block: a 24-hour shift every day). */
function expected(samples: [number, number][]): { start: number; end: number }[] {
  const sorted = [...samples].sort((a, b) => a[0] - b[0]);
  const runs = referenceRuns(
    sorted.map(([t, v]) => ({ t, c: (v > 0 ? "up" : "down") as Cls })),
    GAP,
    Date.now(),
  );
  return runs
    .filter((r) => r.end !== null && r.end - r.start >= THRESHOLD)
    .map((r) => ({ start: r.start, end: r.end as number }));
}

describe("the same stops however the samples arrive", () => {
  it("live, in one batch and in shuffled late batches", async () => {
    const co = await createCompany({ timezone: "UTC" });
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);
    await fc.assert(
      fc.asyncProperty(dayArb, fc.integer({ min: 0, max: 1_000_000 }), async (samples, seed) => {
        const machines = await createMachines(co.id, [{ name: "A" }, { name: "B" }, { name: "C" }]);
        const db = await shardDb(co.id);
        // Samples go to each machine's store as the ingestion route sends them (the route's
        // validation has its own tests; here only the order of arrival matters).
        const senders = await Promise.all(
          machines.map(async (m) => {
            const publicId = await createSignal(m.id, { name: "count", kind: "counter" });
            const [row] = await db
              .select({ id: signalsTable.id })
              .from(signalsTable)
              .where(eq(signalsTable.publicId, publicId));
            const store = observedStore(env, co.id, m.id);
            const context = { companyId: co.id, machineId: m.id, countSignal: true };
            return async (list: readonly (readonly [number, number])[]) => {
              if (list.length === 0) return;
              await store.ingest(
                row?.id ?? 0,
                list.map(([t]) => t),
                list.map(([, v]) => v),
                null,
                context,
              );
            };
          }),
        );
        const [live, batch, late] = senders;
        if (!live || !batch || !late) throw new Error("no signals");
        const ingest = (send: typeof live, list: readonly (readonly [number, number])[]) =>
          send(list);
        // Live: 5 minutes' samples at a time, in order (the runs span several uploads).
        for (let i = 0; i < samples.length; ) {
          const t0 = samples[i]?.[0] ?? 0;
          let j = i;
          while (j < samples.length && (samples[j]?.[0] ?? 0) < t0 + 5 * MIN) j++;
          await ingest(live, samples.slice(i, j));
          i = j;
        }
        await ingest(batch, samples);
        // Shuffled: random batches of random samples, some sent twice.
        const shuffled = [...samples, ...samples.filter((_, i) => (i * 7 + seed) % 11 === 0)];
        let x = seed + 1;
        const rand = () => {
          x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
          return x / 2 ** 31;
        };
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = Math.floor(rand() * (i + 1));
          [shuffled[i], shuffled[j]] = [
            shuffled[j] as [number, number],
            shuffled[i] as [number, number],
          ];
        }
        for (let i = 0; i < shuffled.length; ) {
          const n = 1 + Math.floor(rand() * 1_500);
          await ingest(late, shuffled.slice(i, i + n));
          i += n;
        }
        const want = expected(samples);
        for (const m of machines) {
          await observedStore(env, co.id, m.id).settleDetection();
          const res = await api(co.key, "/v1/reports/stops", {
            method: "POST",
            json: { machines: { include: [m.id] }, limit: 100 },
          });
          const body = (await res.json()) as {
            stops: { stop: { startTime: string; endTime: string | null } }[];
          };
          const got = body.stops.map((r) => ({
            start: Date.parse(r.stop.startTime),
            end: r.stop.endTime === null ? null : Date.parse(r.stop.endTime),
          }));
          expect({ machine: m.name, stops: got }).toEqual({ machine: m.name, stops: want });
        }
      }),
      { numRuns: 10 },
    );
  }, 600_000);
});
