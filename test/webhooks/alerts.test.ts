/**
 * The alerts (docs/webhooks.md, "Alerts"): the webhook events of a machine's stops, from a stop
 * the machine's count signal shows, through the real Queue, to signed deliveries. The stream
 * object's alarm is run by the test once the test's clock has passed a threshold (no wait).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { verify } from "@octokit/webhooks-methods";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { companyScope } from "../../src/db/company-scope";
import { stopRowsByIds } from "../../src/reports/stops-report";
import { machineStream } from "../../src/streams/names";
import { streamObject } from "../../src/streams/publish";
import { alertStatements } from "../../src/webhooks/stop-alert-events";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { observedStore } from "../fixtures/observed-signal-store";
import {
  deliveriesOf,
  runDeliverer,
  settleDeliverers,
  type Webhook,
} from "../fixtures/webhook-harness";
import {
  api,
  createKey,
  createMachines,
  createSignal,
  ingest,
  operator,
  operatorJson,
} from "../harness";

const S = 1_000;
const MIN = 60_000;

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
  // The real Queue: every delivery goes through it, as deployed.
  net.sendBatch.mockRestore();
});

afterEach(async () => {
  await settleDeliverers();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

interface Envelope {
  eventId: string;
  eventType: string;
  event: {
    stop: { id: number; startTime: string; endTime: string | null; durationInMinutes: number };
    machine: { id: number; name: string };
    shift: { name: string } | null;
    classification: { id: number | null; generalCause: { name: string | null } };
    thresholdMinutes?: number;
  };
}

type Registration = Pick<Webhook, "eventType"> & Partial<Pick<Webhook, "thresholdsMinutes">>;

const REGISTRATIONS = {
  started: { eventType: "MachineStopStarted" },
  ended: { eventType: "MachineStopEnded" },
  longer: { eventType: "MachineStopLongerThan", thresholdsMinutes: [60, 15] },
  reason: { eventType: "MachineStopReasonMissing", thresholdsMinutes: [15, 60] },
} satisfies Record<string, Registration>;

type Hooks = Record<keyof typeof REGISTRATIONS, Webhook & { url: string }>;

/**
 * A company in UTC (with its webhook secret and a key), one machine with a `count` signal on a
 * 24-hour shift, and one registration of each alert type to its own receiver.
 */
async function plant(shard?: string) {
  const [created] = await operatorJson<
    { id: number; name: string; shard: string; webhookSecret: string }[]
  >("POST", "/companies", [
    { name: `Alerts ${crypto.randomUUID()}`, timezone: "UTC", ...(shard ? { shard } : {}) },
  ]);
  if (!created) throw new Error("no company");
  const key = await createKey(created.id, ALL_SCOPES);
  const [machine] = await createMachines(created.id, [{ name: "Press 1" }]);
  if (!machine) throw new Error("no machine");
  await operatorJson("POST", `/companies/${created.id}/shifts`, [
    { name: "Day", startTime: "00:00", endTime: "00:00" },
  ]);
  const count = await createSignal(machine.id, { name: "count", kind: "counter" });
  await operatorJson("POST", `/companies/${created.id}/stop-causes`, [
    { kind: "generalCause", name: "Material shortage" },
  ]);
  const hooks = {} as Hooks;
  for (const [name, registration] of Object.entries(REGISTRATIONS)) {
    const { url } = publicEndpoint(net, `/${name}`);
    net.endpoints.set(url, answers(204));
    const [hook] = await operatorJson<Webhook[]>("POST", `/companies/${created.id}/webhooks`, [
      { name, url, ...registration },
    ]);
    if (!hook) throw new Error("no registration");
    hooks[name as keyof Hooks] = { ...hook, url };
  }
  return {
    companyId: created.id,
    shard: created.shard,
    secret: created.webhookSecret,
    key,
    machineId: machine.id,
    hooks,
    /** Ingests `[ms, value]` count samples and waits for the detector. */
    async send(samples: [number, number][]) {
      await ingest(count, samples);
      await observedStore(env, created.id, machine.id).settleDetection();
    },
    /** Runs the machine stream object's alarm (the platform's, at the test's clock). */
    async alarm() {
      await runDurableObjectAlarm(streamObject(env, machineStream(created.id, machine.id)));
    },
  };
}

type Plant = Awaited<ReturnType<typeof plant>>;

/** `[t, v]` samples every second from `from` (inclusive) to `to` (exclusive). */
function series(from: number, to: number, value: (t: number) => number): [number, number][] {
  const out: [number, number][] = [];
  for (let t = from; t < to; t += S) out.push([t, value(t)]);
  return out;
}

