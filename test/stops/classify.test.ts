/**
 * The one classification path (src/stops/classify.ts): concurrent classifications of one stop
 * never make two `Created` events, and a write guarded on a classification that changed
 * meanwhile writes nothing, no event included.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { scopeIn } from "../../src/db/company-scope";
import { findStopWithClassification } from "../../src/reports/stops-report";
import { classificationChange, putClassification } from "../../src/stops/classification-queries";
import { classifyStop } from "../../src/stops/classify";
import { answers, type FakeNetwork, fakeNetwork, publicEndpoint } from "../fixtures/fake-network";
import { deliveriesOf, register, settleDeliverers } from "../fixtures/webhook-harness";
import { createCompany, createMachines, operatorJson, shardDb } from "../harness";

let net: FakeNetwork;

beforeEach(() => {
  net = fakeNetwork();
});

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
});

/** A company with one stop and a registration per event type; the shard's client. */
async function oneStop() {
  const co = await createCompany();
  const [m] = await createMachines(co.id, [{ name: "M" }]);
  const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${m?.id}/stops`, [
    { startTime: new Date(Date.now() - 60_000).toISOString(), isProgrammed: false },
  ]);
  if (!stop) throw new Error("no stop");
  const hooks: Record<string, string> = {};
  for (const kind of ["Created", "Updated"]) {
    const { url } = publicEndpoint(net, `/${kind}`);
    net.endpoints.set(url, answers(200));
    hooks[kind] = (await register(co.id, url, `MachineStopClassification${kind}`)).id;
  }
  return { co, stopId: stop.id, db: await shardDb(co.id), hooks };
}

const reason = (generalCause: string) => ({
  description: null,
  component: null,
  specificCause: null,
  generalCause,
});

describe("classifyStop", () => {
  it("of concurrent classifications, one is Created and the others Updated in turn", async () => {
    const { co, stopId, db, hooks } = await oneStop();
    const outcomes = await Promise.all(
      ["Jam", "Material shortage", "Changeover", "Jam"].map((name) =>
        classifyStop(env, db, stopId, co.id, reason(name)),
      ),
    );
    const emitted = outcomes.map((o) => o?.emitted);
    expect(emitted.filter((e) => e === "Created")).toHaveLength(1);
    expect(await deliveriesOf(hooks.Created ?? "")).toHaveLength(1);
    expect(await deliveriesOf(hooks.Updated ?? "")).toHaveLength(
      emitted.filter((e) => e === "Updated").length,
    );
    const found = await findStopWithClassification(db, stopId, co.id);
    expect(found?.classification.id).toBe(outcomes[0]?.classification.id);
  });

  it("writes nothing, and no event, when the classification changed after it was read", async () => {
    const { co, stopId, db, hooks } = await oneStop();
    const scope = scopeIn(db, co.id);
    const unclassified = await findStopWithClassification(db, stopId, co.id);
    if (!unclassified) throw new Error("no stop");
    const first = await classifyStop(env, db, stopId, co.id, reason("Jam"));
    expect(first?.emitted).toBe("Created");

    // A first classification, decided on the stop as it was before: refused.
    const late = await putClassification(
      scope,
      stopId,
      reason("Changeover"),
      await classificationChange(db, unclassified, "Created", Date.now()),
      null,
    );
    expect(late.applied).toBe(false);
    expect(late.deliveries).toEqual([]);

    // A replacement of the classification as it was read, after another replaced it: refused.
    const read = await findStopWithClassification(db, stopId, co.id);
    if (!read || read.classification.id === null || read.classification.updatedAt === null) {
      throw new Error("not classified");
    }
    const replaces = { id: read.classification.id, updatedAt: read.classification.updatedAt };
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await classifyStop(env, db, stopId, co.id, reason("Setup")))?.emitted).toBe("Updated");
    const stale = await putClassification(
      scope,
      stopId,
      reason("Changeover"),
      await classificationChange(db, read, "Updated", Date.now()),
      replaces,
    );
    expect(stale.applied).toBe(false);
    expect(stale.deliveries).toEqual([]);

    const now = await findStopWithClassification(db, stopId, co.id);
    expect(now?.classification.generalCauseName).toBe("Setup");
    expect(await deliveriesOf(hooks.Created ?? "")).toHaveLength(1);
    expect(await deliveriesOf(hooks.Updated ?? "")).toHaveLength(1);
  });
});
