/**
 * Reasons for the stops the machine tells itself (detected from its count signal,
 * src/machine-state/): given at the machine through the one classification path, and taken
 * back through it when late samples show the stop was production after all.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Api } from "../fixtures/api-types";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { detectionPlant, iso, MIN, S, series } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { deliveriesOf, register, settleDeliverers } from "../fixtures/webhook-harness";
import { api, operatorJson, type TestCompany } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
});

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
});

/** The catalog and one registration per classification event type of a company. */
async function reasonsAndHooks(co: TestCompany) {
  await operatorJson("POST", `/companies/${co.id}/stop-causes`, [
    { kind: "generalCause", name: "Material shortage" },
  ]);
  const hooks: Record<string, string> = {};
  for (const kind of ["Created", "Updated", "Deleted"]) {
    const { url } = publicEndpoint(net, `/${kind}`);
    net.endpoints.set(url, answers(200));
    hooks[kind] = (await register(co.id, url, `MachineStopClassification${kind}`)).id;
  }
  return hooks;
}

describe("a detected stop", () => {
  it("going on now gets its reason at the machine: the open stop, a Created event", async () => {
    const plant = await detectionPlant();
    const hooks = await reasonsAndHooks(plant.co);
    const now = Math.floor(Date.now() / S) * S;
    await plant.send(series(now - 28 * MIN, now, S, (t) => (t < now - 8 * MIN ? 1 : 0)));
    const [open] = await plant.stops();
    expect(open).toMatchObject({ endTime: null, isManual: false });

    const res = await api(plant.co.key, `/v1/realtime/${plant.machineId}/stop-reason`, {
      method: "POST",
      json: { generalCause: { name: "Material shortage" } },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const row = (await res.json()) as Api["StopsReportRow"];
    expect(row.stop).toMatchObject({ id: open?.id, isManual: false, endTime: null });
    expect(row.classification.generalCause.name).toBe("Material shortage");
    expect((await deliveriesOf(hooks.Created ?? "")).map((d) => d.eventType)).toEqual([
      "MachineStopClassificationCreated",
    ]);
  });

  it("that late samples show was production loses its reason through the same events", async () => {
    const plant = await detectionPlant();
    const hooks = await reasonsAndHooks(plant.co);
    const now = Math.floor(Date.now() / S) * S;
    const from = now - 40 * MIN;
    const gap = (t: number) => t >= now - 30 * MIN && t < now - 20 * MIN;
    await plant.send(series(from, now - 10 * MIN, S, (t) => (gap(t) ? 0 : 1)));
    const [detected] = await plant.stops();
    expect(detected).toMatchObject({
      startTime: iso(now - 30 * MIN),
      endTime: iso(now - 20 * MIN),
      isManual: false,
    });
    const given = await api(plant.co.key, `/v1/realtime/${plant.machineId}/stop-reason`, {
      method: "POST",
      json: { stopId: detected?.id, generalCause: { name: "Material shortage" } },
    });
    expect(given.status, await given.clone().text()).toBe(200);

    const res = await api(plant.co.key, `/v1/realtime/${plant.machineId}/events`);
    const sub = new SseSubscriber(res);
    try {
      // The counter's late samples: pieces all through the gap. The stop goes, and its reason.
      await plant.send(series(now - 30 * MIN, now - 20 * MIN, S, () => 1));
      expect(await plant.stops()).toEqual([]);
      const events = await sub.waitFor(
        (e) => e.type === "stop.unclassified" || e.type === "stop.deleted",
        2,
      );
      expect(events.map((e) => e.type)).toEqual(["stop.unclassified", "stop.deleted"]);
      expect(events[0]?.data).toEqual({ stopId: detected?.id });
    } finally {
      await sub.close();
    }
    // Pull sync sees the stop deleted, without its reason.
    const synced = await api(plant.co.key, "/v1/reports/stops", {
      method: "POST",
      json: { includeDeleted: true, stopId: { include: [detected?.id ?? 0] } },
    });
    const [gone] = ((await synced.json()) as Api["StopsReportPage"]).stops;
    expect(gone?.stop.deletedAt).not.toBeNull();
    expect(gone?.classification.id).toBeNull();
    const deleted = await deliveriesOf(hooks.Deleted ?? "");
    expect(deleted.map((d) => d.eventType)).toEqual(["MachineStopClassificationDeleted"]);
    expect(await deliveriesOf(hooks.Created ?? "")).toHaveLength(1);
    expect(await deliveriesOf(hooks.Updated ?? "")).toHaveLength(0);
  });
});
