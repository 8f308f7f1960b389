/**
 * The plant board's stops (src/board/browser/board-stops.ts): every stop waiting for its
 * reason is listed (not "and 12 more"), a reason stays shown once its stop has ended, and a
 * lagging report does not undo what an event or a reason given from the board said.
 */
import { describe, expect, it } from "vitest";
import { BoardStops } from "../../src/board/browser/board-stops";
import type { Api } from "../fixtures/api-types";

const MIN = 60_000;
const NOW = Date.UTC(2026, 2, 2, 14, 0);
const iso = (ms: number) => new Date(ms).toISOString();
const UNCLASSIFIED: Api["StopClassification"] = {
  id: null,
  createdAt: null,
  updatedAt: null,
  description: null,
  component: { id: null, name: null },
  specificCause: { id: null, name: null },
  generalCause: { id: null, name: null },
};

/** A stops report row of machine 7. */
function row(
  id: number,
  start: number,
  end: number | null,
  options: { reason?: string; programmed?: boolean } = {},
): Api["StopsReportRow"] {
  return {
    company: { id: 1, name: "Plant" },
    machine: { id: 7, name: "Press" },
    shift: null,
    stop: {
      id,
      startTime: iso(start),
      endTime: end === null ? null : iso(end),
      isProgrammed: options.programmed ?? false,
      isIncludedInAvailability: true,
      isIncludedInStops: true,
      isManual: false,
      origin: "detected",
      detectedDowntime: null,
      createdAt: iso(start),
      updatedAt: iso(start),
      durationInMinutes: ((end ?? NOW) - start) / MIN,
    },
    classification: options.reason
      ? {
          ...UNCLASSIFIED,
          id: id * 10,
          generalCause: { id: "00000000-0000-4000-8000-000000000001", name: options.reason },
        }
      : UNCLASSIFIED,
  };
}

describe("the board's stops", () => {
  it("lists every stop waiting for its reason, and the reasons of the stops that ended", () => {
    const stops = new BoardStops();
    const waiting = Array.from({ length: 13 }, (_, i) =>
      row(100 + i, NOW - (20 - i) * 60 * MIN, NOW - (20 - i) * 60 * MIN + 3 * MIN),
    );
    stops.fromReport(
      [
        ...waiting,
        row(1, NOW - 30 * MIN, NOW - 20 * MIN, { reason: "Jam" }),
        row(2, NOW - 50 * MIN, NOW - 45 * MIN, { programmed: true }),
        // Ended more than 24 hours ago: neither waiting nor shown.
        row(3, NOW - 26 * 60 * MIN, NOW - 25 * 60 * MIN),
        row(4, NOW - 5 * MIN, null),
      ],
      NOW,
    );
    const summary = stops.summary(7, NOW);
    expect(summary.open?.stop.id).toBe(4);
    expect(summary.waiting.map((e) => e.stop.id)).toEqual(waiting.map((r) => r.stop.id).reverse());
    expect(summary.given.map((e) => [e.stop.id, e.classification?.generalCause.name])).toEqual([
      [1, "Jam"],
    ]);
    expect(stops.recent(7, NOW).map((e) => e.stop.id)).not.toContain(3);
  });

  it("keeps a reason given from the board over a report read before it, and moves the stop out of the queue", () => {
    const stops = new BoardStops();
    const ended = row(5, NOW - 40 * MIN, NOW - 30 * MIN);
    stops.fromReport([ended], NOW - 60_000);
    expect(stops.summary(7, NOW).waiting).toHaveLength(1);
    stops.merge([row(5, NOW - 40 * MIN, NOW - 30 * MIN, { reason: "Material shortage" })], NOW);
    // A report whose read began 2 s before the reason was saved (a lagging replica).
    stops.fromReport([ended], NOW - 2_000);
    const { waiting, given } = stops.summary(7, NOW);
    expect(waiting).toEqual([]);
    expect(given[0]?.classification?.generalCause.name).toBe("Material shortage");
    // A report read well after the change is taken as it is.
    stops.fromReport([ended], NOW + 60_000);
    expect(stops.summary(7, NOW).waiting).toHaveLength(1);
  });

  it("applies the stream's stop events at once", () => {
    const stops = new BoardStops();
    stops.fromReport([row(6, NOW - 10 * MIN, null)], NOW - 60_000);
    const event = (type: Api["StreamEvent"]["type"], data: Api["StreamEvent"]["data"]) => ({
      id: 1,
      type,
      at: iso(NOW),
      machineId: 7,
      data,
    });
    const stop = {
      id: 6,
      startTime: iso(NOW - 10 * MIN),
      endTime: iso(NOW - MIN),
      isProgrammed: false,
      origin: "detected" as const,
    };
    expect(stops.applyEvent(event("stop.ended", { stop }), NOW)).toBe(true);
    expect(stops.summary(7, NOW).waiting.map((e) => e.stop.id)).toEqual([6]);
    const classification = {
      id: 60,
      description: "pallet late",
      generalCause: { id: "c", name: "Jam" },
    };
    expect(stops.applyEvent(event("stop.classified", { stopId: 6, classification }), NOW)).toBe(
      true,
    );
    expect(stops.summary(7, NOW).given[0]?.classification).toMatchObject({
      description: "pallet late",
      generalCause: { name: "Jam" },
      specificCause: { name: null },
    });
    expect(stops.applyEvent(event("stop.deleted", { stop }), NOW)).toBe(true);
    expect(stops.entries(7)).toEqual([]);
  });
});
