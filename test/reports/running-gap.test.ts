/**
 * A running shift instance whose last covered minute is before now: the uncovered
 * time up to now is not early stop yet (docs/metrics.md: early stop counts only once
 * the instance has ended), nor no data.
 */
import { describe, expect, it } from "vitest";
import { computeShiftIndicators } from "../../src/reports/shift-time";
import { insertProductionLogs } from "../fixtures/production-logs";
import { api, createCompany, createMachines, operatorJson } from "../harness";

const MIN = 60_000;

describe("a running instance with a gap before now", () => {
  it("counts no early stop and no no-data for the gap (pure function)", () => {
    const start = Date.UTC(2026, 2, 2, 6, 0);
    const window = { start, end: start + 480 * MIN };
    const logs = [{ start, end: start + 100 * MIN }];
    const running = computeShiftIndicators(window, [], logs, start + 200 * MIN);
    expect(running).toMatchObject({
      earlyStopTime: 0,
      noDataTime: 0,
      lateStartTime: 0,
      unavailableTime: 0,
    });
    // Once the instance has ended, the same uncovered tail is early stop.
    const ended = computeShiftIndicators(window, [], logs, window.end + MIN);
    expect(ended.earlyStopTime).toBe(380);
  });

  it("shows no early-stop time in the metrics report while the instance runs", async () => {
    // A time zone where it is about noon now, so that today's 24-hour instance has run
    // for about 12 hours whatever the time of the test run (Etc/GMT+N is UTC-N).
    const offset = 12 - new Date().getUTCHours();
    const timezone = offset === 0 ? "UTC" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`;
    const co = await createCompany({ timezone });
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "All day", startTime: "00:00", endTime: "00:00" },
    ]);
    const [m] = await createMachines(co.id, [{ name: "Gap" }]);
    if (!m) throw new Error("no machine");
    const all = await api(co.key, "/v1/reports/metrics", {
      method: "POST",
      json: { machines: { include: [m.id] } },
    });
    const rows = ((await all.json()) as { metrics: { shift: { startTime: string } }[] }).metrics;
    const now = Date.now();
    const runningStart = rows
      .map((r) => Date.parse(r.shift.startTime))
      .find((t) => t <= now && now < t + 24 * 60 * MIN);
    if (runningStart === undefined) throw new Error("no running instance");
    expect(now - runningStart).toBeGreaterThan(10 * 60 * MIN);

    // Production from the start until 3 hours ago: a 3-hour gap before now. (The public
    // create refuses logs in a running shift; the realtime path would keep it open.)
    await insertProductionLogs(co.id, [
      {
        machineId: m.id,
        start: runningStart,
        end: now - 180 * MIN,
        type: "total",
        count: 100,
        nominalSpeed: 1,
      },
    ]);

    const res = await api(co.key, "/v1/reports/metrics", {
      method: "POST",
      json: {
        machines: { include: [m.id] },
        startDate: { equal: new Date(runningStart).toISOString() },
      },
    });
    const [row] = ((await res.json()) as { metrics: { shiftIndicators: Record<string, number> }[] })
      .metrics;
    expect(row?.shiftIndicators).toMatchObject({
      earlyStopTime: 0,
      noDataTime: 0,
      lateStartTime: 0,
    });
  });
});
