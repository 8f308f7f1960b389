/**
 * Recorded stops against detected ones (docs/machine-state.md, "Recorded and programmed
 * stops"), and what a detected stop's classification becomes when late samples move it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { answers, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { detectionPlant, HOUR, iso, MIN, S, series } from "../fixtures/plant";
import { deliveriesOf, register, settleDeliverers } from "../fixtures/webhook-harness";
import { operator, operatorJson } from "../harness";

const D0 = Date.UTC(2025, 3, 7, 10);

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
});

/** 1 Hz from D0 for 2 hours with pieces, except in the given minutes after D0. */
function day(downMinutes: [number, number][]): [number, number][] {
  return series(D0, D0 + 2 * HOUR, S, (t) =>
    downMinutes.some(([a, b]) => t >= D0 + a * MIN && t < D0 + b * MIN) ? 0 : 1,
  );
}

const span = (s: { startTime: string; endTime: string | null }) => [s.startTime, s.endTime];

describe("a recorded stop over a detected one", () => {
  it("takes the detected stop in: one stop, the recorded one, over both times", async () => {
    const plant = await detectionPlant();
    await plant.send(
      day([
        [30, 52],
        [60, 100],
      ]),
    );
    const detected = await plant.stops();
    expect(detected.map(span)).toEqual([
      [iso(D0 + 30 * MIN), iso(D0 + 52 * MIN)],
      [iso(D0 + 60 * MIN), iso(D0 + 100 * MIN)],
    ]);
    // Recorded by hand: a jam 10:31 to 10:50 (inside the first), 11:10 to 11:20 (inside the second).
    await operatorJson("POST", `/machines/${plant.machineId}/stops`, [
      {
        startTime: iso(D0 + 31 * MIN),
        endTime: iso(D0 + 50 * MIN),
        isProgrammed: false,
        isManual: true,
      },
      { startTime: iso(D0 + 70 * MIN), endTime: iso(D0 + 80 * MIN), isProgrammed: true },
    ]);
    await plant.settle();
    const after = await plant.stops();
    // One breakdown, one stop: each recorded stop covers the downtime it lies in, with its
    // own flags (the programmed one makes the whole of it programmed).
    expect(after.map((s) => [...span(s), s.isManual, s.isProgrammed])).toEqual([
      [iso(D0 + 30 * MIN), iso(D0 + 52 * MIN), true, false],
      [iso(D0 + 60 * MIN), iso(D0 + 100 * MIN), false, true],
    ]);
    // The detected stops are gone: neither id is shown any more.
    const ids = after.map((s) => s.id);
    expect(detected.filter((d) => ids.includes(d.id))).toEqual([]);
  });

  it("a detected stop a person edits becomes theirs; one a person deletes stays deleted", async () => {
    const plant = await detectionPlant();
    await plant.send(
      day([
        [10, 20],
        [40, 50],
      ]),
    );
    const [first, second] = await plant.stops();
    expect((await operator("PATCH", `/stops/${first?.id}`, { isProgrammed: true })).status).toBe(
      204,
    );
    expect((await operator("DELETE", `/stops/${second?.id}`)).status).toBe(204);
    await plant.settle();
    // The same samples again, and later zeros that make the machine down 6 minutes longer.
    await plant.send([
      ...day([
        [10, 20],
        [40, 50],
      ]),
      ...series(D0 + 20 * MIN, D0 + 26 * MIN, S, () => 0),
    ]);
    const stops = await plant.stops();
    // The person's stop takes in the minutes the machine stayed down after it (one
    // breakdown, one stop, programmed as they set it); the deleted one stays gone.
    expect(stops.map((s) => [s.id === first?.id, ...span(s), s.isProgrammed])).toEqual([
      [true, iso(D0 + 10 * MIN), iso(D0 + 26 * MIN), true],
    ]);
  });
});

describe("late samples with pieces", () => {
  it("keep a classification on the part that remains, and report it removed with the stop", async () => {
    const net = fakeNetwork();
    const plant = await detectionPlant();
    const { url } = publicEndpoint(net, "/deleted");
    net.endpoints.set(url, answers(200));
    const hook = await register(plant.co.id, url, "MachineStopClassificationDeleted");
    await plant.send(day([[10, 40]]));
    const [stop] = await plant.stops();
    await operatorJson("PUT", `/stops/${stop?.id}/classification`, {
      generalCause: { name: "Jam" },
      description: "feeder",
    });
    // Pieces arrive late for 10:30 to 10:31: the stop splits, 20 and 9 minutes.
    await plant.send(series(D0 + 30 * MIN, D0 + 31 * MIN, S, () => 1));
    const split = await plant.stops();
    expect(split.map(span)).toEqual([
      [iso(D0 + 10 * MIN), iso(D0 + 30 * MIN)],
      [iso(D0 + 31 * MIN), iso(D0 + 40 * MIN)],
    ]);
    expect(split[0]?.id).toBe(stop?.id);
    const rows = await plant.report();
    expect(rows.map((r) => r.classification.generalCause.name)).toEqual(["Jam", null]);
    // Then pieces for the whole of it: the classified stop goes, with its classification.
    await plant.send(series(D0 + 10 * MIN, D0 + 30 * MIN, S, () => 1));
    expect((await plant.stops()).map(span)).toEqual([[iso(D0 + 31 * MIN), iso(D0 + 40 * MIN)]]);
    const deliveries = await deliveriesOf(hook.id);
    expect(deliveries.map((d) => d.eventType)).toEqual(["MachineStopClassificationDeleted"]);
  });
});