/** The deliveries of a registration, oldest first, once `count` are there (10 s at most). */
async function deliveries(hook: Webhook, count: number) {
  await vi.waitUntil(async () => (await deliveriesOf(hook.id)).length >= count, {
    timeout: 10_000,
    interval: 50,
  });
  return (await deliveriesOf(hook.id)).reverse();
}

/** The bodies a receiver got, verified against the company's secret, oldest first. */
async function received(p: Plant, hook: Hooks[keyof Hooks]): Promise<Envelope[]> {
  const out: Envelope[] = [];
  for (const request of net.at(hook.url)) {
    const signature = request.headers.get("x-service-signature") ?? "";
    expect(await verify(p.secret, request.body, signature)).toBe(true);
    out.push(JSON.parse(request.body) as Envelope);
  }
  return out;
}

/** Moves the test's clock (and the Worker's: the same isolate) to `at`, running on from there. */
function clockAt(at: number): void {
  vi.useFakeTimers({ toFake: ["Date"], now: at, shouldAdvanceTime: true });
}

describe("alerts of a machine's stops", () => {
  it("a detected stop: started, down longer than 15 and 60 min once each, the reason stops the reason alerts, ended with its duration and reason", async () => {
    const p = await plant();
    const now = Math.floor(Date.now() / S) * S;
    const downFrom = now - 8 * MIN;
    // Pieces every second for 20 minutes, then none for the last 8: an open stop.
    await p.send(series(now - 28 * MIN, now, (t) => (t < downFrom ? 1 : 0)));

    // "Stop started" is queued and reaches its receiver on the real clock (the deliverer's
    // alarm fires by itself), signed with the company's secret.
    const [started] = await deliveries(p.hooks.started, 1);
    expect(started?.eventType).toBe("MachineStopStarted");
    await vi.waitUntil(() => net.at(p.hooks.started.url).length > 0, { timeout: 10_000 });
    const [startedBody] = await received(p, p.hooks.started);
    expect(startedBody?.eventId).toBe(started?.eventId);
    expect(startedBody?.event).toMatchObject({
      stop: { startTime: new Date(downFrom).toISOString(), endTime: null },
      machine: { id: p.machineId, name: "Press 1" },
      shift: { name: "Day" },
      classification: { id: null },
    });
    const stopId = startedBody?.event.stop.id;
    expect(await deliveriesOf(p.hooks.longer.id)).toEqual([]);
    expect(await deliveriesOf(p.hooks.reason.id)).toEqual([]);

    // 15 minutes after the stop's start: "down longer than 15 min" and "no reason after
    // 15 min", once each, however often the alarm runs.
    clockAt(downFrom + 15 * MIN + S);
    await p.alarm();
    const [longer15] = await deliveries(p.hooks.longer, 1);
    const [reason15] = await deliveries(p.hooks.reason, 1);
    expect([longer15?.eventType, reason15?.eventType]).toEqual([
      "MachineStopLongerThan",
      "MachineStopReasonMissing",
    ]);
    clockAt(downFrom + 16 * MIN);
    await p.alarm();
    await p.alarm();
    expect(await deliveriesOf(p.hooks.longer.id)).toHaveLength(1);
    expect(await deliveriesOf(p.hooks.reason.id)).toHaveLength(1);
    await runDeliverer(p.hooks.longer.id);
    const [longerBody] = await received(p, p.hooks.longer);
    expect(longerBody?.event).toMatchObject({
      thresholdMinutes: 15,
      stop: { id: stopId, endTime: null },
    });
    expect(longerBody?.event.stop.durationInMinutes).toBeGreaterThanOrEqual(15);

    // A reason given at the machine: no "no reason after 60 min"; "longer than 60" still.
    const given = await api(p.key, `/v1/realtime/${p.machineId}/stop-reason`, {
      method: "POST",
      json: { generalCause: { name: "Material shortage" } },
    });
    expect(given.status, await given.clone().text()).toBe(200);
    clockAt(downFrom + 60 * MIN + S);
    await p.alarm();
    await deliveries(p.hooks.longer, 2);
    await p.alarm();
    expect((await deliveriesOf(p.hooks.longer.id)).map((d) => d.eventType)).toEqual([
      "MachineStopLongerThan",
      "MachineStopLongerThan",
    ]);
    expect(await deliveriesOf(p.hooks.reason.id)).toHaveLength(1);

    // Pieces again: the stop ends, and "stop ended" carries its duration and its reason.
    const end = downFrom + 62 * MIN;
    clockAt(end + 2 * S);
    // (The machine kept reporting: no pieces from the last batch to `end`, then pieces.)
    await p.send(series(now, end + S, (t) => (t < end ? 0 : 3)));
    await deliveries(p.hooks.ended, 1);
    await runDeliverer(p.hooks.ended.id);
    const [endedBody] = await received(p, p.hooks.ended);
    expect(endedBody?.eventType).toBe("MachineStopEnded");
    expect(endedBody?.event.stop).toMatchObject({
      id: stopId,
      startTime: new Date(downFrom).toISOString(),
      endTime: new Date(end).toISOString(),
      durationInMinutes: 62,
    });
    expect(endedBody?.event.classification.generalCause.name).toBe("Material shortage");
    // Nothing else was sent: one "started", one "ended".
    expect(await deliveriesOf(p.hooks.started.id)).toHaveLength(1);
    expect(await deliveriesOf(p.hooks.ended.id)).toHaveLength(1);
  }, 60_000);

  it("reach only the registrations of the stop's company", async () => {
    const a = await plant();
    // On the same shard (one D1 database): only the company tells them apart.
    const b = await plant(a.shard);
    const now = Math.floor(Date.now() / S) * S;
    await a.send(series(now - 28 * MIN, now, (t) => (t < now - 8 * MIN ? 1 : 0)));
    await deliveries(a.hooks.started, 1);
    clockAt(now + 8 * MIN);
    await a.alarm();
    await deliveries(a.hooks.longer, 1);
    for (const hook of Object.values(b.hooks)) expect(await deliveriesOf(hook.id)).toEqual([]);
  }, 30_000);

  it("an alert written again (a run repeated after a restart) is one event with one delivery", async () => {
    const p = await plant();
    const now = Math.floor(Date.now() / S) * S;
    await p.send(series(now - 28 * MIN, now, (t) => (t < now - 8 * MIN ? 1 : 0)));
    const [started] = await deliveries(p.hooks.started, 1);
    const scope = await companyScope(env, p.companyId);
    const report = await api(p.key, "/v1/reports/stops", { method: "POST", json: {} });
    const { stops } = (await report.json()) as { stops: { stop: { id: number } }[] };
    const id = stops[0]?.stop.id ?? 0;
    const rows = await stopRowsByIds(scope, [id], Date.now());
    const row = rows.get(id);
    if (!row) throw new Error("no stop row");
    const again = await alertStatements(
      scope,
      { type: "MachineStopStarted", stopId: id, thresholdMinutes: null },
      row,
      Date.now(),
    );
    expect(again.eventId).toBe(started?.eventId);
    const [, written] = await scope.db.batch([again.event, again.deliveries]);
    expect(written).toEqual([]);
    expect(await deliveriesOf(p.hooks.started.id)).toHaveLength(1);
  }, 30_000);
});

