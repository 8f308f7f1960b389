/**
 * Realtime endpoints through HTTP: the SKU and operator writes, the GET, the
 * live production logs they make visible at once in every view (GET, the
 * production-log filters and GET by id, the metrics report), and the
 * 404/409/422 answers.
 */

import { describe, expect, it, vi } from "vitest";
import type { Api } from "../fixtures/api-types";
import {
  aroundNow,
  getState,
  HOUR,
  machineLogs,
  plant,
  postOperator,
  postSku,
  recentStartInShift,
} from "../fixtures/plant";
import { describeSecurity } from "../fixtures/security";
import { api, createCompany, createMachines, ingest } from "../harness";

const MIN = 60_000;
const DAY = 86_400_000;

type ValidationBody = Api["ValidationError"];

type ProductionLog = Api["ProductionLog"];

type MetricsRow = Api["MetricsReportRow"];

async function metricsRow(
  co: { key: string },
  machineId: number,
  instanceId: number,
): Promise<MetricsRow | undefined> {
  const res = await api(co.key, "/v1/reports/metrics", {
    method: "POST",
    json: { machines: { include: [machineId] }, limit: 100 },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { metrics: MetricsRow[] };
  return body.metrics.find((r) => r.shift.id === instanceId);
}

describe("POST /v1/realtime/{machine_id}/sku", () => {
  it("takes effect at once: GET, production logs (filters and by id) and the metrics report", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const before = await getState(p.co, m.id);
    expect(before.current).toBeNull();
    expect(before.revision).toBe(0);
    const shiftStart = Date.parse(before.shift.start);
    const now = Date.now();
    // 30 minutes into the shift (or the start, early in the UTC day), pulses every minute.
    const segmentStart = Math.max(shiftStart, now - 30 * MIN);
    const samples: [number, number][] = [];
    for (let t = segmentStart; t < now - 1000; t += MIN) samples.push([t, 10]);
    samples.push([segmentStart - 1, 999]); // before the segment: not counted
    await ingest(p.countSignals[0] ?? "", samples);

    const res = await postSku(p.co, m.id, {
      sku: "Apple juice",
      simpleWorkOrderName: "WO-1",
      quantity: 500,
      start: new Date(segmentStart).toISOString(),
      custom: { lot: "L-7", color: 3 },
    });
    expect(res.status, await res.clone().text()).toBe(204);

    const state = await getState(p.co, m.id);
    expect(state.machine).toEqual({ id: m.id, name: m.name });
    expect(state.revision).toBe(1);
    expect(state.current).toMatchObject({
      sku: { id: p.a.id, sku: "A-100", name: "Apple juice" },
      simpleWorkOrder: { name: "WO-1" },
      quantity: 500,
      custom: { lot: "L-7", color: 3 },
      start: new Date(segmentStart).toISOString(),
      end: null,
      nominalSpeed: 15,
      countingFactor: 12,
    });
    const pulses = samples.length - 1;
    expect(state.production.sensorCount).toBe(pulses * 10);
    expect(state.production.count).toBe(pulses * 10 * 12);

    const logs = await machineLogs(p.co, m.id);
    expect(logs).toHaveLength(1);
    const [log] = logs as [ProductionLog];
    expect(log).toMatchObject({
      id: state.current?.productionLogId,
      type: "total",
      live: true,
      isAutomated: true,
      sensorCount: pulses * 10,
      count: pulses * 10 * 12,
      nominalSpeed: 15,
      countingFactor: 12,
      start: new Date(segmentStart).toISOString(),
      machineId: m.id,
      shift: { id: state.shift.id },
      sku: { id: p.a.id },
      simpleWorkOrder: { name: "WO-1" },
    });
    expect(Date.parse(log.end)).toBeGreaterThan(segmentStart);
    expect(Date.parse(log.end)).toBeLessThanOrEqual(Date.now());
    const byId = await api(p.co.key, `/v1/production-logs/${log.id}`);
    expect(byId.status).toBe(200);
    expect(((await byId.json()) as ProductionLog).live).toBe(true);

    // The work order was created as POST /v1/simple-work-orders would.
    const wo = await api(p.co.key, "/v1/simple-work-orders/filters", {
      method: "POST",
      json: { names: { search: "WO-1" } },
    });
    const woBody = (await wo.json()) as { simpleWorkOrders: { id: string }[] };
    expect(woBody.simpleWorkOrders.map((w) => w.id)).toEqual([log.simpleWorkOrder?.id]);

    // The report counts the live log: ideal minutes = count / nominalSpeed.
    const row = await metricsRow(p.co, m.id, state.shift.id);
    expect(row).toBeDefined();
    const ideal = (pulses * 10 * 12) / 15;
    const runTime =
      (row?.shiftIndicators.availableTime ?? 0) -
      (row?.shiftIndicators.noDataTime ?? 0) -
      (row?.shiftIndicators.lateStartTime ?? 0);
    expect(row?.productionMetrics.effectiveness).toBeCloseTo(ideal / runTime, 3);
  });

  it("shows an ended segment's counts on every GET, and late samples once they arrive", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const start = await recentStartInShift(p.co, m.id, 100_000);
    const end = start + 60_000;
    const signal = p.countSignals[0] ?? "";
    await ingest(signal, [
      [start, 4],
      [start + 30_000, 5],
    ]);
    const res = await postSku(p.co, m.id, {
      skuId: p.a.id,
      start: new Date(start).toISOString(),
      end: new Date(end).toISOString(),
    });
    expect(res.status).toBe(204);
    const counts = async () =>
      (await getState(p.co, m.id)).production.segments.map((s) => [s.sensorCount, s.count]);
    expect(await counts()).toEqual([[9, 108]]);
    // Nothing changed since: the same counts again.
    expect(await counts()).toEqual([[9, 108]]);
    // A sample arriving late, inside the ended segment, is counted at the next GET.
    await ingest(signal, [[start + 45_000, 1]]);
    expect(await counts()).toEqual([[10, 120]]);
    expect((await machineLogs(p.co, m.id)).map((l) => l.sensorCount)).toEqual([10]);
  });

  it("splits the timeline into segments, one live log each; the same start replaces", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const t0 = await recentStartInShift(p.co, m.id, 20 * MIN);
    const at = (minutes: number) => new Date(t0 + minutes * MIN).toISOString();
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { sku: "B-200", start: at(10) })).status).toBe(204);
    // A late write for minute 5 fills in between; the same start again replaces it.
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(5) })).status).toBe(204);
    expect(
      (await postSku(p.co, m.id, { skuId: p.a.id, sku: "Apple juice", start: at(5), quantity: 7 }))
        .status,
    ).toBe(204);

    const state = await getState(p.co, m.id);
    expect(state.revision).toBe(4);
    expect(state.production.segments.map((s) => [s.sku.sku, s.start, s.end, s.quantity])).toEqual([
      ["A-100", at(0), at(5), null],
      ["A-100", at(5), at(10), 7],
      ["B-200", at(10), null, null],
    ]);
    expect(state.current?.sku.sku).toBe("B-200");
    const logs = await machineLogs(p.co, m.id);
    expect(logs.map((l) => [l.sku?.id, l.start, l.live])).toEqual([
      [p.a.id, at(0), true],
      [p.a.id, at(5), true],
      [p.b.id, at(10), true],
    ]);
    expect(logs[0]?.end).toBe(at(5));
    expect(logs[1]?.end).toBe(at(10));
  });

  it("starts a new segment for a repeat without start; a retry with its start or key changes nothing", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const t0 = await recentStartInShift(p.co, m.id, 20 * MIN);
    const scan = { sku: "A-100", simpleWorkOrderName: "WO-7", quantity: 50 };

    // A retry that carries the first write's start replaces it with the same values.
    const withStart = { ...scan, start: new Date(t0).toISOString() };
    expect((await postSku(p.co, m.id, withStart)).status).toBe(204);
    // A live log ends now: compare everything but the moving end (and its updatedAt).
    const still = ({ end, updatedAt, ...log }: ProductionLog & { updatedAt?: string }) => log;
    const first = (await machineLogs(p.co, m.id)).map(still);
    expect(first).toHaveLength(1);
    expect((await postSku(p.co, m.id, withStart)).status).toBe(204);
    const afterRetry = await getState(p.co, m.id);
    expect(afterRetry.production.segments).toHaveLength(1);
    expect((await machineLogs(p.co, m.id)).map(still)).toEqual(first);

    // A retry with the same Idempotency-Key is answered from the first response.
    const key = { "Idempotency-Key": crypto.randomUUID() };
    const keyed = await postSku(p.co, m.id, scan, key);
    expect(keyed.status).toBe(204);
    const replay = await postSku(p.co, m.id, scan, key);
    expect(replay.status).toBe(204);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const afterReplay = await getState(p.co, m.id);
    expect(afterReplay.revision).toBe(afterRetry.revision + 1);
    expect(afterReplay.production.segments).toHaveLength(2);

    // Without either, the same scan again is a new run of the product from its arrival.
    expect((await postSku(p.co, m.id, scan)).status).toBe(204);
    const state = await getState(p.co, m.id);
    expect(state.production.segments.map((s) => [s.sku.sku, s.quantity])).toEqual([
      ["A-100", 50],
      ["A-100", 50],
      ["A-100", 50],
    ]);
    expect((await machineLogs(p.co, m.id)).filter((l) => l.live)).toHaveLength(3);
  });

  it("answers 422 for a missing, unknown, ambiguous or contradictory SKU, and a pair without nominal speed", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const cases: [Record<string, unknown>, (string | number)[], string][] = [
      [{}, ["body"], "missing"],
      [{ skuId: null, sku: null }, ["body"], "missing"],
      [{ skuId: crypto.randomUUID() }, ["body", "skuId"], "not_found"],
      [{ sku: "Nope" }, ["body", "sku"], "not_found"],
      [{ skuId: p.a.id, sku: "Berry juice" }, ["body"], "value_error"],
      [{ sku: "C-300" }, ["body", "sku"], "missing_nominal_speed"],
      [
        { skuId: p.a.id, simpleWorkOrderId: crypto.randomUUID() },
        ["body", "simpleWorkOrderId"],
        "not_found",
      ],
    ];
    for (const [body, loc, type] of cases) {
      const res = await postSku(p.co, m.id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const detail = ((await res.json()) as ValidationBody).detail;
      expect(
        detail.map((d) => [d.loc, d.type]),
        JSON.stringify(body),
      ).toContainEqual([loc, type]);
    }
    const unknownField = await postSku(p.co, m.id, { skuId: p.a.id, colour: "red" });
    expect(unknownField.status).toBe(422);
    // Nothing was applied.
    expect((await getState(p.co, m.id)).revision).toBe(0);
    expect(await machineLogs(p.co, m.id)).toEqual([]);
  });

  it("resolves a burst of the same SKU once, and does not keep a refusal: a fix works at once", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    // C-300 has no nominal speed on this machine: every write of a concurrent burst is
    // refused alike (they may share one resolution).
    const refused = await Promise.all(
      Array.from({ length: 10 }, () => postSku(p.co, m.id, { sku: "C-300" })),
    );
    expect(refused.map((r) => r.status)).toEqual(refused.map(() => 422));
    const speed = await api(p.co.key, "/v1/nominal-speeds", {
      method: "POST",
      json: [{ machine: { id: m.id }, sku: { id: p.c.id }, nominalSpeed: 20 }],
    });
    expect(speed.status).toBe(200);
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postSku(p.co, m.id, {
          sku: "C-300",
          quantity: i,
          start: new Date(Date.now() - i * 1000).toISOString(),
        }),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(burst.map(() => 204));
    const state = await getState(p.co, m.id);
    expect(state.revision).toBe(10);
    expect(
      new Set(state.production.segments.map((s) => [s.sku.id, s.nominalSpeed].join())),
    ).toEqual(new Set([`${p.c.id},20`]));
  });

  it("answers 422 for a start outside the running instance, or an end not after start", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const { shift } = await getState(p.co, m.id);
    const before = new Date(Date.parse(shift.start) - MIN).toISOString();
    const after = shift.end;
    for (const start of [before, after]) {
      const res = await postSku(p.co, m.id, { skuId: p.a.id, start });
      expect(res.status).toBe(422);
      expect(((await res.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "start"]);
    }
    const start = new Date(Date.now() - MIN).toISOString();
    const res = await postSku(p.co, m.id, { skuId: p.a.id, start, end: start });
    expect(res.status).toBe(422);
    expect(((await res.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "end"]);
  });

  it("takes a start 10 minutes back just after midnight UTC: the tests' plant runs a shift around now", async () => {
    // The test's clock (the Worker's too: one isolate) at 00:05 UTC today, moving on.
    const justAfterMidnight = Math.floor(Date.now() / DAY) * DAY + 5 * MIN;
    vi.useFakeTimers({ toFake: ["Date"], now: justAfterMidnight, shouldAdvanceTime: true });
    try {
      // Half a day around now, to the hour of the zone's clock (test/fixtures/plant.ts).
      expect(aroundNow("UTC", justAfterMidnight)[0]?.startTime).toBe("12:00");
      expect(aroundNow("Asia/Kolkata", justAfterMidnight)[0]?.startTime).toBe("17:00");
      const p = await plant();
      const [m] = p.machines;
      if (!m) throw new Error("no machine");
      const start = new Date(Date.now() - 10 * MIN).toISOString();
      const res = await postSku(p.co, m.id, { skuId: p.a.id, start });
      expect(res.status, await res.clone().text()).toBe(204);
      const { shift, current } = await getState(p.co, m.id);
      expect(current?.start).toBe(start);
      expect(Date.now() - Date.parse(shift.start)).toBeGreaterThan(12 * HOUR);
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers 409 when the machine runs no shift, 404 for an unknown or foreign machine", async () => {
    const idle = await plant(1, { shifts: [] });
    const [m] = idle.machines;
    if (!m) throw new Error("no machine");
    const res = await postSku(idle.co, m.id, { skuId: idle.a.id });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ detail: `Machine ${m.id} is not running a shift now` });
    const get = await api(idle.co.key, `/v1/realtime/${m.id}`);
    expect(get.status).toBe(409);
    expect(await get.json()).toEqual({ detail: `Machine ${m.id} is not running a shift now` });
    const op = await postOperator(idle.co, m.id, {
      operatorId: idle.operators[0]?.id,
      start: new Date().toISOString(),
    });
    expect(op.status).toBe(409);

    const other = await plant();
    const [theirs] = other.machines;
    if (!theirs) throw new Error("no machine");
    for (const id of [theirs.id, 999_999_999]) {
      expect((await postSku(idle.co, id, { skuId: idle.a.id })).status).toBe(404);
      expect((await api(idle.co.key, `/v1/realtime/${id}`)).status).toBe(404);
      expect(
        (await postOperator(idle.co, id, { operatorId: 1, start: new Date().toISOString() }))
          .status,
      ).toBe(404);
    }
    // Their machine is untouched.
    expect((await getState(other.co, theirs.id)).revision).toBe(0);
  });
});

