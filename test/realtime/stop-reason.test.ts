/**
 * People give the reason at the machine: `POST /v1/realtime/{machine_id}/stop-reason` and
 * `GET /v1/realtime/{machine_id}/stops` (docs/realtime.md, "Stop reasons"), over stops created
 * through the operator API, and the operator's catalog of causes.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import type { Api, OperatorSchemas } from "../fixtures/api-types";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { describeSecurity } from "../fixtures/security";
import { SseSubscriber } from "../fixtures/subscriber";
import { deliveriesOf, register, runMessages, settleDeliverers } from "../fixtures/webhook-harness";
import {
  api,
  createKey,
  createMachines,
  operator,
  operatorJson,
  type TestCompany,
} from "../harness";

const MIN = 60_000;
const HOUR = 60 * MIN;

let net: FakeNetwork;
const open: SseSubscriber[] = [];

beforeEach(() => {
  net = fakeNetwork();
});

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
  for (const sub of open.splice(0)) await sub.close();
});

type Row = Api["StopsReportRow"];

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A company with two machines, a 24-hour shift, a catalog of causes and one webhook
 * registration per classification event type (answering 200).
 */
async function plant() {
  const [created] = await operatorJson<{ id: number; name: string }[]>("POST", "/companies", [
    { name: `Reasons ${crypto.randomUUID()}`, timezone: "Europe/Rome" },
  ]);
  if (!created) throw new Error("no company");
  const co: TestCompany = {
    id: created.id,
    name: created.name,
    key: await createKey(created.id, ALL_SCOPES),
  };
  const [m1, m2] = await createMachines(co.id, [{ name: "Press 1" }, { name: "Press 2" }]);
  if (!m1 || !m2) throw new Error("no machines");
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Day", startTime: "00:00", endTime: "00:00" },
  ]);
  const causes = await operatorJson<{ id: string; kind: string; name: string }[]>(
    "POST",
    `/companies/${co.id}/stop-causes`,
    [
      { kind: "generalCause", name: "Material shortage" },
      { kind: "generalCause", name: "Jam" },
      { kind: "specificCause", name: "Empty hopper" },
      { kind: "component", name: "Feeder" },
    ],
  );
  const hooks: Record<"created" | "updated", { id: string; url: string }> = {
    created: { id: "", url: "" },
    updated: { id: "", url: "" },
  };
  for (const kind of ["created", "updated"] as const) {
    const { url } = publicEndpoint(net, `/${kind}`);
    net.endpoints.set(url, answers(200));
    const type = kind === "created" ? "Created" : "Updated";
    const hook = await register(co.id, url, `MachineStopClassification${type}`);
    hooks[kind] = { id: hook.id, url };
  }
  return { co, m1, m2, causes, hooks };
}

/** Creates stops on a machine through the operator API. */
async function stops(
  machineId: number,
  items: { start: number; end?: number | null; isProgrammed?: boolean }[],
): Promise<number[]> {
  const made = await operatorJson<{ id: number }[]>(
    "POST",
    `/machines/${machineId}/stops`,
    items.map((s) => ({
      startTime: iso(s.start),
      endTime: s.end == null ? null : iso(s.end),
      isProgrammed: s.isProgrammed ?? false,
    })),
  );
  return made.map((s) => s.id);
}

function postReason(
  co: TestCompany,
  machineId: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return api(co.key, `/v1/realtime/${machineId}/stop-reason`, {
    method: "POST",
    json: body,
    headers,
  });
}

async function reportRow(co: TestCompany, stopId: number): Promise<Row> {
  const res = await api(co.key, "/v1/reports/stops", {
    method: "POST",
    json: { stopId: { include: [stopId] } },
  });
  expect(res.status).toBe(200);
  const [row] = ((await res.json()) as Api["StopsReportPage"]).stops;
  if (!row) throw new Error(`stop ${stopId} not in the report`);
  return row;
}

