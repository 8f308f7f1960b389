/**
 * Time arithmetic bounded by the samples (issue 48; docs/machine-state.md, "Bounded by the
 * samples"; docs/input-bounds.md, "Sample instants"): samples at any instant from 1970 to 9999
 * reach the detector (straight into the store, as before the route refused the future), and
 * the planned time it lists follows the runs, not the distance between two instants; the
 * object's alarm stays within two days. A machine that took samples from the future before the
 * bound recovers when it wakes: the samples after the bound go, its summaries, stretches,
 * wake and detected stops are repaired, and its D1 stops after now go with their events.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_WAKE_AHEAD_MS } from "../../src/machine-state/detector";
import { latestSampleAt } from "../../src/resources/signals/sample-bounds";
import { observedStore, type SignalStore } from "../fixtures/observed-signal-store";
import { detectionPlant, iso, MIN, S, series } from "../fixtures/plant";
import { api, createCompany, createMachines, createSignal, operator, shardD1 } from "../harness";

const DAY = 86_400_000;
const Y1970 = 0;
const Y9999_END = Date.UTC(9999, 11, 31, 23, 59, 59);
/** The latest hour any state may reach now: the bound's hour. */
const latestHour = () => Math.floor(latestSampleAt(Date.now()) / 3_600_000) * 3_600_000;

/** The internal id of a signal, by its public id. */
async function signalIdOf(companyId: number, publicId: string): Promise<number> {
  const d1 = await shardD1(companyId);
  const row = await d1
    .prepare("SELECT id FROM signals WHERE public_id = ?")
    .bind(publicId)
    .first<{ id: number }>();
  if (!row) throw new Error("no signal");
  return row.id;
}

/**
 * Stores samples in a machine's count signal as an ingestion did before instants were
 * bounded: straight into the store, no route in between.
 */
async function ingestUnchecked(
  stub: DurableObjectStub<SignalStore>,
  machine: { companyId: number; machineId: number; signalId: number },
  samples: readonly (readonly [number, number])[],
): Promise<void> {
  await runInDurableObject(stub, (instance: SignalStore) =>
    instance.ingest(
      machine.signalId,
      samples.map(([t]) => t),
      samples.map(([, v]) => v),
      null,
      {
        companyId: machine.companyId,
        machineId: machine.machineId,
        countSignal: true,
        hotWindowMs: 35 * DAY,
      },
    ),
  );
  await stub.settleDetection();
}

/**
 * Ends the object's instance, as a deployment or an eviction does: the next call wakes it.
 *
 * @returns a new stub (the old one stays broken).
 */
async function restart(machine: {
  companyId: number;
  machineId: number;
}): Promise<DurableObjectStub<SignalStore>> {
  const stub = observedStore(env, machine.companyId, machine.machineId);
  await stub.settleDetection();
  await runInDurableObject(stub, (_instance: SignalStore, state) => state.abort("restart")).catch(
    (error: unknown) => expect(String(error)).toContain("restart"),
  );
  return observedStore(env, machine.companyId, machine.machineId);
}

/** What the store and its detector hold after the bound, and its alarm. */
async function stateAfterBound(stub: DurableObjectStub<SignalStore>) {
  const hour = latestHour();
  return runInDurableObject(stub, async (_instance: SignalStore, state) => {
    const sql = state.storage.sql;
    const count = (query: string, ...args: number[]) =>
      sql.exec<{ n: number }>(query, ...args).one().n;
    return {
      blocks: count("SELECT count(*) AS n FROM blocks WHERE hour > ?", hour),
      summaries: count("SELECT count(*) AS n FROM detect_hours WHERE hour > ?", hour),
      stops: count(
        "SELECT count(*) AS n FROM detected_stops WHERE removed = 0 AND start > ?",
        latestSampleAt(Date.now()),
      ),
      wake: sql.exec<{ w: number | null }>("SELECT wake_at AS w FROM detect_state").one().w,
      alarm: await state.storage.getAlarm(),
    };
  });
}

