/**
 * The live OEE of a running shift equals the metrics report's for that shift: the machine's
 * stream reads the shift's records with the report's reader (`loadPageSpans`) and computes
 * with the report's functions (`computeShiftIndicators`, `oeeFigures`), so at the same
 * instant the two give the same numbers, to the last bit, from what the stream keeps in
 * memory (realtime flushes applied, stops re-read) as from a fresh read of D1.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { loadNamedScope } from "../../src/db/company-scope";
import { syncPendingMachines } from "../../src/durable/realtime-barrier";
import { heldWritesOf } from "../../src/realtime/machine-stub";
import { metricsReport } from "../../src/reports/metrics-report";
import { OEE_FIGURES, type OeeFigure } from "../../src/reports/oee";
import { type LiveOee, type LiveState, liveOee } from "../../src/streams/live";
import { loadInstanceInputs } from "../../src/streams/live-inputs";
import { getState, plant, postOperator, postSku } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest, operatorJson } from "../harness";

const MIN = 60_000;
const HOUR = 60 * MIN;
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

const open: SseSubscriber[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("the live OEE and the metrics report of a running shift", () => {
  it("are equal at the same instant, from the stream's memory and from D1", async () => {
    const p = await plant(1, { shifts: [] });
    const m = p.machines[0];
    const count = p.countSignals[0];
    if (!m || !count) throw new Error("no machine");
    // A 24-hour shift that started about 3 hours ago, whatever the time of day.
    const startTime = clock(Date.now() - 3 * HOUR);
    await operatorJson("POST", `/companies/${p.co.id}/shifts`, [
      { name: "All day", startTime, endTime: startTime },
    ]);
    const sub = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
    open.push(sub);

    // Two hours ago B, an hour ago A, with pulses; a breakdown (classified later, so the
    // stream re-reads its stops), a planned break, and a stop still open.
    const at = (ago: number) => new Date(Date.now() - ago).toISOString();
    expect(
      (await postOperator(p.co, m.id, { operatorId: p.operators[0]?.id, start: at(2 * HOUR) }))
        .status,
    ).toBe(204);
    await ingest(count, [
      [Date.now() - 100 * MIN, 900],
      [Date.now() - 50 * MIN, 70],
      [Date.now() - 10 * MIN, 55],
    ]);
    expect((await postSku(p.co, m.id, { sku: p.b.sku, start: at(2 * HOUR) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { sku: p.a.sku, start: at(HOUR) })).status).toBe(204);
    await operatorJson("POST", `/machines/${m.id}/stops`, [
      { startTime: at(90 * MIN), endTime: at(80 * MIN), isProgrammed: false },
      { startTime: at(40 * MIN), endTime: at(30 * MIN), isProgrammed: true },
      { startTime: at(5 * MIN), isProgrammed: false },
    ]);
    // The realtime GET refreshes every log from the samples, and its flush tells the stream.
    const { shift } = await getState(p.co, m.id);
    const window = {
      instanceId: shift.id,
      start: Date.parse(shift.start),
      end: Date.parse(shift.end),
    };

    const scope = await loadNamedScope(env, p.co.id);
    if (!scope) throw new Error("no company");
    const reportAt = async (now: number): Promise<LiveOee> => {
      const page = await metricsReport(
        scope,
        { machines: { include: [m.id] }, startDate: { equal: window.start } },
        { page: 1, limit: 10 },
        now,
        (ids) => syncPendingMachines(heldWritesOf(env), scope, ids),
      );
      const row = page.rows.find((r) => r.shiftIndicators.indicatorId === shift.id);
      if (!row) throw new Error("no report row");
      const figures = { aboveNominalSpeed: row.productionMetrics.aboveNominalSpeed } as LiveOee;
      for (const f of Object.keys(OEE_FIGURES) as OeeFigure[])
        figures[f] = row.productionMetrics[f];
      return figures;
    };

    // From a fresh read of D1.
    const now = Date.now();
    const fresh = liveOee(
      await loadInstanceInputs(scope, { companyId: p.co.id, machineId: m.id }, window, now),
      now,
    );
    const report = await reportAt(now);
    expect(fresh).toEqual(report);
    expect(report.effectiveness).toBeGreaterThan(0);
    expect(report.quality).toBe(1);

    // From the stream object's memory, once it has applied the flushes and read the stops.
    const stub = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(`m:${p.co.id}:${m.id}`));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { kept, at: t } = await runInDurableObject(stub, (instance) => {
        const live = (instance as unknown as { live: LiveState }).live;
        return { kept: live.inputs, at: Date.now() };
      });
      if (kept && kept.instanceId === shift.id && kept.stops.length === 3) {
        const fromMemory = liveOee(kept, t);
        const expected = await reportAt(t);
        if (JSON.stringify(fromMemory) === JSON.stringify(expected) || Date.now() > deadline) {
          expect(fromMemory).toEqual(expected);
          break;
        }
      } else if (Date.now() > deadline) {
        throw new Error("the stream never held the shift's records");
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  });
});
