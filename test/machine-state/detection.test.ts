import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { observedStore } from "../fixtures/observed-signal-store";
import { detectionPlant, HOUR, iso, MIN, S, series } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest } from "../harness";

const D0 = Date.UTC(2025, 3, 7, 6);

describe("detected stops from the count signal", () => {
  it("at 1 Hz: a silence of pieces of 10 minutes is a stop, one of 4 minutes is not", async () => {
    const plant = await detectionPlant();
    const down = (t: number) =>
      (t >= D0 + 30 * MIN && t < D0 + 40 * MIN) || (t >= D0 + 60 * MIN && t < D0 + 64 * MIN);
    await plant.send(series(D0, D0 + 2 * HOUR, S, (t) => (down(t) ? 0 : 1)));
    const stops = await plant.stops();
    expect(stops).toHaveLength(1);
    expect(stops[0]).toMatchObject({
      startTime: iso(D0 + 30 * MIN),
      endTime: iso(D0 + 40 * MIN),
      isProgrammed: false,
      isIncludedInAvailability: true,
      isIncludedInStops: true,
      isManual: false,
    });
  });
});

describe("a backfill's burst of calls", () => {
  const down = (t: number) => t >= D0 + 30 * MIN && t < D0 + 40 * MIN;
  const history = series(D0, D0 + 5 * HOUR, S, (t) => (down(t) ? 0 : 1));

  it("is evaluated once its calls stop, with nothing to wait for it", async () => {
    const plant = await detectionPlant();
    // Two calls of 10,000 samples two days back (inside the hot window: no archive alarm
    // comes soon); no call of the test settles the detector.
    const from = Math.floor(Date.now() / HOUR) * HOUR - 48 * HOUR;
    const recent = series(from, from + 20_000 * S, S, (t) => (down(t - from + D0) ? 0 : 1));
    await ingest(plant.count, recent);
    // Within the longest wait of a burst (10 s), before the safety alarm (30 s).
    const deadline = Date.now() + 20_000;
    let stops = await plant.stops();
    while (stops.length === 0 && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 500));
      stops = await plant.stops();
    }
    expect(stops.map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(from + 30 * MIN), iso(from + 40 * MIN)],
    ]);
  });

  it("gives the alarm back to the signal storage once its evaluation is done", async () => {
    const plant = await detectionPlant();
    // A day back, inside the hot window: the storage's next step is an hour away.
    const from = Math.floor(Date.now() / HOUR) * HOUR - 24 * HOUR;
    const day = (t: number) => (down(t - from + D0) ? 0 : 1);
    await plant.send(series(from, from + HOUR, S, day));
    // The object's alarm runs (the storage's step sets its next, an hour away); then a
    // second call of the backfill.
    const store = observedStore(env, plant.co.id, plant.machineId);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    await ingest(plant.count, series(from + HOUR, from + 2 * HOUR, S, day));
    // The alarm the ingestion set in case the object went before its evaluation (30 s) is
    // given back once the burst is evaluated (within its 3 s of quiet): it would run the
    // archive and retention step an hour early, its settings read from D1, every backfill.
    const alarm = () => runInDurableObject(store, (_instance, state) => state.storage.getAlarm());
    const deadline = Date.now() + 15_000;
    let next = await alarm();
    while ((next === null || next < Date.now() + 50 * MIN) && Date.now() < deadline) {
      await new Promise((done) => setTimeout(done, 500));
      next = await alarm();
    }
    expect(next).toBeGreaterThan(Date.now() + 50 * MIN);
    expect((await plant.stops()).map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(from + 30 * MIN), iso(from + 40 * MIN)],
    ]);
  });

  it("loses no stop when the object restarts before the burst's evaluation", async () => {
    const plant = await detectionPlant();
    await ingest(plant.count, history);
    // The object goes at once, before its burst is quiet: what waits is in its storage, and
    // the object's alarm (set by the ingestion) evaluates it.
    const stub = observedStore(env, plant.co.id, plant.machineId);
    await runInDurableObject(stub, (_instance, state) => state.abort("restart")).catch(
      (error: unknown) => expect(String(error)).toContain("restart"),
    );
    const woken = observedStore(env, plant.co.id, plant.machineId);
    expect(await runDurableObjectAlarm(woken)).toBe(true);
    expect((await plant.stops()).map((s) => [s.startTime, s.endTime])).toEqual([
      [iso(D0 + 30 * MIN), iso(D0 + 40 * MIN)],
    ]);
  });
});

