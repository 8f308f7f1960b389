/**
 * Where each stop came from (`origin`), and one breakdown as one stop: detected downtime
 * that overlaps or touches a recorded stop is taken in by it (docs/machine-state.md,
 * "Recorded stops take in detected downtime"), whatever the order in which the samples and
 * the recorded stop arrive.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Api, OperatorSchemas } from "../fixtures/api-types";
import { observedStore } from "../fixtures/observed-signal-store";
import { detectionPlant, HOUR, iso, MIN, S, series } from "../fixtures/plant";
import { api, createMachines, createSignal, ingest, operator, operatorJson } from "../harness";
import { type Cls, referenceRuns } from "./reference";

const D0 = Date.UTC(2025, 3, 7, 10);

/** 1 Hz from D0 for 2 hours with pieces, except in the given minutes after D0. */
function day(downMinutes: [number, number][]): [number, number][] {
  return series(D0, D0 + 2 * HOUR, S, (t) =>
    downMinutes.some(([a, b]) => t >= D0 + a * MIN && t < D0 + b * MIN) ? 0 : 1,
  );
}

type Stop = Api["Stop"];

const span = (s: { startTime: string; endTime: string | null }) => [s.startTime, s.endTime];

describe("the origin of a stop", () => {
  it("tells a detected stop from one recorded through the operator API, and filters on it", async () => {
    const plant = await detectionPlant();
    await plant.send(day([[10, 20]]));
    await operatorJson("POST", `/machines/${plant.machineId}/stops`, [
      { startTime: iso(D0 + 60 * MIN), endTime: iso(D0 + 70 * MIN), isProgrammed: false },
    ]);
    await plant.settle();
    const stops = await plant.stops();
    expect(stops.map((s) => [...span(s), s.origin, s.isManual])).toEqual([
      [iso(D0 + 10 * MIN), iso(D0 + 20 * MIN), "detected", false],
      [iso(D0 + 60 * MIN), iso(D0 + 70 * MIN), "operatorApi", false],
    ]);
    const only = async (origin: string[]) => {
      const res = await api(plant.co.key, "/v1/reports/stops", {
        method: "POST",
        json: { machines: { include: [plant.machineId] }, origin },
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as Api["StopsReportPage"]).stops.map((r) => r.stop.origin);
    };
    expect(await only(["detected"])).toEqual(["detected"]);
    expect(await only(["operatorApi"])).toEqual(["operatorApi"]);
    expect(await only(["detected", "operatorApi"])).toEqual(["detected", "operatorApi"]);
    const bad = await api(plant.co.key, "/v1/reports/stops", {
      method: "POST",
      json: { origin: ["scanner"] },
    });
    expect(bad.status).toBe(422);
    // The Pareto filters the same way.
    const pareto = await api(plant.co.key, "/v1/reports/downtime", {
      method: "POST",
      json: { machines: { include: [plant.machineId] }, origin: ["detected"] },
    });
    expect(pareto.status).toBe(200);
    const groups = (await pareto.json()) as { downtime: { stops: number; minutes: number }[] };
    expect(groups.downtime.map((g) => [g.stops, g.minutes])).toEqual([[1, 10]]);
    // The realtime list a scanner reads says it too.
    const recent = await api(plant.co.key, `/v1/realtime/${plant.machineId}/stops`);
    expect(recent.status).toBe(200);
  });
});

describe("one breakdown, one stop", () => {
  it("a recorded stop takes in the detected downtime it overlaps or touches, and gives it back", async () => {
    const plant = await detectionPlant();
    await plant.send(
      day([
        [30, 52],
        [60, 100],
      ]),
    );
    const [recorded, programmed] = (await operatorJson(
      "POST",
      `/machines/${plant.machineId}/stops`,
      [
        // A jam entered a little late and ended early (inside the first downtime).
        {
          startTime: iso(D0 + 31 * MIN),
          endTime: iso(D0 + 50 * MIN),
          isProgrammed: false,
          isManual: true,
        },
        // A programmed stop touching the second downtime's start only at its end.
        { startTime: iso(D0 + 55 * MIN), endTime: iso(D0 + 60 * MIN), isProgrammed: true },
      ],
    )) as OperatorSchemas["OperatorStop"][];
    await operatorJson("PUT", `/stops/${recorded?.id}/classification`, {
      generalCause: { name: "Jam" },
    });
    await plant.settle();
    const rows = await plant.report();
    const stops = rows.map((r) => r.stop);
    expect(
      stops.map((s) => [s.id, ...span(s), s.origin, s.isProgrammed, s.detectedDowntime]),
    ).toEqual([
      [
        recorded?.id,
        iso(D0 + 30 * MIN),
        iso(D0 + 52 * MIN),
        "operatorApi",
        false,
        { startTime: iso(D0 + 30 * MIN), endTime: iso(D0 + 52 * MIN) },
      ],
      [
        programmed?.id,
        iso(D0 + 55 * MIN),
        iso(D0 + 100 * MIN),
        "operatorApi",
        true,
        { startTime: iso(D0 + 60 * MIN), endTime: iso(D0 + 100 * MIN) },
      ],
    ]);
    expect(rows[0]?.classification.generalCause.name).toBe("Jam");
    // Moved away from the downtime: the downtime is a detected stop again.
    expect(
      (
        await operator("PATCH", `/stops/${recorded?.id}`, {
          startTime: iso(D0 + 5 * MIN),
          endTime: iso(D0 + 8 * MIN),
        })
      ).status,
    ).toBe(204);
    // Deleted: the same.
    expect((await operator("DELETE", `/stops/${programmed?.id}`)).status).toBe(204);
    await plant.settle();
    const after = await plant.stops();
    expect(after.map((s) => [...span(s), s.origin, s.detectedDowntime])).toEqual([
      [iso(D0 + 5 * MIN), iso(D0 + 8 * MIN), "operatorApi", null],
      [iso(D0 + 30 * MIN), iso(D0 + 52 * MIN), "detected", null],
      [iso(D0 + 60 * MIN), iso(D0 + 100 * MIN), "detected", null],
    ]);
  });

  it("a downtime touching two recorded stops: the gap between them goes to the earlier", async () => {
    const plant = await detectionPlant();
    await operatorJson("POST", `/machines/${plant.machineId}/stops`, [
      { startTime: iso(D0 + 10 * MIN), endTime: iso(D0 + 15 * MIN), isProgrammed: false },
      { startTime: iso(D0 + 25 * MIN), endTime: iso(D0 + 30 * MIN), isProgrammed: true },
    ]);
    await plant.send(day([[12, 28]]));
    const stops = await plant.stops();
    expect(stops.map((s) => [...span(s), s.isProgrammed])).toEqual([
      [iso(D0 + 10 * MIN), iso(D0 + 25 * MIN), false],
      [iso(D0 + 25 * MIN), iso(D0 + 30 * MIN), true],
    ]);
  });
});

/** A stop as the plant sees it, without ids and instants of writing. */
const seen = (s: Stop) => ({
  start: s.startTime,
  end: s.endTime,
  isProgrammed: s.isProgrammed,
  origin: s.origin,
  detectedDowntime: s.detectedDowntime,
});

describe("the same stop whichever arrives first", () => {
  it("samples then the recorded stop, or the recorded stop then the samples", async () => {
    // The company's 24-hour shift applies to every machine made below.
    const plant = await detectionPlant();
    const T0 = Date.UTC(2025, 4, 12, 3, 51);
    // Stretches of pieces and of none at 1 Hz or 1/min, and a recorded stop somewhere in them.
    const caseArb = fc.record({
      stretches: fc.array(
        fc.record({
          down: fc.boolean(),
          minutes: fc.integer({ min: 1, max: 15 }),
          period: fc.constantFrom(S, 10 * S, MIN),
        }),
        { minLength: 2, maxLength: 7 },
      ),
      recorded: fc.record({
        from: fc.integer({ min: 0, max: 80 }),
        minutes: fc.integer({ min: 1, max: 20 }),
        isProgrammed: fc.boolean(),
      }),
    });
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ stretches, recorded }) => {
        const samples: [number, number][] = [];
        let t = T0;
        for (const s of stretches) {
          const end = t + s.minutes * MIN;
          for (; t < end; t += s.period) samples.push([t, s.down ? 0 : 3]);
        }
        // Pieces after, so that no run reaches now.
        for (const end = t + 10 * MIN; t < end; t += S) samples.push([t, 3]);
        const stop = {
          startTime: iso(T0 + recorded.from * MIN),
          endTime: iso(T0 + (recorded.from + recorded.minutes) * MIN),
          isProgrammed: recorded.isProgrammed,
        };
        const results = [];
        for (const samplesFirst of [true, false]) {
          const [m] = await createMachines(plant.co.id, [{ name: `M${samplesFirst}` }]);
          if (!m) throw new Error("no machine");
          const count = await createSignal(m.id, { name: "count", kind: "counter" });
          const store = observedStore(env, plant.co.id, m.id);
          const send = async () => {
            await ingest(count, samples);
            await store.settleDetection();
          };
          const record = async () => {
            await operatorJson("POST", `/machines/${m.id}/stops`, [stop]);
            await store.settleDetection();
          };
          if (samplesFirst) {
            await send();
            await record();
          } else {
            await record();
            await send();
          }
          const res = await api(plant.co.key, "/v1/reports/stops", {
            method: "POST",
            json: { machines: { include: [m.id] }, limit: 100 },
          });
          const got = ((await res.json()) as Api["StopsReportPage"]).stops.map((r) => r.stop);
          // Stops never overlap on a machine.
          for (let i = 1; i < got.length; i++) {
            const before = got[i - 1] as Stop;
            expect(before.endTime).not.toBeNull();
            expect(Date.parse(before.endTime as string)).toBeLessThanOrEqual(
              Date.parse((got[i] as Stop).startTime),
            );
          }
          // The recorded stop is there, with its flag, covering at least its own time.
          const mine = got.filter((s) => s.origin === "operatorApi");
          expect(mine).toHaveLength(1);
          expect(mine[0]?.isProgrammed).toBe(recorded.isProgrammed);
          expect(Date.parse(mine[0]?.startTime ?? "")).toBeLessThanOrEqual(
            Date.parse(stop.startTime),
          );
          results.push(got.map(seen));
        }
        expect(results[1]).toEqual(results[0]);
        // And the stops the rule gives: the detected runs of at least 5 minutes, those that
        // overlap or touch the recorded stop joined with it into one.
        const rec = { start: Date.parse(stop.startTime), end: Date.parse(stop.endTime) };
        const runs = referenceRuns(
          samples.map(([at, v]) => ({ t: at, c: (v > 0 ? "up" : "down") as Cls })),
          300 * S,
          Date.now(),
        ).flatMap((r) => (r.end !== null && r.end - r.start >= 300 * S ? [r] : []));
        const touching = runs.filter((r) => r.start <= rec.end && (r.end as number) >= rec.start);
        const want = [
          ...runs
            .filter((r) => !touching.includes(r))
            .map((r) => [r.start, r.end as number, "detected"]),
          [
            Math.min(rec.start, ...touching.map((r) => r.start)),
            Math.max(rec.end, ...touching.map((r) => r.end as number)),
            "operatorApi",
          ],
        ].sort((a, b) => (a[0] as number) - (b[0] as number));
        expect(
          results[0]?.map((s) => [Date.parse(s.start), Date.parse(s.end ?? ""), s.origin]),
        ).toEqual(want);
      }),
      { numRuns: 12 },
    );
  }, 600_000);
});
