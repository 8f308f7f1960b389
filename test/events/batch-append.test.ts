/**
 * A batch of events (a publisher's group commit) is stored in the fewest statements, and
 * leaves the same log and the same `reset` state as the same events appended one by one:
 * every event once, in order, the last payload of each kind of state, the crew lists and a
 * new shift's cleared state as if applied in turn.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { EventInput } from "../../src/events/names";
import { companyStream } from "../../src/events/names";
import { createCompany } from "../harness";

/** A company stream of its own (an object per company), reached by name. */
function stream(companyId: number) {
  return env.COMPANY_STREAM.get(env.COMPANY_STREAM.idFromName(companyStream(companyId)));
}

/** Every row of a stream's log and state, as a user's replay and `reset` would show them. */
async function contents(companyId: number) {
  return runInDurableObject(stream(companyId), (_instance, state) => ({
    events: state.storage.sql
      .exec<{ id: number; type: string; body: string }>(
        "SELECT id, type, body FROM events ORDER BY id",
      )
      .toArray()
      .map((r) => ({ id: r.id, type: r.type, body: JSON.parse(r.body) as unknown })),
    state: state.storage.sql
      .exec<{ key: string; data: string }>("SELECT key, data FROM state ORDER BY key")
      .toArray(),
  }));
}

const AT = Date.parse("2026-11-26T08:00:00Z");

/** A batch that touches every kind of state rule, twice where order matters. */
function mixedBatch(): EventInput[] {
  const op = (id: number) => ({ operator: { id, name: `Operator ${id}` } });
  const events: EventInput[] = [
    { type: "segment.changed", machineId: 1, data: { sku: "Apple juice" } },
    { type: "production", machineId: 1, data: { good: 1 } },
    { type: "operator.assigned", machineId: 1, data: op(7) },
    { type: "production", machineId: 1, data: { good: 2 } },
    { type: "operator.assigned", machineId: 1, data: op(8) },
    { type: "operator.assigned", machineId: 1, data: op(7) },
    { type: "stop.classified", machineId: 1, data: { stopId: 5, classification: { a: 1 } } },
    { type: "stop.unclassified", machineId: 1, data: { stopId: 5 } },
    { type: "stop.classified", machineId: 2, data: { stopId: 6, classification: { b: 1 } } },
    { type: "oee", machineId: 1, data: { oee: 0.5 } },
    { type: "shift.started", machineId: 1, data: { shift: "Night" } },
    { type: "production", machineId: 1, data: { good: 0 } },
    { type: "segment.updated", machineId: 2, data: { quantity: 3 } },
    { type: "stop.unclassified", machineId: 2, data: { stopId: 99 } },
    { type: "production", machineId: 2, data: { good: 4 } },
  ];
  return events.map((e, i) => ({ ...e, at: AT + i * 1_000 }));
}

describe("appending a batch to a stream", () => {
  it("stores the same log and state as appending its events one by one", async () => {
    const batched = await createCompany();
    const single = await createCompany();
    const inputs = mixedBatch();
    expect(await stream(batched.id).appendMany(companyStream(batched.id), inputs)).toBe(
      inputs.length,
    );
    for (const input of inputs) {
      await stream(single.id).appendMany(companyStream(single.id), [input]);
    }
    const a = await contents(batched.id);
    const b = await contents(single.id);
    expect(a.events.map((e) => e.id)).toEqual(inputs.map((_, i) => i + 1));
    expect(a.events.map((e) => e.type)).toEqual(inputs.map((e) => e.type));
    expect(a).toEqual(b);
    // What `reset` shows: machine 1's crew is 8 then 7 before the new shift cleared it, its
    // classification was withdrawn, machine 2's kept (another stop was unclassified).
    expect(a.state.map((r) => r.key)).toEqual([
      "1:production",
      "1:segment",
      "1:shift",
      "2:classification",
      "2:production",
      "2:segmentUpdate",
    ]);
    expect(JSON.parse(a.state[0]?.data ?? "null")).toEqual({ good: 0 });
  });

  it("writes a batch of 60 events in at most 5 statements, and a resent batch in one", async () => {
    const co = await createCompany();
    const name = companyStream(co.id);
    const inputs: EventInput[] = Array.from({ length: 60 }, (_, i) => ({
      type: i % 2 === 0 ? "segment.updated" : "production",
      machineId: 1 + (i % 3),
      at: AT + i,
      data: { n: i },
    }));
    const delivery = { source: "test:batch", seqs: inputs.map((_, i) => i + 1) };
    await stream(co.id).appendMany(name, inputs.slice(0, 1), { source: "test:batch", seqs: [1] });
    const statements = (await counted(co.id, () => stream(co.id).appendMany(name, inputs, delivery)))
      .filter((s) => !s.startsWith("SELECT"));
    // 59 new events: 3 inserts of rows (25 a statement), 1 of the state, 1 of the sender's
    // sequence number. One by one it was 2 writes per event.
    expect(statements.length).toBeLessThanOrEqual(5);
    const resent = await counted(co.id, () => stream(co.id).appendMany(name, inputs, delivery));
    expect(resent.filter((s) => s.startsWith("INSERT"))).toEqual([]);
    const { events, state } = await contents(co.id);
    expect(events.map((e) => (e.body as { data: { n: number } }).data.n)).toEqual(
      inputs.map((_, i) => i),
    );
    expect(state).toHaveLength(6);
    expect(JSON.parse(state.find((r) => r.key === "3:production")?.data ?? "null")).toEqual({
      n: 59,
    });
  });
});

/** The SQL statements the stream ran during `run` (its log's storage, counted). */
async function counted(companyId: number, run: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  type Inside = { core: { log: { sql: SqlStorage } } };
  await runInDurableObject(stream(companyId), (instance) => {
    const log = (instance as unknown as Inside).core.log;
    const real = log.sql;
    log.sql = new Proxy(real, {
      get(target, prop) {
        if (prop !== "exec") return Reflect.get(target, prop, target);
        return (query: string, ...args: unknown[]) => {
          seen.push(query.trim());
          return target.exec(query, ...args);
        };
      },
    });
  });
  await run();
  return seen;
}
