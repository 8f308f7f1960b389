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
 * a realtime flush that changed logs marks them dirty; at most once per `TICK_MS` it
 * recomputes the running shift's production and OEE and emits what changed, and an alarm at
 * the instance's end emits `shift.ended` (with the shift's final OEE) and `shift.started`.
 *
 * Files: this one is the object (subscribers, fan-out, forwarding, the live figures);
 * `./event-log.ts` a stream's log in SQLite, `./connection-leases.ts` the `k:` objects'
 * leases, `./tickets.ts` the `t:` objects' tickets.
 */

import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import {
  connectionCounter,
  HEARTBEAT_MS,
  LeaseTable,
  releaseLease,
  SSE_LEASE_MS,
  type SubscriberLease,
} from "./connection-leases";
import { EventLog } from "./event-log";
import type { LeaseDecision, MachineEventsRpc } from "./events-rpc";
import { computeLive, type LiveFigures, LiveState } from "./live";
import type { LiveLogChange } from "./live-inputs";
import { companyStream, type EventInput, type EventKind, type LiveEvent } from "./names";
import { OrderedBatches } from "./ordered-batches";
import { type TicketPrincipal, TicketTable } from "./tickets";

/** Production and OEE are recomputed at most this often (ms). */
export const TICK_MS = 1_000;
/** Chunks a slow SSE subscriber may have queued before it is dropped (it resumes by id). */
const MAX_QUEUED_CHUNKS = 5_000;

interface SseSubscriber {
  controller: ReadableStreamDefaultController<Uint8Array>;
  lease: SubscriberLease | null;
}

const encoder = new TextEncoder();

