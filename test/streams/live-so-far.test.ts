/**
 * A running shift's figures "so far" (docs/metrics.md), replayed end to end: a machine at
 * exactly its nominal speed for the first hour of an 8-hour shift shows OEE 1.0 in its live
 * `oee` event and in the active row of the metrics report, not 1/8.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { plant, postSku } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest, operatorJson } from "../harness";

const MIN = 60_000;
const open: SseSubscriber[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("a perfect machine one hour into an 8-hour shift", () => {
  it("shows availability, effectiveness, quality and OEE 1.0 live and in the report's active row", async () => {
    const p = await plant(1, { shifts: [] });
    const m = p.machines[0];
    const count = p.countSignals[0];
    if (!m || !count) throw new Error("no machine");
    // An 8-hour shift that started 60 minutes ago (shift times are whole minutes).
    const start = Math.floor(Date.now() / MIN) * MIN - 60 * MIN;
    const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);
    await operatorJson("POST", `/companies/${p.co.id}/shifts`, [
      { name: "Morning", startTime: hhmm(start), endTime: hhmm(start + 480 * MIN) },
    ]);
    // Berry juice runs at 30 a minute: one pulse every 2 s since the shift began.
    const now = Date.now();
    const pulses: [number, number][] = [];
    for (let t = start; t < now; t += 2_000) pulses.push([t, 1]);
    await ingest(count, pulses);
    const sub = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
    open.push(sub);
    const write = await postSku(p.co, m.id, {
      sku: p.b.sku,
      start: new Date(start).toISOString(),
    });
    expect(write.status, await write.text()).toBe(204);

    // The first figures that show the write's log (a tick may have run on the samples alone).
    const [live] = await sub.waitFor(
      (e) => e.type === "oee" && e.data.final === false && e.data.availability === 1,
    );
    const figures = live?.data ?? {};
    expect(figures.availability).toBe(1);
    expect(figures.quality).toBe(1);
    expect(figures.effectiveness).toBeCloseTo(1, 2);
    expect(figures.oee).toBeCloseTo(1, 2);

    const res = await api(p.co.key, "/v1/reports/metrics", {
      method: "POST",
      json: { machines: { include: [m.id] } },
    });
    expect(res.status).toBe(200);
    const rows = ((await res.json()) as Api["MetricsReportPage"]).metrics;
    const active = rows.find((r) => r.shift.isActive);
    if (!active) throw new Error("no active row");
    // The elapsed planned time, not the 480 minutes of the shift.
    expect(active.shiftIndicators.availableTime).toBeGreaterThanOrEqual(60);
    expect(active.shiftIndicators.availableTime).toBeLessThan(62);
    for (const field of ["availability", "effectiveness", "quality", "oee"] as const) {
      expect(active.productionMetrics[field], field).toBeCloseTo(1, 2);
      expect(active.productionMetrics[field], field).toBeCloseTo(figures[field] as number, 2);
    }
  });
});
