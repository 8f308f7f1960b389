/**
 * Stream events through HTTP, as a subscriber sees them: realtime writes arrive as one event
 * each, in order, over SSE and WebSocket; a reconnect with `Last-Event-ID` (or `?since=`)
 * gets exactly the events it missed; a client further behind gets `reset`; tickets are one
 * use and bound to their company; the connection limit answers 429.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { HEARTBEAT_MS } from "../../src/streams/connection-leases";
import { type Plant, plant, postOperator, postSku } from "../fixtures/plant";
import { SseSubscriber, type StreamEvent, WsSubscriber } from "../fixtures/subscriber";
import { api, call, createKey } from "../harness";

const WRITE_TYPES = ["segment.changed", "segment.updated", "operator.assigned"];
const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function sse(key: string, path: string, headers: Record<string, string> = {}) {
  const res = await api(key, path, { headers });
  if (res.status !== 200) throw new Error(`${path} -> ${res.status}: ${await res.text()}`);
  const sub = new SseSubscriber(res);
  open.push(sub);
  return sub;
}

async function ws(path: string, headers: Record<string, string>) {
  const res = await call(path, { headers: { upgrade: "websocket", ...headers } });
  expect(res.status).toBe(101);
  const sub = new WsSubscriber(res);
  open.push(sub);
  return sub;
}

/** Three realtime writes: a SKU, a segment update, an operator. */
async function threeWrites(p: Plant, machineId: number, quantity: number): Promise<void> {
  expect((await postSku(p.co, machineId, { sku: "Apple juice" })).status).toBe(204);
  expect((await postSku(p.co, machineId, { quantity })).status).toBe(204);
  const operator = p.operators[0];
  if (!operator) throw new Error("no operator");
  const res = await postOperator(p.co, machineId, {
    operatorId: operator.id,
    start: new Date(Date.now() - 60_000).toISOString(),
  });
  expect(res.status).toBe(204);
}

function strictlyIncreasing(events: StreamEvent[]): void {
  for (let i = 1; i < events.length; i += 1) {
    expect(events[i]?.id).toBeGreaterThan(events[i - 1]?.id ?? Number.POSITIVE_INFINITY);
  }
}