/** Runs the consumer on every message sent since `from`; returns the bodies each URL got. */
async function deliverSince(from: number): Promise<void> {
  const messages = net.sent.slice(from);
  if (messages.length > 0) await runMessages(messages);
}

describe("POST /v1/realtime/{machine_id}/stop-reason", () => {
  it("gives the open stop its reason, as the stops report and GET .../stops then show it", async () => {
    const { co, m1 } = await plant();
    const [closed, openStop] = await stops(m1.id, [
      { start: Date.now() - 3 * HOUR, end: Date.now() - 2 * HOUR },
      { start: Date.now() - 10 * MIN },
    ]);
    const res = await postReason(co, m1.id, {
      generalCause: { name: "Material shortage" },
      specificCause: { name: " Empty hopper " },
      description: "waiting for granulate",
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const row = (await res.json()) as Row;
    expect(row.stop).toMatchObject({ id: openStop, endTime: null });
    expect(row.classification).toMatchObject({
      description: "waiting for granulate",
      generalCause: { name: "Material shortage" },
      specificCause: { name: "Empty hopper" },
      component: { id: null, name: null },
    });
    expect(row.machine).toEqual({ id: m1.id, name: "Press 1" });
    expect(row.company).toEqual({ id: co.id, name: co.name });
    expect(row.shift).toMatchObject({ name: "Day" });
    const reported = await reportRow(co, openStop ?? 0);
    expect(reported.classification).toEqual(row.classification);
    expect({ ...reported.stop, durationInMinutes: 0 }).toEqual({
      ...row.stop,
      durationInMinutes: 0,
    });

    const listed = await api(co.key, `/v1/realtime/${m1.id}/stops`);
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as Api["RealtimeStops"];
    expect(body.defaultStopId).toBe(openStop);
    expect(body.stops.map((s) => s.stop.id)).toEqual([openStop, closed]);
    expect(body.stops[0]?.classification).toEqual(row.classification);
    expect(body.stops[1]?.classification.id).toBeNull();
    expect(body.causes.generalCauses.map((c) => c.name)).toEqual(["Jam", "Material shortage"]);
    expect(body.causes.components.map((c) => c.name)).toEqual(["Feeder"]);
    expect(Math.abs(Date.parse(body.recentSince) - (Date.now() - 24 * HOUR))).toBeLessThan(MIN);
  });

  it("takes causes by id, and a recent stop by stopId: open or ended less than 24 hours ago", async () => {
    const { co, m1, causes } = await plant();
    const jam = causes.find((c) => c.name === "Jam");
    const feeder = causes.find((c) => c.name === "Feeder");
    const [yesterday, old, future] = await stops(m1.id, [
      { start: Date.now() - 26 * HOUR, end: Date.now() - 23 * HOUR },
      { start: Date.now() - 27 * HOUR, end: Date.now() - 25 * HOUR },
      { start: Date.now() + HOUR },
    ]);
    const res = await postReason(co, m1.id, {
      stopId: yesterday,
      generalCause: { id: jam?.id.toUpperCase() },
      component: { id: feeder?.id, name: "Feeder" },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as Row).classification).toMatchObject({
      generalCause: { id: jam?.id, name: "Jam" },
      component: { id: feeder?.id, name: "Feeder" },
    });

    const tooOld = await postReason(co, m1.id, { stopId: old, generalCause: { name: "Jam" } });
    expect(tooOld.status).toBe(409);
    expect(await tooOld.json()).toEqual({
      detail:
        `Stop ${old} ended more than 24 hours ago: a reason is given from the machine only to ` +
        "its open stop or to a stop that ended in the last 24 hours",
    });
    // Without stopId: not the stop that has not begun, but the last one (the same again); the
    // stop that has not begun is not listed either (nobody at the machine knows its reason).
    const listed = (await (
      await api(co.key, `/v1/realtime/${m1.id}/stops`)
    ).json()) as Api["RealtimeStops"];
    expect(listed.defaultStopId).toBe(yesterday);
    expect(listed.stops.map((s) => s.stop.id)).toEqual([yesterday]);
    expect(listed.stops.map((s) => s.stop.id)).not.toContain(future);
    const byDefault = await postReason(co, m1.id, { generalCause: { name: "Material shortage" } });
    expect(((await byDefault.json()) as Row).stop.id).toBe(yesterday);
    expect((await reportRow(co, old ?? 0)).classification.id).toBeNull();
  });

  it("without stopId, goes to the open stop, else to the last stop of the last 24 hours", async () => {
    const { co, m1, m2 } = await plant();
    const [earlier, last] = await stops(m1.id, [
      { start: Date.now() - 3 * HOUR, end: Date.now() - 2 * HOUR },
      { start: Date.now() - 90 * MIN, end: Date.now() - 80 * MIN },
    ]);
    const reasonOf = async (res: Response) => {
      expect(res.status, await res.clone().text()).toBe(200);
      const row = (await res.json()) as Row;
      return [row.stop.id, row.classification.generalCause.name];
    };
    expect(await reasonOf(await postReason(co, m1.id, { generalCause: { name: "Jam" } }))).toEqual([
      last,
      "Jam",
    ]);
    // A second scan corrects the same stop; the earlier one is reached by its id.
    expect(
      await reasonOf(await postReason(co, m1.id, { generalCause: { name: "Material shortage" } })),
    ).toEqual([last, "Material shortage"]);
    expect((await reportRow(co, earlier ?? 0)).classification.id).toBeNull();
    const [openStop] = await stops(m1.id, [{ start: Date.now() - MIN }]);
    expect(await reasonOf(await postReason(co, m1.id, { generalCause: { name: "Jam" } }))).toEqual([
      openStop,
      "Jam",
    ]);

    // Nothing in the last 24 hours: 409.
    await stops(m2.id, [{ start: Date.now() - 30 * HOUR, end: Date.now() - 25 * HOUR }]);
    const none = await postReason(co, m2.id, { generalCause: { name: "Jam" } });
    expect(none.status).toBe(409);
    expect(await none.json()).toEqual({
      detail:
        `Machine ${m2.id} has no open stop and no stop in the last 24 hours: there is no stop ` +
        "to give a reason to",
    });
    const listed = (await (
      await api(co.key, `/v1/realtime/${m2.id}/stops`)
    ).json()) as Api["RealtimeStops"];
    expect(listed).toMatchObject({ defaultStopId: null, stops: [] });
  });

  it("answers 404, then 404 for the stop, then 409, then 422", async () => {
    const { co, m1, m2 } = await plant();
    const [other] = await stops(m2.id, [{ start: Date.now() - 5 * MIN }]);
    const [deleted] = await stops(m1.id, [{ start: Date.now() - 50 * MIN, end: Date.now() - MIN }]);
    expect((await operator("DELETE", `/stops/${deleted}`)).status).toBe(204);
    const unknownCause = { generalCause: { name: "Gremlins" } };

    const noMachine = await postReason(co, 999_999_999, unknownCause);
    expect(noMachine.status).toBe(404);
    expect(await noMachine.json()).toEqual({ detail: "Machine 999999999 not found" });
    for (const stopId of [other, deleted, 999_999_999]) {
      const res = await postReason(co, m1.id, { ...unknownCause, stopId });
      expect(res.status, `stop ${stopId}`).toBe(404);
      expect(await res.json()).toEqual({ detail: `Stop ${stopId} not found on machine ${m1.id}` });
    }
    expect((await postReason(co, m1.id, unknownCause)).status).toBe(409);

    const bad = await postReason(co, m2.id, {
      generalCause: { name: "Gremlins" },
      specificCause: { id: crypto.randomUUID() },
      component: { id: (await catalogOf(co)).components[0]?.id, name: "Motor" },
    });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({
      detail: [
        {
          loc: ["body", "generalCause", "name"],
          msg: `No general cause named "Gremlins" in the company's catalog`,
          type: "not_found",
        },
        {
          loc: ["body", "specificCause", "id"],
          msg: expect.stringMatching(/^No specific cause with id [0-9a-f-]{36} in the company's/),
          type: "not_found",
        },
        {
          loc: ["body", "component", "name"],
          msg: `No component named "Motor" in the company's catalog`,
          type: "not_found",
        },
      ],
    });
    const differ = await postReason(co, m2.id, {
      generalCause: { id: (await catalogOf(co)).generalCauses[0]?.id, name: "Material shortage" },
    });
    expect(differ.status).toBe(422);
    expect(((await differ.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      "body",
      "generalCause",
    ]);
    // A cause with the same name in another list is not this list's.
    const wrongList = await postReason(co, m2.id, { generalCause: { name: "Feeder" } });
    expect(wrongList.status).toBe(422);
    // Nothing was classified by the refused calls.
    expect((await reportRow(co, other ?? 0)).classification.id).toBeNull();
  });

  it("neither lists nor classifies a stop that starts in the future, open or closed", async () => {
    const { co, m1 } = await plant();
    const now = Date.now();
    const [past] = await stops(m1.id, [{ start: now - 30 * MIN, end: now - 20 * MIN }]);
    const [openFuture, closedFuture] = await stops(m1.id, [
      { start: Date.UTC(2100, 0, 1, 7) },
      { start: Date.UTC(2100, 0, 4), end: Date.UTC(2100, 0, 4, 1) },
    ]);
    const listed = await api(co.key, `/v1/realtime/${m1.id}/stops`);
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as Api["RealtimeStops"];
    expect(body.stops.map((r) => r.stop.id)).toEqual([past]);
    expect(body.defaultStopId).toBe(past);
    const reason = { generalCause: { name: "Jam" } };
    for (const stopId of [openFuture, closedFuture]) {
      const res = await postReason(co, m1.id, { ...reason, stopId });
      expect(res.status, `stop ${stopId}`).toBe(409);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        new RegExp(`^Stop ${stopId} starts at 2100-01-0.T0.:00:00.000Z, after now`),
      );
      expect((await reportRow(co, stopId ?? 0)).classification.id).toBeNull();
    }
    // Without stopId the write goes to the stop that has happened.
    const res = await postReason(co, m1.id, reason);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Row).stop.id).toBe(past);
  });

  it("refuses a body without a general cause, with an empty cause, or with unknown fields", async () => {
    const { co, m1 } = await plant();
    await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    const cases: [unknown, (string | number)[]][] = [
      [{}, ["body", "generalCause"]],
      [{ generalCause: {} }, ["body", "generalCause"]],
      [{ generalCause: { name: "" } }, ["body", "generalCause", "name"]],
      [{ generalCause: { name: "Jam" }, reason: "x" }, ["body", "reason"]],
      [{ generalCause: { name: "Jam" }, stopId: 0 }, ["body", "stopId"]],
      [{ generalCause: { name: "Jam" }, description: "x".repeat(2001) }, ["body", "description"]],
    ];
    for (const [body, loc] of cases) {
      const res = await postReason(co, m1.id, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[] }[] }).detail;
      expect(detail[0]?.loc, JSON.stringify(body)).toEqual(loc);
    }
  });

  it("fires Created, then Updated with the previous reason, and nothing for the same reason again", async () => {
    const { co, m1, hooks } = await plant();
    const [stopId] = await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    let from = net.sent.length;
    const first = (await (
      await postReason(co, m1.id, { generalCause: { name: "Jam" } })
    ).json()) as Row;
    await deliverSince(from);
    const [createdReq] = net.at(hooks.created.url);
    if (!createdReq) throw new Error("Created not delivered");
    const created = JSON.parse(createdReq.body) as { eventType: string; event: Row };
    expect(created.eventType).toBe("MachineStopClassificationCreated");
    expect(created.event.classification).toEqual(first.classification);
    expect(created.event.machine).toEqual(first.machine);
    expect(created.event.shift).toEqual(first.shift);
    expect(created.event.stop).toMatchObject({ id: stopId, endTime: null });

    // The same reason again (a scanner's repeated scan): no event at all.
    from = net.sent.length;
    const again = await postReason(co, m1.id, { generalCause: { name: "Jam" } });
    expect(again.status).toBe(200);
    expect(((await again.json()) as Row).classification).toEqual(first.classification);
    expect(net.sent.length).toBe(from);

    // Another reason: Updated, with the previous one.
    const second = (await (
      await postReason(co, m1.id, {
        stopId,
        generalCause: { name: "Material shortage" },
        component: { name: "Feeder" },
      })
    ).json()) as Row;
    await deliverSince(from);
    const [updatedReq] = net.at(hooks.updated.url);
    if (!updatedReq) throw new Error("Updated not delivered");
    const updated = JSON.parse(updatedReq.body) as {
      event: Row & { previous: Row["classification"] };
    };
    expect(updated.event.classification).toEqual(second.classification);
    expect(updated.event.previous).toEqual(first.classification);
    expect(second.classification.id).toBe(first.classification.id);
    expect((await deliveriesOf(hooks.created.id)).map((d) => d.status)).toEqual(["delivered"]);
    expect((await deliveriesOf(hooks.updated.id)).map((d) => d.status)).toEqual(["delivered"]);
  });

  it("gives one Created event when two scanners give the same reason at once", async () => {
    const { co, m1, hooks } = await plant();
    await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    const from = net.sent.length;
    const body = { generalCause: { name: "Jam" }, description: "belt" };
    const answers = await Promise.all(Array.from({ length: 4 }, () => postReason(co, m1.id, body)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const ids = await Promise.all(
      answers.map(async (r) => ((await r.json()) as Row).classification.id),
    );
    expect(new Set(ids).size).toBe(1);
    expect(net.sent.length - from).toBe(1);
    expect(await deliveriesOf(hooks.created.id)).toHaveLength(1);
    expect(await deliveriesOf(hooks.updated.id)).toHaveLength(0);
  });

  it("replays an Idempotency-Key's answer without running the write again", async () => {
    const { co, m1, hooks } = await plant();
    const body = { generalCause: { name: "Jam" } };
    const key = { "Idempotency-Key": crypto.randomUUID() };
    // A 409 is about the moment, not the request: not kept, the retry runs again.
    expect((await postReason(co, m1.id, body, key)).status).toBe(409);
    const [stopId] = await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    const first = await postReason(co, m1.id, body, key);
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const replayed = await postReason(co, m1.id, body, key);
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(await replayed.json()).toEqual(await first.json());
    const reused = await postReason(
      co,
      m1.id,
      { generalCause: { name: "Material shortage" } },
      key,
    );
    expect(reused.status).toBe(422);
    expect((await reportRow(co, stopId ?? 0)).classification.generalCause.name).toBe("Jam");
    expect(await deliveriesOf(hooks.created.id)).toHaveLength(1);
    expect(await deliveriesOf(hooks.updated.id)).toHaveLength(0);
  });

  it("publishes stop.classified on the machine's live stream", async () => {
    const { co, m1 } = await plant();
    const res = await api(co.key, `/v1/realtime/${m1.id}/events`);
    expect(res.status).toBe(200);
    const sub = new SseSubscriber(res);
    open.push(sub);
    const [stopId] = await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    await postReason(co, m1.id, { generalCause: { name: "Jam" } });
    const events = await sub.waitFor((e) => e.type === "stop.classified");
    expect(events[0]?.data).toMatchObject({
      stopId,
      classification: { generalCause: { name: "Jam" } },
    });
  });

  it("keeps another company's machines, stops and causes out of reach", async () => {
    const owner = await plant();
    const intruder = await plant();
    const [ownerStop] = await stops(owner.m1.id, [{ start: Date.now() - 5 * MIN }]);
    await stops(intruder.m1.id, [{ start: Date.now() - 5 * MIN }]);
    const foreignMachine = await postReason(intruder.co, owner.m1.id, {
      generalCause: { name: "Jam" },
    });
    expect(foreignMachine.status).toBe(404);
    const foreignStop = await postReason(intruder.co, intruder.m1.id, {
      stopId: ownerStop,
      generalCause: { name: "Jam" },
    });
    expect(foreignStop.status).toBe(404);
    expect(await foreignStop.json()).toEqual({
      detail: `Stop ${ownerStop} not found on machine ${intruder.m1.id}`,
    });
    const ownerJam = owner.causes.find((c) => c.name === "Jam");
    const foreignCause = await postReason(intruder.co, intruder.m1.id, {
      generalCause: { id: ownerJam?.id },
    });
    expect(foreignCause.status).toBe(422);
    expect((await api(intruder.co.key, `/v1/realtime/${owner.m1.id}/stops`)).status).toBe(404);
    expect((await reportRow(owner.co, ownerStop ?? 0)).classification.id).toBeNull();
  });
});

async function catalogOf(co: TestCompany): Promise<OperatorSchemas["StopCauseCatalog"]> {
  return operatorJson<OperatorSchemas["StopCauseCatalog"]>(
    "GET",
    `/companies/${co.id}/stop-causes`,
  );
}

describe("operator: the catalog of causes", () => {
  it("adds causes once, keeps their ids, lists them by name; classifications add theirs", async () => {
    const { co, m1, causes } = await plant();
    const again = await operatorJson<{ id: string; kind: string; name: string }[]>(
      "POST",
      `/companies/${co.id}/stop-causes`,
      [
        { kind: "component", name: " Feeder " },
        { kind: "generalCause", name: "Feeder" },
        { kind: "component", name: "Feeder" },
      ],
    );
    const feeder = causes.find((c) => c.name === "Feeder");
    expect(again[0]).toEqual({ id: feeder?.id, kind: "component", name: "Feeder" });
    expect(again[2]).toEqual(again[0]);
    expect(again[1]?.id).not.toBe(feeder?.id);
    const [stopId] = await stops(m1.id, [{ start: Date.now() - 5 * MIN }]);
    await operatorJson("PUT", `/stops/${stopId}/classification`, {
      generalCause: { name: "Changeover" },
    });
    const catalog = await catalogOf(co);
    expect(catalog.generalCauses.map((c) => c.name)).toEqual([
      "Changeover",
      "Feeder",
      "Jam",
      "Material shortage",
    ]);
    expect(catalog.specificCauses.map((c) => c.name)).toEqual(["Empty hopper"]);
    const refused = await operator("POST", `/companies/${co.id}/stop-causes`, [
      { kind: "cause", name: "x" },
    ]);
    expect(refused.status).toBe(422);
    expect((await operator("GET", "/companies/999999999/stop-causes")).status).toBe(404);
  });
});

describeSecurity("Realtime stop reasons", {
  routes: [
    {
      method: "POST",
      path: "/v1/realtime/{id}/stop-reason",
      scope: "realtime.write",
      body: { generalCause: { name: "Jam" } },
    },
    { method: "GET", path: "/v1/realtime/{id}/stops", scope: "realtime.read" },
  ],
  placeholderId: 1,
  createForeignId: async (owner) => {
    const [m] = await createMachines(owner.id, [{ name: "Foreign" }]);
    await stops(m?.id ?? 0, [{ start: Date.now() - 5 * MIN }]);
    return m?.id ?? 0;
  },
});
