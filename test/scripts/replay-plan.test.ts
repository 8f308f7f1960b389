/**
 * The demo replay's plan: which recorded day plays on which real date, and the events
 * (samples, SKU changes, stops, shift starts) a window of real time sends.
 */
import { TZDate } from "@date-fns/tz";
import { describe, expect, it } from "vitest";
import { parseSmeRows } from "../../scripts/lib/demo-operations";
import { replayEvents, replayOffset, skusRunningAt } from "../../scripts/lib/replay-plan";

const ZONE = "Europe/Rome";
const local = (y: number, m: number, d: number, h: number, min = 0) =>
  new TZDate(y, m - 1, d, h, min, ZONE).getTime();

/** Rows of asset 0 on Monday 2022-09-05 (local time), every 5 minutes. */
function csv(
  rows: { at: number; items: number; status: number; alarm?: number; product: number }[],
) {
  const lines = rows.map(
    (r) =>
      `${new Date(r.at).toISOString().replace("T", " ").replace(".000Z", "+00:00")},0,${r.items},${r.status},0,${r.items + 1},0,${r.alarm ?? 0},${r.product}`,
  );
  return ["ts,asset,items,status,status_time,power_avg,cycle_time,alarm,product", ...lines].join(
    "\n",
  );
}

const recorded = parseSmeRows(
  csv([
    ...[0, 5, 10, 15, 20, 25].map((m) => ({
      at: local(2022, 9, 5, 10, m),
      items: 4,
      status: 2,
      product: 1,
    })),
    ...[30, 35, 40].map((m) => ({
      at: local(2022, 9, 5, 10, m),
      items: 0,
      status: 3,
      alarm: 1,
      product: 1,
    })),
    ...[45, 50, 55].map((m) => ({ at: local(2022, 9, 5, 10, m), items: 6, status: 2, product: 2 })),
  ]),
);

// Monday 2026-11-23 (CET, UTC+1) plays Monday 2022-09-05 (CEST, UTC+2).
const monday = (h: number, m = 0) => local(2026, 11, 23, h, m);

describe("the demo replay's plan", () => {
  it("plays the recorded day of the same weekday at the same local time", () => {
    const { offset } = replayOffset(monday(12));
    expect(local(2022, 9, 5, 10, 5) + offset).toBe(monday(10, 5));
    // Sunday plays Sunday 2022-09-11.
    const sunday = local(2026, 11, 29, 8);
    expect(local(2022, 9, 11, 8) + replayOffset(sunday).offset).toBe(sunday);
  });

  it("sends samples, a SKU write where the product changes, and a stop per alarm run", () => {
    const events = replayEvents(recorded, monday(9), monday(11));
    const samples = events.filter((e) => e.kind === "sample");
    expect(samples).toHaveLength(12);
    expect(samples[0]).toEqual({ kind: "sample", at: monday(10), asset: 0, power: 5, count: 4 });
    expect(events.filter((e) => e.kind !== "sample")).toEqual([
      { kind: "sku", at: monday(10), asset: 0, sku: "P01" },
      { kind: "stop-open", at: monday(10, 30), asset: 0 },
      { kind: "sku", at: monday(10, 45), asset: 0, sku: "P02" },
      { kind: "stop-close", at: monday(10, 45), asset: 0, openedAt: monday(10, 30) },
    ]);
  });

  it("sends each event once, however the time is cut into windows", () => {
    const whole = replayEvents(recorded, monday(5), monday(15));
    const cuts = [monday(5), monday(6), monday(10, 7), monday(10, 30), monday(10, 44), monday(15)];
    const pieces = cuts.slice(1).flatMap((to, i) => replayEvents(recorded, cuts[i] ?? 0, to));
    expect(pieces).toEqual(whole);
    // The 06:00 shift start is in the day too, with every machine's operators.
    expect(whole.filter((e) => e.kind === "shift-start")).toEqual([
      { kind: "shift-start", at: monday(6) },
      { kind: "shift-start", at: monday(14) },
    ]);
  });

  it("knows the SKU a machine was making at an instant, for a replay that starts mid-shift", () => {
    expect(skusRunningAt(recorded, monday(10, 20)).get(0)).toBe("P01");
    expect(skusRunningAt(recorded, monday(10, 50)).get(0)).toBe("P02");
    expect(skusRunningAt(recorded, monday(9)).get(0)).toBeUndefined();
  });
});