describe("POST /v1/realtime/{machine_id}/sku without a SKU", () => {
  it("changes the running segment's work order, quantity or custom values, keeping its SKU", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const start = await recentStartInShift(p.co, m.id, 10 * MIN);
    const first = await postSku(p.co, m.id, {
      skuId: p.a.id,
      simpleWorkOrderName: "WO-1",
      quantity: 5,
      start: new Date(start).toISOString(),
    });
    expect(first.status, await first.clone().text()).toBe(204);
    const before = await getState(p.co, m.id);
    const logId = before.current?.productionLogId ?? "";

    // A scanner reads a work-order barcode: only the work order changes.
    expect((await postSku(p.co, m.id, { simpleWorkOrderName: "WO-2" })).status).toBe(204);
    let state = await getState(p.co, m.id);
    expect(state.current).toMatchObject({
      productionLogId: logId,
      sku: { id: p.a.id },
      simpleWorkOrder: { name: "WO-2" },
      quantity: 5,
      start: new Date(start).toISOString(),
    });
    expect(state.production.segments).toHaveLength(1);
    const [log] = (await machineLogs(p.co, m.id)).filter((l) => l.live);
    expect(log).toMatchObject({
      id: logId,
      sku: { id: p.a.id },
      simpleWorkOrder: { name: "WO-2" },
    });

    expect((await postSku(p.co, m.id, { quantity: 9 })).status).toBe(204);
    expect((await postSku(p.co, m.id, { custom: { lot: "L-7" }, quantity: null })).status).toBe(
      204,
    );
    state = await getState(p.co, m.id);
    expect(state.current).toMatchObject({
      productionLogId: logId,
      sku: { id: p.a.id },
      simpleWorkOrder: { name: "WO-2" },
      quantity: 9,
      custom: { lot: "L-7" },
    });
    expect(state.revision).toBe(before.revision + 3);
    expect(state.production.segments).toHaveLength(1);
  });

  it("answers 422 naming the fields for an empty write, and when no SKU runs now", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const empty = await postSku(p.co, m.id, {});
    expect(empty.status).toBe(422);
    const [issue] = ((await empty.json()) as ValidationBody).detail;
    expect(issue).toMatchObject({ loc: ["body"], type: "missing" });
    for (const field of ["skuId", "sku", "simpleWorkOrderId", "simpleWorkOrderName", "quantity"]) {
      expect(issue?.msg).toContain(field);
    }
    const noSku = await postSku(p.co, m.id, { quantity: 3 });
    expect(noSku.status).toBe(422);
    expect(((await noSku.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "skuId"]);
    const startOnly = await postSku(p.co, m.id, { quantity: 3, start: new Date().toISOString() });
    expect(startOnly.status).toBe(422);
    expect(((await startOnly.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "start"]);
    expect((await getState(p.co, m.id)).revision).toBe(0);
  });

  it("answers 409 for a machine without a running shift before anything about the SKU", async () => {
    const idle = await plant(1, { shifts: [] });
    const [m] = idle.machines;
    if (!m) throw new Error("no machine");
    for (const body of [
      { sku: "Nope" },
      { skuId: crypto.randomUUID() },
      { sku: "C-300" }, // no nominal speed for the pair
      { skuId: idle.a.id, sku: "Berry juice" },
      { quantity: 4 },
      { simpleWorkOrderId: crypto.randomUUID() },
    ]) {
      const res = await postSku(idle.co, m.id, body);
      expect(res.status, JSON.stringify(body)).toBe(409);
      expect(await res.json()).toEqual({ detail: `Machine ${m.id} is not running a shift now` });
    }
    expect((await postSku(idle.co, 999_999_999, { sku: "Nope" })).status).toBe(404);
  });
});