describe("a machine that took samples from the future before they were refused", () => {
  it("is repaired when it wakes: samples, summaries, wake, alarm and stops after the bound go", async () => {
    const plant = await detectionPlant();
    let stub = observedStore(env, plant.co.id, plant.machineId);
    const machine = {
      companyId: plant.co.id,
      machineId: plant.machineId,
      signalId: await signalIdOf(plant.co.id, plant.count),
    };
    const now = Math.floor(Date.now() / S) * S;
    // Today: pieces for an hour (the machine known to its store).
    await plant.send(series(now - 2 * 3_600_000, now - 3_600_000, S, () => 1));
    // The outside tester's samples: one in 9999, one on 2100-01-01, then 30 zeros on 2100-01-04.
    const jan4 = Date.UTC(2100, 0, 4, 6);
    await ingestUnchecked(stub, machine, [
      [Y9999_END, 1],
      [Date.UTC(2100, 0, 1, 7), 3],
      ...series(jan4, jan4 + 30 * MIN, MIN, () => 0),
    ]);
    // What the former code left besides: a wake in 9999 (the alarm it could not set) and a
    // stretch waiting to 9999.
    await runInDurableObject(stub, async (_instance: SignalStore, state) => {
      state.storage.sql.exec("UPDATE detect_state SET wake_at = ?", Y9999_END);
      state.storage.sql.exec(
        "INSERT INTO detect_pending (start, end) VALUES (?, ?)",
        Date.UTC(2100, 0, 1),
        Y9999_END,
      );
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    const before = await stateAfterBound(stub);
    expect(before.blocks).toBeGreaterThan(0);
    expect(before.summaries).toBeGreaterThan(0);
    const future = (await plant.stops()).filter((s) => Date.parse(s.startTime) > now);
    expect(future.map((s) => s.startTime)).toEqual([iso(jan4)]);

    // The wake: the object starts again (the fix deployed) and its alarm runs.
    stub = await restart(machine);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await stub.settleDetection();
    const after = await stateAfterBound(stub);
    expect(after).toMatchObject({ blocks: 0, summaries: 0, stops: 0 });
    const horizon = Date.now() + MAX_WAKE_AHEAD_MS;
    expect(after.wake === null || after.wake <= horizon, `wake ${after.wake}`).toBe(true);
    expect(after.alarm === null || after.alarm <= horizon, `alarm ${after.alarm}`).toBe(true);
    expect((await plant.stops()).filter((s) => Date.parse(s.startTime) > now)).toEqual([]);
    const atMachine = await api(plant.co.key, `/v1/realtime/${plant.machineId}/stops`);
    const listed = (await atMachine.json()) as { stops: { stop: { startTime: string } }[] };
    expect(listed.stops.filter((r) => Date.parse(r.stop.startTime) > now)).toEqual([]);

    // Ordinary samples detect as before: zeros for the last 10 minutes are a stop going on.
    const t0 = Math.floor(Date.now() / S) * S;
    await plant.send(series(t0 - 20 * MIN, t0, S, (t) => (t < t0 - 10 * MIN ? 1 : 0)));
    const open = (await plant.stops()).filter((s) => s.endTime === null);
    expect(open.map((s) => s.startTime)).toEqual([iso(t0 - 10 * MIN)]);
  });
});

/** An instant from 1970 to 9999, whole seconds. */
const instant = fc.integer({ min: Y1970 / S, max: Y9999_END / S }).map((s) => s * S);

/**
 * Samples of a count signal around random instants: single samples, and stretches of zeros
 * or pieces a minute apart (runs long enough to be stops).
 */
const samplesArb = fc
  .array(
    fc.oneof(
      fc.tuple(instant, fc.constantFrom(0, 1)).map(([t, v]) => [[t, v] as [number, number]]),
      fc
        .tuple(instant, fc.integer({ min: 2, max: 40 }), fc.constantFrom(0, 1))
        .map(([t, n, v]) => series(t, t + n * MIN, MIN, () => v)),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .map((groups) => groups.flat());

describe("the detector, given instants from 1970 to 9999", () => {
  it("plans time in proportion to its samples, keeps its alarm within two days, and repairs to the bound", async () => {
    const plant = await detectionPlant([
      { name: "Early", startTime: "06:00", endTime: "14:00", weekdays: [1, 2, 3, 4, 5] },
      { name: "Late", startTime: "14:00", endTime: "22:00", weekdays: [1, 2, 3, 4, 5] },
    ]);
    const runs = 12;
    const machines = await createMachines(
      plant.co.id,
      Array.from({ length: runs }, (_, i) => ({ name: `Random ${i}` })),
    );
    const targets: { companyId: number; machineId: number; signalId: number }[] = [];
    for (const m of machines) {
      const publicId = await createSignal(m.id, { name: "count", kind: "counter" });
      targets.push({
        companyId: plant.co.id,
        machineId: m.id,
        signalId: await signalIdOf(plant.co.id, publicId),
      });
    }
    let run = 0;
    await fc.assert(
      fc.asyncProperty(samplesArb, async (samples) => {
        const target = targets[run++ % targets.length];
        if (!target) throw new Error("no machine");
        let stub = observedStore(env, target.companyId, target.machineId);
        const before = (await stub.detectionReads()).planDates;
        await ingestUnchecked(stub, target, samples);
        const planned = (await stub.detectionReads()).planDates - before;
        // Each run plans the days it spans (a minute between its samples) and a day or two
        // at each end, per definition; the former code planned every day between the first
        // and the last sample (2.9 million for 1970 to 9999).
        expect(planned, `${samples.length} samples`).toBeLessThanOrEqual(
          2 * (samples.length * 8 + 50),
        );
        const state = await stateAfterBound(stub);
        const horizon = Date.now() + MAX_WAKE_AHEAD_MS;
        expect(state.alarm === null || state.alarm <= horizon, `alarm ${state.alarm}`).toBe(true);
        expect(state.wake === null || state.wake <= horizon, `wake ${state.wake}`).toBe(true);
        // The next wake drops what lies after the bound, and the stops detected there.
        stub = await restart(target);
        await runDurableObjectAlarm(stub);
        await stub.settleDetection();
        expect(await stateAfterBound(stub)).toMatchObject({ blocks: 0, summaries: 0, stops: 0 });
      }),
      { numRuns: runs, seed: 48 },
    );
  }, 300_000);
});

describe("the far-future uploads of issue 48, through the route", () => {
  it("refuses 9999 and 2100 at their index, stores nothing, offers no stop, and leaves another company's request alone", async () => {
    const plant = await detectionPlant();
    const other = await createCompany({ timezone: "UTC" });
    const [theirs] = await createMachines(other.id, [{ name: "Their press" }]);
    const upload = (body: unknown) => operator("POST", `/signals/${plant.count}/samples`, body);
    const day2100 = Date.UTC(2100, 0, 4, 7);
    // The attack: one sample in 9999, one in 2100, then 30 zeros on 2100-01-04, while
    // another company lists its machines.
    const [far, year2100, zeros, listed] = await Promise.all([
      upload({ samples: [{ timestamp: "9999-12-31T23:59:59Z", value: 1 }] }),
      upload({ timestamps: ["2100-01-01T07:00:00Z"], values: [1] }),
      upload({
        timestamps: Array.from({ length: 30 }, (_, i) => iso(day2100 + i * S)),
        values: Array.from({ length: 30 }, () => 0),
      }),
      api(other.key, "/v1/machines"),
    ]);
    const locs = async (res: Response) => {
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[]; msg: string }[] };
      for (const d of body.detail)
        expect(d.msg).toMatch(/at most 5 minutes after the server's clock/);
      return body.detail.map((d) => d.loc);
    };
    expect(await locs(far)).toEqual([["body", "samples", 0, "timestamp"]]);
    expect(await locs(year2100)).toEqual([["body", "timestamps", 0]]);
    expect(await locs(zeros)).toEqual(
      Array.from({ length: 30 }, (_, i) => ["body", "timestamps", i]),
    );
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual([
      expect.objectContaining({ id: theirs?.id, name: "Their press" }),
    ]);

    // Nothing of the refused calls reached the machine's store: no block, no stop, no alarm
    // beyond the detector's two days.
    await plant.settle();
    const stub = observedStore(env, plant.co.id, plant.machineId);
    const held = await runInDurableObject(stub, async (_instance: SignalStore, state) => ({
      blocks: state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM blocks").one().n,
      alarm: await state.storage.getAlarm(),
    }));
    expect(held.blocks).toBe(0);
    expect(held.alarm === null || held.alarm <= Date.now() + MAX_WAKE_AHEAD_MS).toBe(true);
    expect(await plant.stops()).toEqual([]);
    const atMachine = await api(plant.co.key, `/v1/realtime/${plant.machineId}/stops`);
    expect(atMachine.status).toBe(200);
    expect(((await atMachine.json()) as { stops: unknown[] }).stops).toEqual([]);

    // The machine goes on: ordinary samples up to now are taken and detected as before.
    const now = Math.floor(Date.now() / S) * S;
    await plant.send(series(now - 30 * MIN, now, 10 * S, (t) => (t < now - 15 * MIN ? 1 : 0)));
    const stops = await plant.stops();
    expect(stops).toHaveLength(1);
    expect(Date.parse(stops[0]?.startTime ?? "")).toBeLessThanOrEqual(Date.now());
  });
});
