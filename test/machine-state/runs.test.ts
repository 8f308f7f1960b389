import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { summarizeHour } from "../../src/machine-state/hour-fold";
import { BAND, DOWN, MIN_RUN_MS, type SampleClass, UP } from "../../src/machine-state/rules";
import { RunComposer } from "../../src/machine-state/runs";
import { type Cls, referenceRuns } from "./reference";

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 2, 5, 0, 0);

const CODE: Record<Cls, SampleClass> = { up: UP, down: DOWN, band: BAND };

/** Runs from the hour summaries, as the store composes them. */
function composed(samples: { t: number; c: Cls }[], maxGapMs: number, now: number) {
  const byHour = new Map<number, { t: number; c: Cls }[]>();
  for (const s of samples) {
    const h = Math.floor(s.t / HOUR) * HOUR;
    byHour.set(h, [...(byHour.get(h) ?? []), s]);
  }
  const composer = new RunComposer(maxGapMs);
  for (const h of [...byHour.keys()].sort((a, b) => a - b)) {
    const list = byHour.get(h) ?? [];
    composer.push(
      summarizeHour(
        h,
        list.map((s) => s.t),
        list.map((s) => CODE[s.c]),
        maxGapMs,
      ),
    );
  }
  composer.finish(now);
  return composer.runs;
}

/** Samples: runs of one class at one period, separated now and then by silences. */
const samplesArb = fc
  .array(
    fc.record({
      c: fc.constantFrom<Cls>("up", "down", "band"),
      n: fc.integer({ min: 1, max: 40 }),
      period: fc.constantFrom(1_000, 7_000, 60_000, 300_000),
      silence: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1_200_000 })),
    }),
    { minLength: 1, maxLength: 30 },
  )
  .map((pieces) => {
    const out: { t: number; c: Cls }[] = [];
    let t = T0 + 1_234;
    for (const p of pieces) {
      t += p.silence;
      for (let i = 0; i < p.n; i++) {
        out.push({ t, c: p.c });
        t += p.period;
      }
    }
    return out;
  });

const longEnough = (r: { start: number; end: number | null }) =>
  r.end === null || r.end - r.start >= MIN_RUN_MS;

describe("down runs from hour summaries", () => {
  it("equal the sample-by-sample rule, whatever the sampling, silences and band", () => {
    fc.assert(
      fc.property(
        samplesArb,
        fc.constantFrom(2_000, 300_000, 900_000),
        fc.integer({ min: 0, max: 2_000_000 }),
        (samples, maxGapMs, after) => {
          const now = (samples[samples.length - 1]?.t ?? T0) + after;
          const expected = referenceRuns(samples, maxGapMs, now).filter(longEnough);
          expect(composed(samples, maxGapMs, now)).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("at 5-minute sampling, a down row stands for its 5 minutes", () => {
    const t = (m: number) => T0 + m * 60_000;
    const samples: { t: number; c: Cls }[] = [
      { t: t(0), c: "up" },
      { t: t(5), c: "down" },
      { t: t(10), c: "down" },
      { t: t(15), c: "up" },
      { t: t(20), c: "down" },
      // a row missing at 25: the silence of 10 minutes is no data
      { t: t(30), c: "up" },
    ];
    expect(composed(samples, 300_000, t(60))).toEqual([
      { start: t(5), lastDown: t(10), end: t(15) },
      { start: t(20), lastDown: t(20), end: t(25) },
    ]);
  });

  it("a lone down row after the hour's turn, then silence, still stands for its period", () => {
    const t = (m: number) => T0 + m * 60_000;
    // T0 is on the hour: the up row is the last of one hour, the down row the first of the next.
    const samples: { t: number; c: Cls }[] = [
      { t: t(55), c: "up" },
      { t: t(60), c: "down" },
      { t: t(120), c: "up" },
    ];
    expect(composed(samples, 300_000, t(180))).toEqual([
      { start: t(60), lastDown: t(60), end: t(65) },
    ]);
  });
});