describe("a refused realtime write", () => {
  it("creates no work order when it names a new one (422 outside the instance, 409 idle)", async () => {
    const countNamed = async (key: string, name: string) => {
      const res = await api(key, "/v1/simple-work-orders/filters", {
        method: "POST",
        json: { names: { search: name } },
      });
      return ((await res.json()) as { totalCount: number }).totalCount;
    };
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const { shift } = await getState(p.co, m.id);
    const before = new Date(Date.parse(shift.start) - MIN).toISOString();
    const outside = await postSku(p.co, m.id, {
      skuId: p.a.id,
      simpleWorkOrderName: "WO-refused-422",
      start: before,
    });
    expect(outside.status).toBe(422);
    expect(((await outside.json()) as ValidationBody).detail[0]?.loc).toEqual(["body", "start"]);
    expect(await countNamed(p.co.key, "WO-refused-422")).toBe(0);

    const idle = await plant(1, { shifts: [] });
    const [i] = idle.machines;
    if (!i) throw new Error("no machine");
    const res = await postSku(idle.co, i.id, {
      skuId: idle.a.id,
      simpleWorkOrderName: "WO-refused-409",
    });
    expect(res.status).toBe(409);
    expect(await countNamed(idle.co.key, "WO-refused-409")).toBe(0);

    // Accepted, the same name is created.
    const ok = await postSku(p.co, m.id, { skuId: p.a.id, simpleWorkOrderName: "WO-accepted" });
    expect(ok.status).toBe(204);
    expect(await countNamed(p.co.key, "WO-accepted")).toBe(1);
  });
});

