/**
 * Down is not no data (docs/machine-state.md): silences, coarse sampling, the settings, and
 * the clock ending a stop whose gateway went quiet.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { observedStore } from "../fixtures/observed-signal-store";
import { aroundNow, detectionPlant, HOUR, iso, MIN, S, series } from "../fixtures/plant";
import { createSignal, ingest, operator, operatorJson } from "../harness";

const D0 = Date.UTC(2025, 3, 7, 10);
const span = (s: { startTime: string; endTime: string | null }) => [s.startTime, s.endTime];

describe("no samples is no data", () => {
  it("at 1 Hz a silence is never a stop, even between samples without pieces", async () => {
    const plant = await detectionPlant();
    await plant.send([
      ...series(D0, D0 + 20 * MIN, S, () => 1),
      // 20 minutes without any sample, between pieces
      ...series(D0 + 40 * MIN, D0 + 50 * MIN, S, () => 1),
      // 10 minutes without pieces, then 20 minutes of silence, then 10 more without pieces
      ...series(D0 + 50 * MIN, D0 + 60 * MIN, S, () => 0),
      ...series(D0 + 80 * MIN, D0 + 90 * MIN, S, () => 0),
      ...series(D0 + 90 * MIN, D0 + 2 * HOUR, S, () => 1),
    ]);
    expect((await plant.stops()).map(span)).toEqual([
      // The last sample without pieces stands for its second.
      [iso(D0 + 50 * MIN), iso(D0 + 60 * MIN)],
      [iso(D0 + 80 * MIN), iso(D0 + 90 * MIN)],
    ]);
  });

  it("at 5-minute sampling a row without pieces stands for its 5 minutes, a missing row is no data", async () => {
    const plant = await detectionPlant();
    const row = (m: number, pieces: number): [number, number] => [D0 + m * MIN, pieces];
    await plant.send([
      row(0, 12),
      row(5, 0),
      row(10, 0),
      row(15, 9),
      row(20, 0),
      // 25 is missing: 10 minutes of silence
      row(30, 7),
      row(35, 0),
      row(40, 8),
    ]);
    expect((await plant.stops()).map(span)).toEqual([
      [iso(D0 + 5 * MIN), iso(D0 + 15 * MIN)],
      [iso(D0 + 20 * MIN), iso(D0 + 25 * MIN)],
      [iso(D0 + 35 * MIN), iso(D0 + 40 * MIN)],
    ]);
  });
});

describe("settings", () => {
  it("defaults, validation, and a new threshold applied to the last week at once", async () => {
    const plant = await detectionPlant();
    const path = `/machines/${plant.machineId}/stop-detection`;
    expect(await operatorJson("GET", path)).toEqual({
      enabled: true,
      stopThresholdSeconds: 300,
      maxSampleGapSeconds: 300,
      analog: null,
    });
    for (const [body, loc] of [
      [{ stopThresholdSeconds: 59 }, ["body", "stopThresholdSeconds"]],
      [{ maxSampleGapSeconds: 0 }, ["body", "maxSampleGapSeconds"]],
      [{ analog: { signal: "count", threshold: 1 } }, ["body", "analog", "signal"]],
      [{ analog: { signal: "power", threshold: 1 } }, ["body", "analog", "signal"]],
      [
        { analog: { signal: "power", threshold: 1, hysteresis: -1 } },
        ["body", "analog", "hysteresis"],
      ],
    ] as const) {
      const res = await operator("PUT", path, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const { detail } = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(detail[0]?.loc).toEqual(loc);
    }
    const h = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;
    await plant.send(
      series(h, h + HOUR, S, (t) =>
        (t >= h + 10 * MIN && t < h + 16 * MIN) || (t >= h + 30 * MIN && t < h + 42 * MIN) ? 0 : 1,
      ),
    );
    expect((await plant.stops()).map(span)).toEqual([
      [iso(h + 10 * MIN), iso(h + 16 * MIN)],
      [iso(h + 30 * MIN), iso(h + 42 * MIN)],
    ]);
    expect(await operatorJson("PUT", path, { stopThresholdSeconds: 600 })).toEqual({
      enabled: true,
      stopThresholdSeconds: 600,
      maxSampleGapSeconds: 300,
      analog: null,
    });
    expect((await plant.stops()).map(span)).toEqual([[iso(h + 30 * MIN), iso(h + 42 * MIN)]]);
  });

  it("a new threshold evaluates the stored summaries again; a new gap summarizes the samples again", async () => {
    const plant = await detectionPlant();
    const path = `/machines/${plant.machineId}/stop-detection`;
    const store = observedStore(env, plant.co.id, plant.machineId);
    const decoded = async () => (await store.detectionReads()).blocks;
    // Three hours of 1 Hz: 6 minutes without pieces, then 12, then 20 seconds silent
    // between pieces (inside the default gap of 300 s; outside a gap of 10 s).
    const h = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
    const down = (t: number) =>
      (t >= h + 10 * MIN && t < h + 16 * MIN) || (t >= h + 70 * MIN && t < h + 82 * MIN);
    const silent = (t: number) => t >= h + 150 * MIN && t < h + 150 * MIN + 20 * S;
    await plant.send(
      series(h, h + 3 * HOUR, S, (t) => (down(t) ? 0 : 1)).filter(([t]) => !silent(t)),
    );
    const both = [
      [iso(h + 10 * MIN), iso(h + 16 * MIN)],
      [iso(h + 70 * MIN), iso(h + 82 * MIN)],
    ];
    expect((await plant.stops()).map(span)).toEqual(both);
    // The threshold: the summaries stay what they were; no block of samples is decoded.
    const before = await decoded();
    await operatorJson("PUT", path, { stopThresholdSeconds: 600 });
    expect((await plant.stops()).map(span)).toEqual([both[1]]);
    await operatorJson("PUT", path, { stopThresholdSeconds: 300 });
    expect((await plant.stops()).map(span)).toEqual(both);
    expect(await decoded()).toBe(before);
    // The gap: the summaries depend on it; the three hours are summarized again, and so
    // are they when it goes back.
    await operatorJson("PUT", path, { maxSampleGapSeconds: 10 });
    expect(await decoded()).toBe(before + 3);
    expect((await plant.stops()).map(span)).toEqual(both);
    await operatorJson("PUT", path, { maxSampleGapSeconds: 300 });
    expect(await decoded()).toBe(before + 6);
    expect((await plant.stops()).map(span)).toEqual(both);
  });
});

describe("the clock", () => {
  it("ends a stop when its gateway goes quiet for longer than the gap", async () => {
    // A shift around now: with one from midnight, a run near 00:00 split the stop there.
    const plant = await detectionPlant(aroundNow());
    await operatorJson("PUT", `/machines/${plant.machineId}/stop-detection`, {
      maxSampleGapSeconds: 3,
      stopThresholdSeconds: 60,
    });
    const now = Math.floor(Date.now() / S) * S;
    await plant.send(series(now - 3 * MIN, now, S, (t) => (t < now - 2 * MIN ? 1 : 0)));
    expect((await plant.stops()).map(span)).toEqual([[iso(now - 2 * MIN), null]]);
    // Nothing arrives any more: past the gap, the alarm closes the stop after its last sample.
    await new Promise((done) => setTimeout(done, Math.max(0, now + 4 * S - Date.now())));
    await runDurableObjectAlarm(observedStore(env, plant.co.id, plant.machineId));
    await plant.settle();
    expect((await plant.stops()).map(span)).toEqual([[iso(now - 2 * MIN), iso(now)]]);
  });
});

describe("the clock, once the silence is over", () => {
  it("evaluates nothing more for history that ends without pieces, even after a late batch", async () => {
    const plant = await detectionPlant();
    const store = observedStore(env, plant.co.id, plant.machineId);
    const asleep = async () => {
      // Nothing the clock can change: running the object's alarm (whatever set it: the
      // signal archive sets its own) evaluates nothing. A wake due at once, set again by
      // each evaluation, would read the same hours without end.
      const before = (await store.detectionReads()).summaries;
      await runDurableObjectAlarm(store);
      await plant.settle();
      expect((await store.detectionReads()).summaries).toBe(before);
    };
    // Twelve hours long past ending in ten without pieces: that silence outlasted the gap
    // long ago.
    await plant.send(series(D0, D0 + 12 * HOUR, S, (t) => (t < D0 + 2 * HOUR ? 1 : 0)));
    const stop = [iso(D0 + 2 * HOUR), iso(D0 + 12 * HOUR)];
    expect((await plant.stops()).map(span)).toEqual([stop]);
    await runDurableObjectAlarm(store);
    await plant.settle();
    await asleep();
    // A late sample in the first hour: that hour and the one after it are evaluated, and the
    // ten-hour run at the end of the data, ended long ago, is not followed again.
    const beforeLate = (await store.detectionReads()).summaries;
    await plant.send([[D0 + 5 * MIN, 2]]);
    await runDurableObjectAlarm(store);
    await plant.settle();
    expect((await plant.stops()).map(span)).toEqual([stop]);
    expect((await store.detectionReads()).summaries - beforeLate).toBeLessThan(10);
    await asleep();
  });
});

describe("the analog rule", () => {
  it("finds the machine down below the threshold, with hysteresis, and joins it with the count rule", async () => {
    const plant = await detectionPlant();
    const power = await createSignal(plant.machineId, { name: "power" });
    await operatorJson("PUT", `/machines/${plant.machineId}/stop-detection`, {
      analog: { signal: "power", threshold: 1, hysteresis: 0.5 },
    });
    // Power: 5 kW, 0.2 kW from 10:10 (down), 1.2 kW from 10:20 (in the band: still down),
    // 2 kW from 10:23 (up); then 0.5 kW from 11:00 to 11:08, and 0.5 kW from 11:30 to 11:33
    // (shorter than the threshold: no stop, however the counter reads then).
    await ingest(
      power,
      series(D0, D0 + 2 * HOUR, S, (t) => {
        const m = (t - D0) / MIN;
        if (m >= 10 && m < 20) return 0.2;
        if (m >= 20 && m < 23) return 1.2;
        if ((m >= 60 && m < 68) || (m >= 90 && m < 93)) return 0.5;
        return 5;
      }),
    );
    // Pieces, except from 11:05 to 11:12 (with the power's 11:00 to 11:08: one stop 11:00 to
    // 11:12) and from 11:32 to 11:35 (each rule's time is too short: none).
    const noPieces = (m: number) => (m >= 65 && m < 72) || (m >= 92 && m < 95);
    await plant.send(series(D0, D0 + 2 * HOUR, S, (t) => (noPieces((t - D0) / MIN) ? 0 : 1)));
    expect((await plant.stops()).map(span)).toEqual([
      [iso(D0 + 10 * MIN), iso(D0 + 23 * MIN)],
      [iso(D0 + 60 * MIN), iso(D0 + 72 * MIN)],
    ]);
  });
});