/** One event in the Server-Sent Events framing (an `id`, an `event` name, one `data` line). */
export function sseFrame(event: LiveEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class MachineEvents extends DurableObject<Env> implements MachineEventsRpc {
  /** The stream's log (`m:` and `c:` objects). */
  private readonly log: EventLog;
  private readonly sse = new Set<SseSubscriber>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Forwarding to the company stream, in order, in batches (a machine stream only). */
  private forwarding: OrderedBatches<EventInput> | null = null;
  /** The figures are marked dirty and a tick is scheduled (in memory: an eviction forgets it). */
  private tickPending = false;
  /** One live computation at a time, and what it keeps for it (`./live.ts`). */
  private ticking: Promise<void> | null = null;
  private readonly live = new LiveState({
    get: () => this.log.meta("liveInputs"),
    set: (text) => this.log.setMeta("liveInputs", text),
  });
  /** The leases of a `k:` object, and the tickets of a `t:` object (created on first use). */
  private leaseTable: LeaseTable | null = null;
  private ticketTable: TicketTable | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.log = new EventLog(ctx.storage.sql);
    // A client that pings keeps its socket alive without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
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
    this.log.remember(stream);
    const event = this.record(input);
    if (this.live.note(input.type)) this.markDirty();
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
    this.log.remember(stream);
    let last = 0;
    for (const input of inputs) last = this.record(input).id;
    if (inputs.map((i) => this.live.note(i.type)).includes(true)) this.markDirty();
    return last;
  }

  /** Synchronous append + fan-out (see the file comment: nothing interleaves). */
  private record(input: EventInput): LiveEvent {
    const { event, body } = this.log.append(input);
    this.fanOut(event, body);
    const name = this.log.stream();
    if (name?.kind === "machine") {
      this.forwarding ??= this.companyForwarding(companyStream(name.companyId));
      this.ctx.waitUntil(this.forwarding.push({ ...input, machineEventId: event.id }));
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

  /**
   * Subscribes a client: `GET /subscribe?since=<id>` with `Upgrade: websocket` for a
   * WebSocket, else a Server-Sent Events stream. Sends the missed events (or `reset`),
   * then the live ones. The lease headers name the credential's connection lease, released
   * when the connection ends.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.log.remember(url.searchParams.get("stream") ?? "");
    const sinceText = url.searchParams.get("since");
    const since = sinceText === null ? null : Number(sinceText);
    const credentialId = request.headers.get("x-lease-credential");
    const leaseId = request.headers.get("x-lease-id");
    const lease = credentialId && leaseId ? { credentialId, leaseId } : null;
    const backlog = since === null ? [] : this.log.missed(since);
    const first = backlog ?? [this.log.resetEvent()];

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
    const name = this.log.stream();
    if (name?.kind !== "machine") return;
    // Marked and scheduled already: a busy machine's every write would otherwise cost a
    // storage write and two alarm calls.
    if (this.tickPending) return;
    this.tickPending = true;
    this.log.setMeta("dirty", "1");
    void this.scheduleTick();
  }

  /**
   * Marks the figures stale (a `count` sample arrived, a realtime flush wrote logs: `change`)
   * without an event of its own: the next tick emits `production` and `oee` when they changed.
   */
  async nudge(stream: string, change?: LiveLogChange): Promise<void> {
    this.log.remember(stream);
    if (change) this.live.tell(change);
    this.markDirty();
  }

  private async scheduleTick(): Promise<void> {
    const lastTick = Number(this.log.meta("lastTick") ?? 0);
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
    const name = this.log.stream();
    if (name?.kind !== "machine") return;
    const now = Date.now();
    this.log.setMeta("lastTick", String(now));
    this.tickPending = false;
    this.log.setMeta("dirty", null);
    const previous = this.log.meta("figures");
    const result = await computeLive(this.env, name.companyId, name.machineId, {
      previous: previous === null ? null : (JSON.parse(previous) as LiveFigures),
      state: this.live,
      now,
    });
    for (const event of result.events) this.record({ ...event, machineId: name.machineId });
    this.log.setMeta("figures", result.figures === null ? null : JSON.stringify(result.figures));
    // Dirty again meanwhile: another tick; else wake at the instance's end.
    const next =
      this.log.meta("dirty") === "1" ? Date.now() + TICK_MS : (result.figures?.shift.endMs ?? null);
    if (next !== null) await this.ctx.storage.setAlarm(Math.max(next, Date.now() + TICK_MS));
  }

  // ---- connection leases (k: objects): see ./connection-leases.ts --------------------

  /**
   * Takes a connection lease when fewer than `limit` are open.
   *
   * @param leaseId a fresh id.
   * @param limit most open connections of the credential.
   * @param ttlMs how long the lease lives unless renewed.
   * @returns ok, or the ms until the oldest lease may expire.
   */
  async acquire(leaseId: string, limit: number, ttlMs: number): Promise<LeaseDecision> {
    return this.leases().acquire(leaseId, limit, ttlMs);
  }

  /** Renews open leases (the SSE heartbeat). */
  async renew(leaseIds: string[], ttlMs: number): Promise<void> {
    return this.leases().renew(leaseIds, ttlMs);
  }

  /** Ends a lease (the connection closed). */
  async release(leaseId: string): Promise<void> {
    return this.leases().release(leaseId);
  }

  /** Open leases now (tests and diagnostics). */
  async openLeases(): Promise<number> {
    return this.leases().openLeases();
  }

  private leases(): LeaseTable {
    this.leaseTable ??= new LeaseTable(this.ctx.storage.sql);
    return this.leaseTable;
  }

  // ---- tickets (t: objects): see ./tickets.ts ----------------------------------------
  /** Stores a ticket (by its hash) for `TICKET_TTL_MS`. */
  async issueTicket(ticket: string, principal: TicketPrincipal): Promise<void> {
    return this.tickets().issueTicket(ticket, principal);
  }

  /** Takes a ticket: its principal once, while valid; null when unknown, used or expired. */
  async redeemTicket(ticket: string): Promise<TicketPrincipal | null> {
    return this.tickets().redeemTicket(ticket);
  }

  private tickets(): TicketTable {
    this.ticketTable ??= new TicketTable(this.ctx.storage.sql);
    return this.ticketTable;
  }
}

export type { EventKind };