describe("POST /v1/realtime/{machine_id}/operator", () => {
  it("assigns operators with their start; the live log takes the operator of its segment", async () => {
    const p = await plant();
    const [m] = p.machines;
    const [ada, grace] = p.operators;
    if (!m || !ada || !grace) throw new Error("no plant");
    const t0 = await recentStartInShift(p.co, m.id, 20 * MIN);
    const at = (minutes: number) => new Date(t0 + minutes * MIN).toISOString();
    expect((await postSku(p.co, m.id, { skuId: p.a.id, start: at(0) })).status).toBe(204);
    expect((await postOperator(p.co, m.id, { operatorId: ada.id, start: at(1) })).status).toBe(204);
    expect((await postSku(p.co, m.id, { skuId: p.b.id, start: at(10) })).status).toBe(204);
    expect((await postOperator(p.co, m.id, { operatorId: grace.id, start: at(8) })).status).toBe(
      204,
    );

    const state = await getState(p.co, m.id);
    expect(state.operators).toEqual([
      { id: ada.id, firstName: "Ada", lastName: "Lovelace", start: at(1) },
      { id: grace.id, firstName: "Grace", lastName: "Hopper", start: at(8) },
    ]);
    const logs = await machineLogs(p.co, m.id);
    // Segment 1 began before anyone: its first operator (Ada); segment 2: the latest before it (Grace).
    expect(logs.map((l) => l.operator?.id)).toEqual([ada.id, grace.id]);
  });

  it("needs both fields and an operator of the company", async () => {
    const p = await plant();
    const other = await createCompany();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const foreignOp = await api(other.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "Not", lastName: "Ours" }],
    });
    const [foreign] = (await foreignOp.json()) as { id: number }[];
    const now = new Date().toISOString();
    for (const body of [
      { operatorId: p.operators[0]?.id },
      { start: now },
      { operatorId: foreign?.id, start: now },
      { operatorId: "x", start: now },
    ]) {
      const res = await postOperator(p.co, m.id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    expect((await getState(p.co, m.id)).operators).toEqual([]);
  });
});

describeSecurity("Realtime", {
  routes: [
    { method: "POST", path: "/v1/realtime/{id}/sku", scope: "realtime.write", body: { sku: "x" } },
    {
      method: "POST",
      path: "/v1/realtime/{id}/operator",
      scope: "realtime.write",
      body: { operatorId: 1, start: "2026-01-01T00:00:00Z" },
    },
    { method: "GET", path: "/v1/realtime/{id}", scope: "realtime.read" },
  ],
  placeholderId: 1,
  createForeignId: async (owner) => {
    const [m] = await createMachines(owner.id, [{ name: "Foreign" }]);
    return m?.id ?? 0;
  },
});