describe("registering alert types", () => {
  it("takes thresholds for the threshold types only, bounded, and shows them ascending", async () => {
    const [co] = await operatorJson<{ id: number }[]>("POST", "/companies", [
      { name: `Alerts ${crypto.randomUUID()}`, timezone: "UTC" },
    ]);
    const { url } = publicEndpoint(net, "/hooks");
    const post = (item: Record<string, unknown>) =>
      operator("POST", `/companies/${co?.id}/webhooks`, [{ name: "n", url, ...item }]);
    const ok = await post({ eventType: "MachineStopLongerThan", thresholdsMinutes: [60, 15] });
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject([
      { eventType: "MachineStopLongerThan", thresholdsMinutes: [15, 60] },
    ]);
    const plain = await post({ eventType: "MachineStopStarted" });
    expect(await plain.json()).toMatchObject([{ thresholdsMinutes: null }]);
    const old = await post({ eventType: "MachineStopClassificationCreated" });
    expect(await old.json()).toMatchObject([{ thresholdsMinutes: null }]);

    const refused = async (item: Record<string, unknown>) => {
      const res = await post(item);
      expect(res.status).toBe(422);
      return ((await res.json()) as { detail: { loc: (string | number)[] }[] }).detail.map((d) =>
        d.loc.join("."),
      );
    };
    expect(await refused({ eventType: "MachineStopReasonMissing" })).toEqual([
      "body.0.thresholdsMinutes",
    ]);
    expect(await refused({ eventType: "MachineStopStarted", thresholdsMinutes: [15] })).toEqual([
      "body.0.thresholdsMinutes",
    ]);
    for (const thresholdsMinutes of [
      [],
      [0],
      [1441],
      [15, 15],
      [1.5],
      Array.from({ length: 11 }, (_, i) => i + 1),
    ]) {
      expect((await refused({ eventType: "MachineStopLongerThan", thresholdsMinutes }))[0]).toMatch(
        /^body\.0\.thresholdsMinutes/,
      );
    }
    expect(await refused({ eventType: "MachineStopRunning" })).toEqual(["body.0.eventType"]);
  });
});