describe("GET /v1/realtime/{machine_id}/events (SSE)", () => {
  it("gives each realtime write as one event, in order, with increasing ids", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    await threeWrites(p, m.id, 500);
    const events = await sub.waitFor((e) => WRITE_TYPES.includes(e.type), 3);
    expect(events.map((e) => e.type)).toEqual(WRITE_TYPES);
    expect(events[0]?.data).toMatchObject({ sku: { name: "Apple juice" }, revision: 1 });
    expect(events[1]?.data).toEqual({ revision: 2, quantity: 500 });
    expect(events[2]?.data).toMatchObject({ operator: { id: p.operators[0]?.id } });
    expect(events.every((e) => e.machineId === m.id)).toBe(true);
    strictlyIncreasing(sub.events);
    // The live figures follow the writes: the shift that runs (published once, when the
    // shift was defined), its production and OEE.
    await sub.waitFor((e) => e.type === "oee");
    const history = await sse(p.co.key, `/v1/realtime/${m.id}/events?since=0`);
    await history.waitFor((e) => e.type === "oee");
    expect(history.of("shift.started")).toHaveLength(1);
  });

  it("gives concurrent writes' events in the order of their revisions", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    expect((await postSku(p.co, m.id, { sku: "Apple juice" })).status).toBe(204);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => postSku(p.co, m.id, { quantity: i + 1 })),
    );
    expect(statuses.map((r) => r.status)).toEqual(Array(12).fill(204));
    const events = await sub.waitFor((e) => WRITE_TYPES.includes(e.type), 13);
    // The object publishes inside its queue of writes: revision order is stream order.
    expect(events.map((e) => e.data.revision)).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    strictlyIncreasing(events);
  });

  it("a reconnect with Last-Event-ID (or ?since=) gets exactly the events it missed", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const witness = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const first = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    await postSku(p.co, m.id, { sku: "Apple juice" });
    const [seen] = await first.waitFor((e) => e.type === "segment.changed");
    if (!seen) throw new Error("no event");
    await first.close();

    await threeWrites(p, m.id, 7);
    await postSku(p.co, m.id, { quantity: 8 });
    await witness.waitFor((e) => e.type === "segment.updated" && e.data.quantity === 8);
    const missed = witness.events.filter((e) => e.id > seen.id);

    const byHeader = await sse(p.co.key, `/v1/realtime/${m.id}/events`, {
      "last-event-id": String(seen.id),
    });
    const bySince = await sse(p.co.key, `/v1/realtime/${m.id}/events?since=${seen.id}`);
    const replayed = await byHeader.waitFor(() => true, missed.length);
    expect(replayed.slice(0, missed.length)).toEqual(missed);
    expect((await bySince.waitFor(() => true, missed.length)).slice(0, missed.length)).toEqual(
      missed,
    );
    // Then the live ones, after the replay.
    await postSku(p.co, m.id, { quantity: 9 });
    const [live] = await byHeader.waitFor((e) => e.data.quantity === 9);
    expect(live?.id).toBeGreaterThan(missed.at(-1)?.id ?? 0);
    strictlyIncreasing(byHeader.events);
  });

  it("a client further behind than the log gets reset with the current state", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const witness = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    await threeWrites(p, m.id, 11);
    const events = await witness.waitFor((e) => WRITE_TYPES.includes(e.type), 3);
    const last = events.at(-1);
    if (!last) throw new Error("no event");
    // The log forgets its oldest events (as pruning does past 24 h and 10,000 events).
    const stub = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(`m:${p.co.id}:${m.id}`));
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM events WHERE id <= ?", last.id - 1);
    });
    for (const path of [
      `/v1/realtime/${m.id}/events?since=1`,
      `/v1/realtime/${m.id}/events?since=999999`, // an id the stream never gave
    ]) {
      const sub = await sse(p.co.key, path);
      const [reset] = await sub.waitFor(() => true);
      if (!reset) throw new Error("no event");
      expect(reset.type).toBe("reset");
      const state = (reset.data.machines as Record<string, Record<string, unknown>>)[String(m.id)];
      expect(state?.segment).toMatchObject({ sku: { name: "Apple juice" } });
      expect(state?.segmentUpdate).toMatchObject({ quantity: 11 });
      expect(state?.operators).toHaveLength(1);
      expect(reset.data.lastEventId).toBe(reset.id);
    }
  });

  it("refuses a ?since= that is not a non-negative integer (422), empty included", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    for (const since of ["", "%20", "-1", "1.5", "abc", "1e3", "0x10"]) {
      for (const path of [`/v1/realtime/${m.id}/events`, "/v1/realtime/events"]) {
        const res = await api(p.co.key, `${path}?since=${since}`);
        expect(res.status, `${path}?since=${since}`).toBe(422);
        const body = (await res.json()) as { detail: { loc: unknown[] }[] };
        expect(body.detail[0]?.loc).toEqual(["query", "since"]);
      }
    }
    expect((await sse(p.co.key, `/v1/realtime/${m.id}/events?since=0`)).response.status).toBe(200);
  });

  it("needs realtime.read, a machine of the company, and a credential", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    expect((await call(`/v1/realtime/${m.id}/events`)).status).toBe(401);
    const writer = await createKey(p.co.id, ["realtime.write"]);
    expect((await api(writer, `/v1/realtime/${m.id}/events`)).status).toBe(403);
    expect((await api(p.co.key, "/v1/realtime/99999999/events")).status).toBe(404);
    const other = await plant();
    expect((await api(other.co.key, `/v1/realtime/${m.id}/events`)).status).toBe(404);
  });

  it("holds at most EVENTS_MAX_CONNECTIONS open connections per credential (429 + Retry-After)", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const subs: SseSubscriber[] = [];
    for (let i = 0; i < 20; i += 1) subs.push(await sse(p.co.key, `/v1/realtime/${m.id}/events`));
    const refused = await api(p.co.key, `/v1/realtime/${m.id}/events`);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another credential of the company has its own connections.
    const other = await createKey(p.co.id, ["realtime.read"]);
    expect((await sse(other, `/v1/realtime/events`)).response.status).toBe(200);
    // A closed connection gives its place back: at once where the runtime passes a reader's
    // cancel on to the stream object (workerd 1.20261117 does; the 1.20260426 of wrangler 4.86
    // did not), else when the next heartbeat finds it gone.
    await subs[0]?.close();
    let status = 429;
    for (let i = 0; i < 100 && status === 429; i += 1) {
      await new Promise((r) => setTimeout(r, 250));
      const res = await api(p.co.key, `/v1/realtime/${m.id}/events`);
      status = res.status;
      if (status === 200) open.push(new SseSubscriber(res));
    }
    expect(status).toBe(200);
  }, 60_000);
});

