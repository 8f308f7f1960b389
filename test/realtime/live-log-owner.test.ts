/**
 * The live logs of a running shift have one owner, the machine's realtime object
 * (docs/realtime.md, "Live logs belong to the machine"): the public production-log
 * endpoints may not delete one or change what it counts, and an operator PATCH sticks
 * because the object applies it to its own timeline. Checked against what a plant sees:
 * `GET /v1/production-logs/{id}`, `GET /v1/realtime/{id}`, the metrics report and the
 * machine's live stream.
 */

import { afterEach, describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { getState, type Plant, plant, postOperator, postSku } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest, operatorJson, type TestCompany } from "../harness";

const MIN = 60_000;
const HOUR = 60 * MIN;

const open: SseSubscriber[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

type ProductionLog = Api["ProductionLog"];

async function readLog(co: TestCompany, id: string): Promise<ProductionLog> {
  const res = await api(co.key, `/v1/production-logs/${id}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ProductionLog;
}

type MetricsRow = Api["MetricsReportRow"];

/** The metrics report's row of the machine's running instance. */
async function runningRow(co: TestCompany, machineId: number): Promise<MetricsRow> {
  const res = await api(co.key, "/v1/reports/metrics", {
    method: "POST",
    json: { machines: { include: [machineId] } },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const rows = ((await res.json()) as { metrics: MetricsRow[] }).metrics;
  const row = rows.find((r) => r.shift.isActive);
  if (!row) throw new Error("no running row");
  return row;
}

/** HH:MM in UTC of an instant. */
const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

/**
 * A plant whose machine runs a 24-hour shift that started about 3 hours ago (so that the
 * last hours are in it, whatever the time of day the test runs at).
 */
async function plantInShift(): Promise<Plant> {
  const startTime = clock(Date.now() - 3 * HOUR);
  return plant(1, { shifts: [{ name: "All day", startTime, endTime: startTime }] });
}

/**
 * A plant whose machine runs SKU B (30 a minute, factor 1) since 10 minutes ago, with 600
 * pulses counted 5 minutes ago: one live log of 600 items, and the stream subscribed.
 */
async function runningLine() {
  const p = await plantInShift();
  const m = p.machines[0];
  const count = p.countSignals[0];
  if (!m || !count) throw new Error("no machine");
  const sub = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
  open.push(sub);
  const start = new Date(Date.now() - 10 * MIN).toISOString();
  expect((await postOperator(p.co, m.id, { operatorId: p.operators[0]?.id, start })).status).toBe(
    204,
  );
  await ingest(count, [[Date.now() - 5 * MIN, 600]]);
  expect((await postSku(p.co, m.id, { sku: p.b.sku, start })).status).toBe(204);
  const state = await getState(p.co, m.id);
  const logId = state.current?.productionLogId ?? "";
  expect(state.production.count).toBe(600);
  return { p, m, sub, logId };
}

/** The live stream's last OEE of the running shift, once it counts the 600 items. */
async function streamOee(sub: SseSubscriber) {
  const events = await sub.waitFor(
    (e) => e.type === "oee" && e.data.final === false && Number(e.data.effectiveness) > 0,
  );
  return events[events.length - 1]?.data ?? {};
}

describe("a live log belongs to its machine's realtime object", () => {
  it("refuses to delete it: the log, GET /v1/realtime, the report and the stream keep its items", async () => {
    const { p, m, sub, logId } = await runningLine();
    const res = await api(p.co.key, `/v1/production-logs/${logId}`, { method: "DELETE" });
    expect(res.status, await res.clone().text()).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; type: string; msg: string }[] };
    expect(body.detail).toEqual([
      expect.objectContaining({ loc: ["path", "production_log_id"], type: "running_shift" }),
    ]);
    expect(body.detail[0]?.msg).toContain(`POST /v1/realtime/${m.id}/sku`);

    // A later write flushes the timeline again: nothing brings back or drops anything.
    expect((await postSku(p.co, m.id, { sku: p.a.sku })).status).toBe(204);
    expect((await readLog(p.co, logId)).count).toBe(600);
    const state = await getState(p.co, m.id);
    expect(state.production.segments.find((s) => s.productionLogId === logId)?.count).toBe(600);
    const row = await runningRow(p.co, m.id);
    const live = await streamOee(sub);
    expect(row.productionMetrics.quality).toBe(1);
    expect(live.quality).toBe(1);
    // The same items over (almost) the same elapsed time: the figures of the same shift.
    expect(Number(live.effectiveness)).toBeCloseTo(Number(row.productionMetrics.effectiveness), 1);
  });

  it("refuses a change of what it counts, naming each field; review fields stick", async () => {
    const { p, m, logId } = await runningLine();
    const res = await api(p.co.key, `/v1/production-logs/${logId}`, {
      method: "PATCH",
      json: { count: 5, end: new Date().toISOString(), isReviewed: true },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; type: string }[] };
    expect(body.detail.map((d) => [d.loc, d.type])).toEqual([
      [["body", "count"], "running_shift"],
      [["body", "end"], "running_shift"],
    ]);
    // Refused whole: not even the review flag was written.
    expect((await readLog(p.co, logId)).count).toBe(600);

    const reviewed = await api(p.co.key, `/v1/production-logs/${logId}`, {
      method: "PATCH",
      json: { isReviewed: true, workOrder: "WO-7" },
    });
    expect(reviewed.status, await reviewed.clone().text()).toBe(204);
    // GET /v1/realtime rewrites every log from the samples: the review fields are not its.
    await getState(p.co, m.id);
    expect(await readLog(p.co, logId)).toMatchObject({
      isReviewed: true,
      count: 600,
      workOrder: { name: "WO-7" },
    });
  });

  it("applies an operator PATCH to its timeline, so that later flushes keep it", async () => {
    const { p, m, logId } = await runningLine();
    const [ada, grace] = p.operators;
    if (!ada || !grace) throw new Error("no operators");
    expect((await readLog(p.co, logId)).operator?.id).toBe(ada.id);

    const patched = await api(p.co.key, `/v1/production-logs/${logId}`, {
      method: "PATCH",
      json: { operator: { firstName: "Grace", lastName: "Hopper" } },
    });
    expect(patched.status, await patched.clone().text()).toBe(204);
    expect((await readLog(p.co, logId)).operator?.id).toBe(grace.id);
    // Later writes and refreshes write the log again, with the operator the PATCH named.
    expect(
      (await postOperator(p.co, m.id, { operatorId: ada.id, start: new Date().toISOString() }))
        .status,
    ).toBe(204);
    await getState(p.co, m.id);
    expect((await postSku(p.co, m.id, { sku: p.a.sku })).status).toBe(204);
    await getState(p.co, m.id);
    expect((await readLog(p.co, logId)).operator?.id).toBe(grace.id);

    // null removes the operator, and that sticks too.
    const cleared = await api(p.co.key, `/v1/production-logs/${logId}`, {
      method: "PATCH",
      json: { operator: null },
    });
    expect(cleared.status).toBe(204);
    await getState(p.co, m.id);
    expect((await readLog(p.co, logId)).operator).toBeNull();
  });
});

describe("a log of the running shift that is not live", () => {
  it("can be deleted, and the stream drops it at once", async () => {
    const p: Plant = await plant(1, { shifts: [] });
    const m = p.machines[0];
    const count = p.countSignals[0];
    if (!m || !count) throw new Error("no machine");
    // Written before the shift existed: 1,800 items at 30 a minute, 60 ideal minutes.
    const created = await api(p.co.key, "/v1/production-logs", {
      method: "POST",
      json: [
        {
          machine: { id: m.id },
          sku: { id: p.b.id },
          count: 1800,
          start: new Date(Date.now() - 2 * HOUR).toISOString(),
          end: new Date(Date.now() - HOUR).toISOString(),
        },
      ],
    });
    expect(created.status, await created.clone().text()).toBe(200);
    const [log] = (await created.json()) as ProductionLog[];
    const startTime = clock(Date.now() - 3 * HOUR);
    await operatorJson("POST", `/companies/${p.co.id}/shifts`, [
      { name: "All day", startTime, endTime: startTime },
    ]);
    const sub = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
    open.push(sub);
    await ingest(count, [[Date.now() - 1_000, 1]]);
    await streamOee(sub);
    expect(Number((await runningRow(p.co, m.id)).productionMetrics.effectiveness)).toBeGreaterThan(
      0,
    );

    const res = await api(p.co.key, `/v1/production-logs/${log?.id}`, { method: "DELETE" });
    expect(res.status, await res.clone().text()).toBe(204);
    const row = await runningRow(p.co, m.id);
    expect(row.productionMetrics.effectiveness ?? 0).toBe(0);
    // The stream follows within a tick, not at its next read of D1 (15 minutes later).
    await sub.waitFor(
      (e) => e.type === "oee" && e.data.final === false && Number(e.data.effectiveness ?? 0) === 0,
    );
  });
});
