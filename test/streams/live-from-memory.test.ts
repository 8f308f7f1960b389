/**
 * A machine stream's live figures come from what its object holds: after the first tick
 * of an instance has read the running instance, its stops and its logs, later ticks (a
 * `count` sample, a realtime write's flush) send D1 nothing, and the figures still follow
 * the writes.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { shardOf } from "../../src/db/shards";
import type { Env } from "../../src/env";
import { countingD1 } from "../fixtures/d1-counter";
import { plant, postSku } from "../fixtures/plant";
import { SseSubscriber } from "../fixtures/subscriber";
import { api, ingest, shardD1 } from "../harness";

const open: SseSubscriber[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

describe("live figures from the stream object's memory", () => {
  it("recomputes production and OEE after samples and writes without a D1 statement", async () => {
    const p = await plant();
    const m = p.machines[0];
    const count = p.countSignals[0];
    if (!m || !count) throw new Error("no machine");
    const start = Date.now() - 10 * 60_000;
    const sub = new SseSubscriber(await api(p.co.key, `/v1/realtime/${m.id}/events`));
    open.push(sub);
    expect(
      (await postSku(p.co, m.id, { sku: p.b.sku, start: new Date(start).toISOString() })).status,
    ).toBe(204);
    const [first] = await sub.waitFor((e) => e.type === "oee" && e.data.final === false);

    // From now on the stream object's D1 binding counts what it sends.
    const shard = await shardOf(env, p.co.id);
    if (shard === null) throw new Error("no shard");
    const counter = countingD1(await shardD1(p.co.id));
    const name = `m:${p.co.id}:${m.id}`;
    const stub = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(name));
    await runInDurableObject(stub, (instance) => {
      const object = instance as unknown as { env: Env };
      object.env = { ...object.env, [shard]: counter.binding };
    });

    // New pulses: a production event from the signal store, no D1.
    await ingest(count, [[Date.now() - 2_000, 40]]);
    await sub.waitFor((e) => e.type === "production" && e.data.sensorCount === 40);
    // A realtime write (its flush hands the stream the log it wrote): new OEE, no D1.
    expect((await postSku(p.co, m.id, { sku: p.a.sku })).status).toBe(204);
    // The old segment's log now ends with its 40 pulses (Berry juice: 30 a minute).
    const [after] = await sub.waitFor(
      (e) => e.type === "oee" && e.data.final === false && Number(e.data.effectiveness) > 0,
    );
    expect(first?.data.effectiveness).toBe(0);
    expect(after?.data.quality).toBe(1);
    expect(counter.sent()).toEqual([]);
  });
});