describe("the connection limit", () => {
  it("gives an SSE connection's place back as soon as its client aborts the request, not at the next heartbeat", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const path = `/v1/realtime/${m.id}/events`;
    const client = new AbortController();
    const leaving = await api(p.co.key, path, { signal: client.signal });
    expect(leaving.status).toBe(200);
    const subs: SseSubscriber[] = [];
    for (let i = 1; i < 20; i += 1) subs.push(await sse(p.co.key, path));
    expect((await api(p.co.key, path)).status).toBe(429);

    // An aborted request cancels the stream object's response body, whose cancel handler
    // releases the lease.
    const leftAt = Date.now();
    client.abort();
    // The release is one call after the abort: allow it a moment, far below a heartbeat.
    let status = 429;
    while (status === 429 && Date.now() - leftAt < 3_000) {
      await new Promise((r) => setTimeout(r, 50));
      const res = await api(p.co.key, path);
      status = res.status;
      if (status === 200) open.push(new SseSubscriber(res));
    }
    expect(status).toBe(200);
    expect(Date.now() - leftAt).toBeLessThan(HEARTBEAT_MS);
    // No heartbeat went out meanwhile: the place came back from the client leaving.
    expect(subs[0]?.comments).not.toContain("heartbeat");
  });
});

describe("the OpenAPI document", () => {
  it("describes the streams as text/event-stream, the event types and the ticket route", async () => {
    const doc = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    for (const path of ["/v1/realtime/{machine_id}/events", "/v1/realtime/events"]) {
      const get = doc.paths[path]?.get;
      expect(get?.["x-required-scope"]).toBe("realtime.read");
      expect(JSON.stringify(get?.responses)).toContain("text/event-stream");
    }
    expect(doc.paths["/v1/realtime/tickets"]?.post?.["x-required-scope"]).toBe("realtime.read");
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining([
        "StreamEvent",
        "OeeEvent",
        "StopEvent",
        "ResetEvent",
        "RealtimeTicket",
      ]),
    );
    expect(JSON.stringify(doc.components.schemas.StreamEvent)).toContain("operator.assigned");
  });
});

describe("WebSocket and tickets", () => {
  it("gives the same events over a WebSocket opened with a one-use ticket", async () => {
    const p = await plant(1, { timezone: "Asia/Tokyo" });
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const issued = await api(p.co.key, "/v1/realtime/tickets", { method: "POST" });
    expect(issued.status).toBe(201);
    const { ticket, company } = (await issued.json()) as {
      ticket: string;
      expiresAt: string;
      company: { id: number; timezone: string };
    };
    // The company's zone comes with the ticket (a board writes times in the plant's clock).
    expect(company).toEqual({ id: p.co.id, name: p.co.name, timezone: "Asia/Tokyo" });
    const sub = await ws(`/v1/realtime/${m.id}/events?ticket=${encodeURIComponent(ticket)}`, {});
    await threeWrites(p, m.id, 3);
    const events = await sub.waitFor((e) => WRITE_TYPES.includes(e.type), 3);
    expect(events.map((e) => e.type)).toEqual(WRITE_TYPES);
    strictlyIncreasing(sub.events);
    // One use.
    const again = await call(`/v1/realtime/${m.id}/events?ticket=${encodeURIComponent(ticket)}`);
    expect(again.status).toBe(401);
  });

  it("a WebSocket resumes with ?since= like SSE", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const witness = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    await threeWrites(p, m.id, 4);
    const events = await witness.waitFor((e) => WRITE_TYPES.includes(e.type), 3);
    const from = events[0]?.id ?? 0;
    const sub = await ws(`/v1/realtime/${m.id}/events?since=${from}`, { "x-api-key": p.co.key });
    const missed = witness.events.filter((e) => e.id > from);
    expect((await sub.waitFor(() => true, missed.length)).slice(0, missed.length)).toEqual(missed);
  });

  it("a ticket works for its own company only, only on the events paths, and not with a key", async () => {
    const a = await plant();
    const b = await plant();
    const mb = b.machines[0];
    const ma = a.machines[0];
    if (!mb || !ma) throw new Error("no machine");
    const ticketOf = async () => {
      const res = await api(a.co.key, "/v1/realtime/tickets", { method: "POST" });
      return ((await res.json()) as { ticket: string }).ticket;
    };
    expect((await call(`/v1/realtime/${mb.id}/events?ticket=${await ticketOf()}`)).status).toBe(
      404,
    );
    expect((await call(`/v1/realtime/${ma.id}?ticket=${await ticketOf()}`)).status).toBe(401);
    expect(
      (await api(a.co.key, `/v1/realtime/${ma.id}/events?ticket=${await ticketOf()}`)).status,
    ).toBe(401);
    expect((await call(`/v1/realtime/${ma.id}/events?ticket=1.forged`)).status).toBe(401);
    const readerless = await createKey(a.co.id, ["realtime.write"]);
    expect((await api(readerless, "/v1/realtime/tickets", { method: "POST" })).status).toBe(403);
  });
});