describe("a stop going on now", () => {
  it("is open in the stops report and on the stream until pieces come again", async () => {
    const plant = await detectionPlant();
    const res = await api(plant.co.key, `/v1/realtime/${plant.machineId}/events`);
    expect(res.status).toBe(200);
    const sub = new SseSubscriber(res);
    try {
      const now = Math.floor(Date.now() / S) * S;
      const downFrom = now - 8 * MIN;
      // Pieces every second for 20 minutes, then none for the last 8.
      await plant.send(series(now - 28 * MIN, now, S, (t) => (t < downFrom ? 1 : 0)));
      const [open] = await plant.stops();
      expect(open).toMatchObject({ startTime: iso(downFrom), endTime: null, isManual: false });
      const [started] = await sub.waitFor((e) => e.type === "stop.started");
      expect(started?.data).toMatchObject({
        stop: { id: open?.id, startTime: iso(downFrom), endTime: null },
      });

      // Pieces again a second later: the stop ends at that sample.
      await plant.send([[now, 3]]);
      const [closed] = await plant.stops();
      expect(closed).toMatchObject({ id: open?.id, startTime: iso(downFrom), endTime: iso(now) });
      const [ended] = await sub.waitFor((e) => e.type === "stop.ended");
      expect(ended?.data).toMatchObject({ stop: { id: open?.id, endTime: iso(now) } });
    } finally {
      await sub.close();
    }
  });
});

describe("an open detected stop in the reports", () => {
  it("counts until now in the downtime Pareto, the metrics and the KPI report", async () => {
    const plant = await detectionPlant();
    const now = Math.floor(Date.now() / S) * S;
    const downFrom = now - 8 * MIN;
    await plant.send(series(now - 28 * MIN, now, S, (t) => (t < downFrom ? 1 : 0)));
    const [open] = await plant.stops();
    expect(open).toMatchObject({ startTime: iso(downFrom), endTime: null });
    const post = async <T>(path: string, json: unknown): Promise<T> => {
      const res = await api(plant.co.key, path, { method: "POST", json });
      expect(res.status).toBe(200);
      return (await res.json()) as T;
    };
    const machines = { include: [plant.machineId] };
    // Each report runs the open stop to the instant it answers: between these two minutes.
    const atLeast = (Date.now() - downFrom) / MIN - 1e-6;

    const pareto = await post<{ downtime: { stops: number; minutes: number }[] }>(
      "/v1/reports/downtime",
      { machines },
    );
    const metrics = await post<{
      metrics: { shiftIndicators: { nonProgrammedDowntime: number } }[];
    }>("/v1/reports/metrics", { machines, limit: 100 });
    const kpis = await post<{
      kpis: { minutes: { nonProgrammedDowntime: number }; counts: { unplannedStops: number } }[];
    }>("/v1/reports/kpis", { machines });
    const atMost = (Date.now() - downFrom) / MIN + 1e-6;

    expect(pareto.downtime).toHaveLength(1);
    expect(pareto.downtime[0]?.stops).toBe(1);
    expect(pareto.downtime[0]?.minutes).toBeGreaterThanOrEqual(atLeast);
    expect(pareto.downtime[0]?.minutes).toBeLessThanOrEqual(atMost);
    const downtime = metrics.metrics.reduce(
      (s, r) => s + r.shiftIndicators.nonProgrammedDowntime,
      0,
    );
    expect(downtime).toBeGreaterThanOrEqual(atLeast);
    expect(downtime).toBeLessThanOrEqual(atMost);
    const kpiDowntime = kpis.kpis.reduce((s, r) => s + r.minutes.nonProgrammedDowntime, 0);
    expect(kpiDowntime).toBeGreaterThanOrEqual(atLeast);
    expect(kpiDowntime).toBeLessThanOrEqual(atMost);
    expect(kpis.kpis.reduce((s, r) => s + r.counts.unplannedStops, 0)).toBe(1);
  });
});
