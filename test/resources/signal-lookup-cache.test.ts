/**
 * The ingestion's and the `count` sums' signal lookups are kept for minutes per isolate
 * and refreshed ahead of their expiry, so that a plant uploading every 10 s never waits
 * for D1; a deletion and a new `count` signal are seen at once in the isolate that made them.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDb } from "../../src/db/client";
import { shardOf } from "../../src/db/shards";
import { sumCountSignal } from "../../src/resources/signals/count-sums";
import {
  INGEST_CACHE_MS,
  lookupIngestTarget,
  REFRESH_AHEAD_MS,
} from "../../src/resources/signals/signal-lookup";
import { countingD1 } from "../fixtures/d1-counter";
import { createCompany, createMachines, createSignal, ingest, operator, shardD1 } from "../harness";

afterEach(() => {
  vi.useRealTimers();
});

describe("the ingestion's signal lookup", () => {
  it("reads D1 once for uploads every 10 s over 10 minutes, refreshing ahead in the background", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Filler" }]);
    if (!m) throw new Error("no machine");
    const publicId = await createSignal(m.id, { name: "power" });
    const d1 = countingD1(await shardD1(co.id));
    const db = createDb(d1.binding);
    const refreshes: Promise<unknown>[] = [];
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.now();
    for (let t = 0; t <= 10 * 60_000; t += 10_000) {
      vi.setSystemTime(t0 + t);
      const before = d1.count();
      const found = await lookupIngestTarget(
        async () => db,
        publicId,
        (p) => refreshes.push(p),
      );
      await Promise.all(refreshes.splice(0));
      expect(found?.machineId).toBe(m.id);
      // Only the very first upload waits for D1; later reads happen in refreshes.
      if (t > 0) expect(d1.count() - before).toBeLessThanOrEqual(1);
    }
    // The first read, then one refresh per cache lifetime.
    const expected = 1 + Math.ceil((10 * 60_000) / (INGEST_CACHE_MS - REFRESH_AHEAD_MS));
    expect(d1.count()).toBeLessThanOrEqual(expected);
    expect(d1.count()).toBeGreaterThanOrEqual(2);
  });

  it("forgets a deleted signal at once: its next upload is a 404", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Filler" }]);
    if (!m) throw new Error("no machine");
    const publicId = await createSignal(m.id, { name: "power" });
    await ingest(publicId, [[Date.now() - 1_000, 1]]);
    expect((await operator("DELETE", `/signals/${publicId}`)).status).toBe(204);
    const res = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: [new Date().toISOString()],
      values: [2],
    });
    expect(res.status).toBe(404);
  });
});

describe("the count sums' signal lookup", () => {
  it("reads the count signal from D1 once, and sees a count signal created after a miss", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Capper" }]);
    if (!m) throw new Error("no machine");
    const machine = { companyId: co.id, machineId: m.id };
    const now = Date.now();
    const window = [{ start: now - 60_000, end: now + 1 }];
    // Only the company's shard counts: the directory read that names it is not a signal read.
    const shard = await shardOf(env, co.id);
    if (shard === null) throw new Error("no shard");
    const d1 = countingD1(await shardD1(co.id));
    const bindings = { DB: env.DB, [shard]: d1.binding, SIGNAL_STORE: env.SIGNAL_STORE };
    expect(await sumCountSignal(bindings, machine, window)).toEqual([0]);
    expect(d1.count()).toBe(1);
    // "None" is kept: no second read.
    expect(await sumCountSignal(bindings, machine, window)).toEqual([0]);
    expect(d1.count()).toBe(1);

    // Created in this isolate: seen at once (one read of the new signal).
    const count = await createSignal(m.id, { name: "count" });
    expect(await sumCountSignal(bindings, machine, window)).toEqual([0]);
    expect(d1.count()).toBe(2);
    // The ingestion looks the count signal up too (stop detection) and shares this cache:
    // its samples are summed without another read.
    await ingest(count, [[now - 1_000, 7]]);
    expect(await sumCountSignal(bindings, machine, window)).toEqual([7]);
    expect(d1.count()).toBe(2);
    for (let i = 0; i < 5; i += 1) await sumCountSignal(bindings, machine, window);
    expect(d1.count()).toBe(2);

    // Deleted in this isolate: forgotten at once.
    expect((await operator("DELETE", `/signals/${count}`)).status).toBe(204);
    expect(await sumCountSignal(bindings, machine, window)).toEqual([0]);
    expect(d1.count()).toBe(3);
  });
});
