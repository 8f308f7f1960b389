/**
 * The live-events Durable Object (`MachineEvents`): one class, four kinds of objects,
 * told apart by their name (`./names.ts`):
 *
 * - `m:<companyId>:<machineId>`: a machine's event stream;
 * - `c:<companyId>`: the company's stream (every machine's events, with ids of its own);
 * - `k:<credentialId>`: the open connections of one credential (the connection limit);
 * - `t:<companyId>`: the company's browser tickets (one use, 60 s).
 *
 * A stream keeps its events in SQLite (`events`, id = a strictly increasing integer, never
 * reused: the newest row is never pruned, so `max(id) + 1` only grows), at least the last
 * `KEEP_EVENTS` and every event of the last `KEEP_MS`, plus the latest payload of each kind
 * of state (`state`) for the `reset` event. Appending an event and fanning it out to the
 * subscribers happen in one synchronous step, and a new subscriber's replay (every event
 * after its `since`) and its registration happen in another, so no event can fall between
 * the replay and the live ones: a client that resumes gets exactly what it missed.
 *
 * Subscribers: Server-Sent Events streams (held in memory: a stream's response lives as
 * long as the object does, and a heartbeat comment goes out every `HEARTBEAT_MS`), and
 * WebSockets accepted through the Hibernation API (`ctx.acceptWebSocket`), which cost
 * nothing while idle: the object may be evicted between events and the sockets stay open.
 *
 * A machine stream also computes the live figures (`./live.ts`): a `count` sample, a stop,
 * a realtime write marks it dirty; at most once per `TICK_MS` it recomputes the running
 * shift's production and OEE and emits what changed, and an alarm at the instance's end
 * emits `shift.ended` (with the shift's final OEE) and `shift.started`.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { computeLive, type LiveFigures } from "./live";
import {
  companyStream,
  type EventInput,
  type EventKind,
  type LiveEvent,
  parseStreamName,
  STATE_KEY_OF,
  type StreamName,
} from "./names";
import { OrderedBatches } from "./ordered-batches";

/** Events kept at least (whatever their age). */
export const KEEP_EVENTS = 10_000;
/** Age (ms) under which events are kept (whatever their number). */
export const KEEP_MS = 24 * 3_600_000;
/** A comment line to every Server-Sent Events subscriber this often (ms). */
export const HEARTBEAT_MS = 15_000;
/** Production and OEE are recomputed at most this often (ms). */
export const TICK_MS = 1_000;
/** Chunks a slow SSE subscriber may have queued before it is dropped (it resumes by id). */
const MAX_QUEUED_CHUNKS = 5_000;
/** How long an SSE connection's lease lives without a heartbeat renewing it (ms). */
export const SSE_LEASE_MS = 3 * HEARTBEAT_MS;
/** How long a WebSocket's lease lives (ms): released on close; this bounds a lost close. */
export const WS_LEASE_MS = 24 * 3_600_000;
/** How long a ticket is valid (ms). */
export const TICKET_TTL_MS = 60_000;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY, at INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, data TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, expires INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS tickets (hash TEXT PRIMARY KEY, principal TEXT NOT NULL, expires INTEGER NOT NULL);
`;

/** Who a subscriber is, for its connection lease. */
export interface SubscriberLease {
  /** The `k:` object counting the credential's connections. */
  credentialId: string;
  /** This connection's lease id. */
  leaseId: string;
}

/** The answer of `acquire`. */
export type LeaseDecision = { ok: true } | { ok: false; retryAfterMs: number };

/** A principal as a ticket keeps it (scopes as an array). */
export interface TicketPrincipal {
  companyId: number;
  companyName: string;
  timezone: string;
  credentialId: string;
  kind: "api_key" | "access_token";
  scopes: string[];
  rateLimit: { requests: number; periodSeconds: number } | null;
}

interface SseSubscriber {
  controller: ReadableStreamDefaultController<Uint8Array>;
  lease: SubscriberLease | null;
}

const encoder = new TextEncoder();

/**
 * Whether an event makes the stream recompute the live figures. Not the figures' own
 * events, and not the realtime writes': a write reaches the figures only through the
 * production logs in D1, which its object writes behind it (up to 2 s later), and the
 * object nudges the stream after each flush that wrote logs. Recomputing on every write
 * instead cost a busy plant one metrics report per machine and second, for figures read
 * from logs that did not show the write yet.
 */
function marksFiguresStale(type: EventInput["type"]): boolean {
  return !(
    type === "production" ||
    type === "oee" ||
    type === "segment.changed" ||
    type === "segment.updated" ||
    type === "operator.assigned"
  );
}

/** One event in the Server-Sent Events framing (an `id`, an `event` name, one `data` line). */
export function sseFrame(event: LiveEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** SHA-256 of a ticket, hex: the object keeps hashes, not tickets. */
async function hashTicket(ticket: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(ticket));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export class MachineEvents extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private readonly sse = new Set<SseSubscriber>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Forwarding to the company stream, in order, in batches (a machine stream only). */
  private forwarding: OrderedBatches<EventInput> | null = null;
  /** This object's name, parsed (undefined: not read yet). */
  private streamName: StreamName | null | undefined = undefined;
  /** The newest event id (null: not read yet); only `record` adds events. */
  private lastId: number | null = null;
  /** The figures are marked dirty and a tick is scheduled (in memory: an eviction forgets it). */
  private tickPending = false;
  /** One live computation at a time. */
  private ticking: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(SCHEMA);
    // A client that pings keeps its socket alive without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** Keeps this object's name (a stream needs it to forward and to compute; ids hide it). */
  private remember(stream: string): void {
    if (stream === "" || this.stream() !== null) return;
    if (this.meta("name") === null) this.setMeta("name", stream);
    this.streamName = undefined;
  }

  private stream(): StreamName | null {
    this.streamName ??= parseStreamName(this.meta("name") ?? "");
    return this.streamName;
  }

  private meta(key: string): string | null {
    const row = this.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)
      .toArray()[0];
    return row?.value ?? null;
  }

  private setMeta(key: string, value: string | null): void {
    if (value === null) this.sql.exec("DELETE FROM meta WHERE key = ?", key);
    else this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** The newest id (0 when the stream never had an event) and the oldest id kept. */
  private bounds(): { last: number; first: number | null } {
    const row = this.sql
      .exec<{ last: number | null; first: number | null }>(
        "SELECT max(id) AS last, min(id) AS first FROM events",
      )
      .toArray()[0];
    return { last: row?.last ?? 0, first: row?.first ?? null };
  }

  /**
   * Appends one event to this stream, fans it out to every subscriber, keeps the state for
   * `reset`, and (on a machine stream) forwards it to the company's stream.
   *
   * @param stream this object's name (`m:...` or `c:...`), kept on first use.
   * @param input the event's kind and payload; `at` defaults to now (ms).
   * @returns the event as stored, with its id.
   */
  async append(stream: string, input: EventInput): Promise<LiveEvent> {
    this.remember(stream);
    const event = this.record(input);
    if (marksFiguresStale(input.type)) this.markDirty();
    return event;
  }

  /**
   * Appends events in order, as `append` does each (a publisher's batch: one call for the
   * events that queued while its previous call was in flight).
   *
   * @param stream this object's name, kept on first use.
   * @param inputs the events, in order.
   * @returns the id of the last one (0 for none).
   */
  async appendMany(stream: string, inputs: EventInput[]): Promise<number> {
    this.remember(stream);
    let last = 0;
    for (const input of inputs) last = this.record(input).id;
    if (inputs.some((i) => marksFiguresStale(i.type))) this.markDirty();
    return last;
  }

  /** Synchronous append + fan-out (see the file comment: nothing interleaves). */
  private record(input: EventInput): LiveEvent {
    const now = Date.now();
    this.lastId ??= this.bounds().last;
    const id = this.lastId + 1;
    const name = this.stream();
    const event: LiveEvent = {
      id,
      type: input.type,
      at: new Date(input.at ?? now).toISOString(),
      machineId: input.machineId,
      ...(input.machineEventId !== undefined ? { machineEventId: input.machineEventId } : {}),
      data: input.data,
    };
    const body = JSON.stringify(event);
    this.sql.exec(
      "INSERT INTO events (id, at, type, body) VALUES (?, ?, ?, ?)",
      id,
      now,
      input.type,
      body,
    );
    this.lastId = id;
    this.keepState(input);
    if (id % 100 === 0) {
      this.sql.exec("DELETE FROM events WHERE id <= ? AND at < ?", id - KEEP_EVENTS, now - KEEP_MS);
    }
    this.fanOut(event, body);
    if (name?.kind === "machine") {
      this.forwarding ??= this.companyForwarding(companyStream(name.companyId));
      this.ctx.waitUntil(this.forwarding.push({ ...input, machineEventId: id }));
    }
    return event;
  }

  /** The company stream's batches: in the machine's order, one call in flight at a time. */
  private companyForwarding(company: string): OrderedBatches<EventInput> {
    const stub = this.env.MACHINE_EVENTS.get(this.env.MACHINE_EVENTS.idFromName(company));
    return new OrderedBatches<EventInput>(
      (batch) => stub.appendMany(company, batch),
      (error, batch) =>
        console.error(
          JSON.stringify({
            level: "error",
            event: "company_stream_forward",
            events: batch.length,
            error: String(error),
          }),
        ),
    );
  }

  /** The latest payload of each kind of state, for `reset`. */
  private keepState(input: EventInput): void {
    const key = STATE_KEY_OF[input.type];
    if (key === undefined) return;
    const scoped = `${input.machineId}:${key}`;
    if (key === "operators") {
      const row = this.sql
        .exec<{ data: string }>("SELECT data FROM state WHERE key = ?", scoped)
        .toArray()[0];
      const list = row ? (JSON.parse(row.data) as { operator: { id: number } }[]) : [];
      const added = input.data as { operator: { id: number } };
      const next = [...list.filter((o) => o.operator.id !== added.operator.id), added];
      this.sql.exec(
        "INSERT OR REPLACE INTO state (key, data) VALUES (?, ?)",
        scoped,
        JSON.stringify(next),
      );
      return;
    }
    if (input.type === "shift.started") {
      // A new shift has its own crew, segments and figures.
      this.sql.exec(
        "DELETE FROM state WHERE key IN (?, ?, ?)",
        `${input.machineId}:operators`,
        `${input.machineId}:production`,
        `${input.machineId}:oee`,
      );
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO state (key, data) VALUES (?, ?)",
      scoped,
      JSON.stringify(input.data),
    );
  }

  private fanOut(event: LiveEvent, body: string): void {
    if (this.sse.size > 0) {
      const chunk = encoder.encode(sseFrame(event));
      for (const sub of this.sse) this.send(sub, chunk);
    }
    for (const ws of this.ctx.getWebSockets()) {
      try {
        ws.send(body);
      } catch {
        // A socket closing now: its close handler releases it.
      }
    }
  }

  private send(sub: SseSubscriber, chunk: Uint8Array): void {
    try {
      if ((sub.controller.desiredSize ?? 0) < -MAX_QUEUED_CHUNKS) {
        // Too slow to keep up: dropped, it resumes with Last-Event-ID and misses nothing.
        sub.controller.close();
        this.dropSse(sub);
        return;
      }
      sub.controller.enqueue(chunk);
    } catch {
      this.dropSse(sub);
    }
  }

  private dropSse(sub: SseSubscriber): void {
    if (!this.sse.delete(sub)) return;
    if (sub.lease) this.ctx.waitUntil(releaseLease(this.env, sub.lease));
    if (this.sse.size === 0 && this.heartbeat !== undefined) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  }

  /** The events after `since` in order, or null when the log no longer reaches back there. */
  private missed(since: number): LiveEvent[] | null {
    const { last, first } = this.bounds();
    if (since > last) return null; // an id this stream never gave
    if (since === last) return [];
    if (first === null || since < first - 1) return null;
    return this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE id > ? ORDER BY id", since)
      .toArray()
      .map((r) => JSON.parse(r.body) as LiveEvent);
  }

  /** The `reset` event: the newest id and the current state; the client goes on from there. */
  private resetEvent(): LiveEvent {
    const { last } = this.bounds();
    const state: Record<string, unknown> = {};
    for (const row of this.sql
      .exec<{ key: string; data: string }>("SELECT key, data FROM state ORDER BY key")
      .toArray()) {
      const [machine, key] = row.key.split(":");
      if (machine === undefined || key === undefined) continue;
      const byMachine = (state[machine] ?? {}) as Record<string, unknown>;
      byMachine[key] = JSON.parse(row.data) as unknown;
      state[machine] = byMachine;
    }
    const name = this.stream();
    return {
      id: last,
      type: "reset",
      at: new Date().toISOString(),
      machineId: name?.kind === "machine" ? name.machineId : null,
      data: { lastEventId: last, machines: state },
    };
  }

  /**
   * Subscribes a client: `GET /subscribe?since=<id>` with `Upgrade: websocket` for a
   * WebSocket, else a Server-Sent Events stream. Sends the missed events (or `reset`),
   * then the live ones. The lease headers name the credential's connection lease, released
   * when the connection ends.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.remember(url.searchParams.get("stream") ?? "");
    const sinceText = url.searchParams.get("since");
    const since = sinceText === null ? null : Number(sinceText);
    const credentialId = request.headers.get("x-lease-credential");
    const leaseId = request.headers.get("x-lease-id");
    const lease = credentialId && leaseId ? { credentialId, leaseId } : null;
    const backlog = since === null ? [] : this.missed(since);
    const first = backlog ?? [this.resetEvent()];

    if (request.headers.get("upgrade")?.toLowerCase() === "websocket") {
      const pair = new WebSocketPair();
      const [client, server] = [pair[0], pair[1]];
      this.ctx.acceptWebSocket(server);
      server.serializeAttachment(lease);
      for (const event of first) server.send(JSON.stringify(event));
      return new Response(null, { status: 101, webSocket: client });
    }

    let sub: SseSubscriber | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        sub = { controller, lease };
        controller.enqueue(encoder.encode(`retry: 2000\n: connected\n\n`));
        for (const event of first) controller.enqueue(encoder.encode(sseFrame(event)));
        this.sse.add(sub);
      },
      cancel: () => {
        if (sub) this.dropSse(sub);
      },
    });
    this.heartbeat ??= setInterval(() => this.beat(), HEARTBEAT_MS);
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
      },
    });
  }

  /** The heartbeat: a comment to every SSE subscriber, and their leases renewed. */
  private beat(): void {
    const chunk = encoder.encode(": heartbeat\n\n");
    const renew = new Map<string, string[]>();
    for (const sub of [...this.sse]) {
      this.send(sub, chunk);
      if (sub.lease && this.sse.has(sub)) {
        const ids = renew.get(sub.lease.credentialId) ?? [];
        ids.push(sub.lease.leaseId);
        renew.set(sub.lease.credentialId, ids);
      }
    }
    for (const [credentialId, ids] of renew) {
      this.ctx.waitUntil(
        connectionCounter(this.env, credentialId)
          .renew(ids, SSE_LEASE_MS)
          .catch(() => undefined),
      );
    }
  }

  override async webSocketMessage(): Promise<void> {
    // Subscribers only listen; "ping" is answered without waking the object.
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    const lease = ws.deserializeAttachment() as SubscriberLease | null;
    if (lease) await releaseLease(this.env, lease);
    try {
      ws.close(code === 1005 ? 1000 : code, "closed");
    } catch {
      // already closed
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    const lease = ws.deserializeAttachment() as SubscriberLease | null;
    if (lease) await releaseLease(this.env, lease);
  }

  // ---- live figures (machine streams) -----------------------------------------------

  /** Something changed: the live figures are recomputed within `TICK_MS`. */
  private markDirty(): void {
    const name = this.stream();
    if (name?.kind !== "machine") return;
    // Marked and scheduled already: a busy machine's every write would otherwise cost a
    // storage write and two alarm calls.
    if (this.tickPending) return;
    this.tickPending = true;
    this.setMeta("dirty", "1");
    void this.scheduleTick();
  }

  /**
   * Marks the figures stale (a `count` sample arrived, for example) without an event of its
   * own: the next tick emits `production` and `oee` when they changed.
   */
  async nudge(stream: string): Promise<void> {
    this.remember(stream);
    this.markDirty();
  }

  private async scheduleTick(): Promise<void> {
    const lastTick = Number(this.meta("lastTick") ?? 0);
    const at = Math.max(Date.now(), lastTick + TICK_MS);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    this.ticking ??= this.tick().finally(() => {
      this.ticking = null;
    });
    await this.ticking;
  }

  private async tick(): Promise<void> {
    const name = this.stream();
    if (name?.kind !== "machine") return;
    const now = Date.now();
    this.setMeta("lastTick", String(now));
    this.tickPending = false;
    this.setMeta("dirty", null);
    const previous = this.meta("figures");
    const result = await computeLive(this.env, name.companyId, name.machineId, {
      previous: previous === null ? null : (JSON.parse(previous) as LiveFigures),
      now,
    });
    for (const event of result.events) this.record({ ...event, machineId: name.machineId });
    this.setMeta("figures", result.figures === null ? null : JSON.stringify(result.figures));
    // Dirty again meanwhile: another tick; else wake at the instance's end.
    const next =
      this.meta("dirty") === "1" ? Date.now() + TICK_MS : (result.figures?.shift.endMs ?? null);
    if (next !== null) await this.ctx.storage.setAlarm(Math.max(next, Date.now() + TICK_MS));
  }

  // ---- connection leases (k: objects) -------------------------------------------------

  /**
   * Takes a connection lease when fewer than `limit` are open.
   *
   * @param leaseId a fresh id.
   * @param limit most open connections of the credential.
   * @param ttlMs how long the lease lives unless renewed.
   * @returns ok, or the ms until the oldest lease may expire.
   */
  async acquire(leaseId: string, limit: number, ttlMs: number): Promise<LeaseDecision> {
    const now = Date.now();
    this.sql.exec("DELETE FROM leases WHERE expires <= ?", now);
    const open = this.sql
      .exec<{ n: number; soonest: number | null }>(
        "SELECT count(*) AS n, min(expires) AS soonest FROM leases",
      )
      .toArray()[0];
    if ((open?.n ?? 0) >= limit) {
      return { ok: false, retryAfterMs: Math.min(HEARTBEAT_MS, (open?.soonest ?? now) - now) };
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO leases (id, expires) VALUES (?, ?)",
      leaseId,
      now + ttlMs,
    );
    return { ok: true };
  }

  /** Renews open leases (the SSE heartbeat). */
  async renew(leaseIds: string[], ttlMs: number): Promise<void> {
    const expires = Date.now() + ttlMs;
    for (const id of leaseIds)
      this.sql.exec("UPDATE leases SET expires = ? WHERE id = ?", expires, id);
  }

  /** Ends a lease (the connection closed). */
  async release(leaseId: string): Promise<void> {
    this.sql.exec("DELETE FROM leases WHERE id = ?", leaseId);
  }

  /** Open leases now (tests and diagnostics). */
  async openLeases(): Promise<number> {
    this.sql.exec("DELETE FROM leases WHERE expires <= ?", Date.now());
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM leases").one().n;
  }

  // ---- tickets (t: objects) -----------------------------------------------------------

  /** Stores a ticket (by its hash) for `TICKET_TTL_MS`. */
  async issueTicket(ticket: string, principal: TicketPrincipal): Promise<void> {
    const now = Date.now();
    this.sql.exec("DELETE FROM tickets WHERE expires <= ?", now);
    this.sql.exec(
      "INSERT INTO tickets (hash, principal, expires) VALUES (?, ?, ?)",
      await hashTicket(ticket),
      JSON.stringify(principal),
      now + TICKET_TTL_MS,
    );
  }

  /** Takes a ticket: its principal once, while valid; null when unknown, used or expired. */
  async redeemTicket(ticket: string): Promise<TicketPrincipal | null> {
    const hash = await hashTicket(ticket);
    const row = this.sql
      .exec<{ principal: string; expires: number }>(
        "DELETE FROM tickets WHERE hash = ? RETURNING principal, expires",
        hash,
      )
      .toArray()[0];
    if (!row || row.expires <= Date.now()) return null;
    return JSON.parse(row.principal) as TicketPrincipal;
  }
}

/** The `k:` object counting a credential's connections. */
export function connectionCounter(
  env: Pick<Env, "MACHINE_EVENTS">,
  credentialId: string,
): DurableObjectStub<MachineEvents> {
  return env.MACHINE_EVENTS.get(env.MACHINE_EVENTS.idFromName(`k:${credentialId}`));
}

async function releaseLease(
  env: Pick<Env, "MACHINE_EVENTS">,
  lease: SubscriberLease,
): Promise<void> {
  try {
    await connectionCounter(env, lease.credentialId).release(lease.leaseId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", event: "lease_release", error: String(error) }));
  }
}

export type { EventKind };
