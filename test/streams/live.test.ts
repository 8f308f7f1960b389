/**
 * Stream events of stops, classifications, `count` samples, shifts and OEE, as a subscriber
 * sees them; and the company stream.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { inServiceSince } from "../fixtures/machine-history";
import { plant, postSku } from "../fixtures/plant";
import { insertProductionLogs } from "../fixtures/production-logs";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest, operator, operatorJson } from "../harness";

const DAY = 86_400_000;
const open: SseSubscriber[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function sse(key: string, path: string): Promise<SseSubscriber> {
  const res = await api(key, path);
  if (res.status !== 200) throw new Error(`${path} -> ${res.status}: ${await res.text()}`);
  const sub = new SseSubscriber(res);
  open.push(sub);
  return sub;
}

describe("stops and classifications", () => {
  it("arrive as stop.started, stop.ended, stop.classified, in order", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const start = Date.now() - 5 * 60_000;
    const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${m.id}/stops`, [
      { startTime: new Date(start).toISOString(), isProgrammed: false },
    ]);
    if (!stop) throw new Error("no stop");
    const end = new Date(Date.now() - 60_000).toISOString();
    expect((await operator("PATCH", `/stops/${stop.id}`, { endTime: end })).status).toBe(204);
    await operatorJson("PUT", `/stops/${stop.id}/classification`, {
      component: { name: "Feeder" },
      description: "jam",
    });
    expect((await operator("PATCH", `/stops/${stop.id}`, { isProgrammed: true })).status).toBe(204);
    expect((await operator("DELETE", `/stops/${stop.id}`)).status).toBe(204);
    const types = ["stop.started", "stop.ended", "stop.classified", "stop.updated", "stop.deleted"];
    const events = await sub.waitFor((e) => types.includes(e.type), 5);
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events[0]?.data).toEqual({
      stop: {
        id: stop.id,
        startTime: new Date(start).toISOString(),
        endTime: null,
        isProgrammed: false,
        origin: "operatorApi",
      },
    });
    expect(events[1]?.data).toMatchObject({ stop: { id: stop.id, endTime: end } });
    expect(events[2]?.data).toMatchObject({
      stopId: stop.id,
      classification: { component: { name: "Feeder" }, description: "jam" },
    });
    expect(events[3]?.data).toMatchObject({ stop: { isProgrammed: true } });
  });
});

describe("a classification deleted", () => {
  it("publishes stop.unclassified, and reset no longer shows the classification", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${m.id}/stops`, [
      {
        startTime: new Date(Date.now() - 5 * 60_000).toISOString(),
        endTime: new Date(Date.now() - 60_000).toISOString(),
        isProgrammed: false,
      },
    ]);
    if (!stop) throw new Error("no stop");
    await operatorJson("PUT", `/stops/${stop.id}/classification`, { description: "jam" });
    await sub.waitFor((e) => e.type === "stop.classified");
    const resetOf = async () => {
      const later = await sse(p.co.key, `/v1/realtime/${m.id}/events?since=999999999`);
      const [reset] = await later.waitFor((e) => e.type === "reset");
      if (!reset) throw new Error("no reset");
      return (reset.data.machines as Record<string, Record<string, unknown>>)[String(m.id)];
    };
    expect((await resetOf())?.classification).toMatchObject({ stopId: stop.id });

    expect((await operator("DELETE", `/stops/${stop.id}/classification`)).status).toBe(204);
    const [gone] = await sub.waitFor((e) => e.type === "stop.unclassified");
    expect(gone?.data).toEqual({ stopId: stop.id });
    expect((await resetOf())?.classification).toBeUndefined();
    // The stop itself is still shown.
    expect((await resetOf())?.stop).toMatchObject({ stop: { id: stop.id } });
  });
});

describe("production from the count signal", () => {
  it("new count samples arrive as production events, at most about one a second", async () => {
    const p = await plant();
    const m = p.machines[0];
    const signal = p.countSignals[0];
    if (!m || !signal) throw new Error("no machine");
    const shiftStart = Date.now() - 10 * 60_000;
    expect(
      (await postSku(p.co, m.id, { sku: "Berry juice", start: new Date(shiftStart).toISOString() }))
        .status,
    ).toBe(204);
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const began = Date.now();
    let total = 0;
    for (let i = 0; i < 8; i += 1) {
      await ingest(signal, [[Date.now() - 1000 - i, 5]]);
      total += 5;
    }
    const [last] = (
      await sub.waitFor((e) => e.type === "production" && e.data.sensorCount === total)
    ).slice(-1);
    const elapsed = (Date.now() - began) / 1000;
    const productions = sub.of("production");
    expect(last?.data).toMatchObject({ sensorCount: total });
    expect(productions.length).toBeLessThanOrEqual(Math.ceil(elapsed) + 1);
    expect(productions.length).toBeLessThan(8);
  });
});

describe("shifts and live OEE", () => {
  it("an ended shift gives its final OEE, equal to its metrics-report row, then shift.ended and shift.started", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    // In service since before yesterday: the report covers a machine from its creation on.
    await inServiceSince(p.co.id, [m.id], new Date(Date.now() - 3 * DAY).toISOString());
    // Yesterday's instance of the 24-hour shift, with production and a stop.
    const report = async () => {
      const res = await api(p.co.key, "/v1/reports/metrics", {
        method: "POST",
        json: {
          machines: { include: [m.id] },
          startDate: { after: new Date(Date.now() - 2 * DAY).toISOString() },
        },
      });
      expect(res.status).toBe(200);
      return (
        (await res.json()) as {
          metrics: {
            shift: { id: number; startTime: string; endTime: string; name: string };
            productionMetrics: Record<string, number>;
          }[];
        }
      ).metrics;
    };
    const rows = await report();
    const yesterday = rows.find((r) => Date.parse(r.shift.endTime) <= Date.now());
    if (!yesterday) throw new Error("no ended instance");
    const yStart = Date.parse(yesterday.shift.startTime);
    await insertProductionLogs(p.co.id, [
      {
        machineId: m.id,
        start: yStart + 3_600_000,
        end: yStart + 7_200_000,
        count: 700,
        nominalSpeed: 15,
      },
    ]);
    await operatorJson("POST", `/machines/${m.id}/stops`, [
      {
        startTime: new Date(yStart + 7_200_000).toISOString(),
        endTime: new Date(yStart + 7_800_000).toISOString(),
        isProgrammed: false,
      },
    ]);
    const expected = (await report()).find((r) => r.shift.id === yesterday.shift.id);

    // The stream last computed yesterday's shift (as a stream that was live through it).
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const stub = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(`m:${p.co.id}:${m.id}`));
    await runInDurableObject(stub, (_instance, state) => {
      const shift = {
        id: yesterday.shift.id,
        name: yesterday.shift.name,
        start: yesterday.shift.startTime,
        end: yesterday.shift.endTime,
        isConsidered: true,
        startMs: yStart,
        endMs: Date.parse(yesterday.shift.endTime),
      };
      state.storage.sql.exec(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('figures', ?), ('name', ?)",
        JSON.stringify({ shift, production: null, oee: null }),
        `m:${p.co.id}:${m.id}`,
      );
    });
    await stub.nudge(`m:${p.co.id}:${m.id}`);
    const events = await sub.waitFor((e) => e.type === "shift.started");
    expect(events).toHaveLength(1);
    const types = sub.events.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual(["oee", "shift.ended", "shift.started"]);
    const final = sub.events[0]?.data;
    expect(final).toMatchObject({ shiftId: yesterday.shift.id, final: true });
    const metrics = expected?.productionMetrics ?? {};
    for (const field of [
      "availability",
      "netAvailability",
      "effectiveness",
      "quality",
      "oee",
      "netOee",
    ]) {
      expect(final?.[field], field).toBe(metrics[field]);
    }
    expect(metrics.effectiveness).toBeGreaterThan(0);
    expect(sub.events[1]?.data).toMatchObject({ shift: { id: yesterday.shift.id } });
    // Then the running shift's own figures.
    const live = await sub.waitFor((e) => e.type === "oee" && e.data.final === false);
    expect(live[0]?.data.shiftId).not.toBe(yesterday.shift.id);
  });
});

describe("GET /v1/realtime/events (every machine of the company)", () => {
  it("gives every machine's events with company-wide ids, and resumes by them", async () => {
    const p = await plant(2);
    const [m1, m2] = p.machines;
    if (!m1 || !m2) throw new Error("no machines");
    const sub = await sse(p.co.key, "/v1/realtime/events");
    expect((await postSku(p.co, m1.id, { sku: "Apple juice" })).status).toBe(204);
    expect((await postSku(p.co, m2.id, { sku: "Berry juice" })).status).toBe(204);
    expect((await postSku(p.co, m1.id, { quantity: 5 })).status).toBe(204);
    const writes = await sub.waitFor((e) => e.type.startsWith("segment."), 3);
    // Each machine's events keep their order; two machines' events reach the company
    // stream each through its own machine stream, so they may interleave either way
    // (docs/stream-events.md, Design).
    const ofMachine = (id: number) => writes.filter((e) => e.machineId === id).map((e) => e.type);
    expect(ofMachine(m1.id)).toEqual(["segment.changed", "segment.updated"]);
    expect(ofMachine(m2.id)).toEqual(["segment.changed"]);
    expect(writes.every((e) => typeof e.machineEventId === "number")).toBe(true);
    for (let i = 1; i < sub.events.length; i += 1) {
      expect(sub.events[i]?.id).toBeGreaterThan(sub.events[i - 1]?.id ?? 0);
    }
    const from = writes[0]?.id ?? 0;
    const resumed = await sse(p.co.key, `/v1/realtime/events?since=${from}`);
    const missed = sub.events.filter((e) => e.id > from);
    expect((await resumed.waitFor(() => true, missed.length)).slice(0, missed.length)).toEqual(
      missed,
    );
  });
});
