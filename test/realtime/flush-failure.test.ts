/**
 * A realtime write the machine's object has applied is not answered 500 when the D1
 * flush after it fails: 204, the alarm pushes it to D1 later, and a retry with the
 * same Idempotency-Key is a replay (no second segment).
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { shardBindings, shardOf } from "../../src/db/shards";
import type { Env } from "../../src/env";
import { realtimeObjectName } from "../../src/realtime/machine-stub";
import { getState, machineLogs, plant, postSku } from "../fixtures/plant";

function stubOf(companyId: number, machineId: number) {
  const ns = env.REALTIME_MACHINE;
  return ns.get(ns.idFromName(realtimeObjectName(companyId, machineId)));
}

/**
 * Makes the object's next `failures` D1 batches fail, as D1 does when it is unavailable.
 * Only this object's binding is replaced; the Worker's keeps working.
 */
async function failObjectBatches(
  stub: ReturnType<typeof stubOf>,
  companyId: number,
  failures: number,
) {
  let left = failures;
  const shard = await shardOf(env, companyId);
  if (shard === null) throw new Error("no shard");
  await runInDurableObject(stub, (instance) => {
    const object = instance as unknown as { env: Env };
    const db = shardBindings(object.env).get(shard);
    if (!db) throw new Error("no shard binding");
    const failing = new Proxy(db, {
      get(target, property) {
        if (property === "batch" && left > 0) {
          return async () => {
            left -= 1;
            throw new Error("D1_ERROR: injected failure");
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    object.env = { ...object.env, [shard]: failing };
  });
  return () => left;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a realtime write whose D1 flush fails", () => {
  it("answers 204, keeps one segment on a keyed retry, and reaches D1 by the alarm", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const stub = stubOf(p.co.id, m.id);
    // The object learns its running instance first (a read), so that the failure hits the
    // flush after the write and nothing before it.
    expect((await getState(p.co, m.id)).revision).toBe(0);
    const left = await failObjectBatches(stub, p.co.id, 1);

    const key = { "Idempotency-Key": crypto.randomUUID() };
    const write = { sku: "A-100", quantity: 7 };
    const res = await postSku(p.co, m.id, write, key);
    expect(res.status, await res.clone().text()).toBe(204);
    expect(left()).toBe(0);
    expect(errors.mock.calls.map((c) => String(c[0])).join("\n")).toContain(
      "realtime_flush_failed",
    );

    // A retry with the key is answered from the first response: nothing applied twice.
    const retry = await postSku(p.co, m.id, write, key);
    expect(retry.status).toBe(204);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");

    // D1 does not show it yet; the alarm pushes the stored write there.
    expect(await machineLogs(p.co, m.id)).toHaveLength(0);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const logs = await machineLogs(p.co, m.id);
    expect(logs).toHaveLength(1);
    const state = await getState(p.co, m.id);
    expect(state.revision).toBe(1);
    expect(state.production.segments).toHaveLength(1);
    expect(state.current).toMatchObject({ quantity: 7, sku: { id: p.a.id } });
    expect(logs.map((l) => l.id)).toEqual([state.current?.productionLogId]);
  });
});
