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
 * Files: this one is the object (appends, forwarding, the live figures, the alarm);
 * `./subscribers.ts` the SSE and WebSocket subscribers (paged catch-up, closing with their
 * credential), `./event-log.ts` a stream's log in SQLite, `./outbox.ts` the durable
 * forwarding to the company stream, `./connection-leases.ts` the `k:` objects' leases and
 * revocation, `./tickets.ts` the `t:` objects' tickets.
 */

import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { LeaseTable } from "./connection-leases";
import { EventLog } from "./event-log";
import type { LeaseDecision, MachineEventsRpc } from "./events-rpc";
import { computeLive, type LiveFigures, LiveState } from "./live";
import type { LiveLogChange } from "./live-inputs";
import { companyStream, type EventInput, type EventKind, type LiveEvent } from "./names";
import { type Delivery, Outbox } from "./outbox";
import { type Holder, Subscribers } from "./subscribers";
import { type TicketPrincipal, TicketTable } from "./tickets";

/** Production and OEE are recomputed at most this often (ms). */
export const TICK_MS = 1_000;

export class MachineEvents extends DurableObject<Env> implements MachineEventsRpc {
  /** The stream's log (`m:` and `c:` objects). */
  private readonly log: EventLog;
  /** The stream's SSE and WebSocket subscribers (`./subscribers.ts`). */
  private readonly subscribers: Subscribers;
  /** Forwarding to the company stream: durable, in order, in batches (a machine stream only). */
  private forwarding: Outbox<EventInput> | null = null;
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
    this.subscribers = new Subscribers(ctx, env, this.log);
    // Forwards left unsent by a failure or a restart go out now.
    const forwarding = this.companyForwarding();
    if (forwarding && forwarding.pending() > 0) ctx.waitUntil(forwarding.drain());
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
   * @param delivery the sender's outbox and each event's sequence number there: an event at
   *   or below the last number stored from that sender was stored already (a resent batch
   *   whose answer was lost) and is skipped, in the same synchronous step as the appends.
   * @returns the id of the last one (0 for none).
   */
  async appendMany(stream: string, inputs: EventInput[], delivery?: Delivery): Promise<number> {
    this.log.remember(stream);
    let fresh = inputs;
    if (delivery) {
      const key = `delivered:${delivery.source}`;
      const upTo = Number(this.log.meta(key) ?? 0);
      fresh = inputs.filter((_, i) => (delivery.seqs[i] ?? 0) > upTo);
      this.log.setMeta(key, String(Math.max(upTo, ...delivery.seqs)));
    }
    let last = 0;
    for (const input of fresh) last = this.record(input).id;
    if (fresh.map((i) => this.live.note(i.type)).includes(true)) this.markDirty();
    return last;
  }

  /** Synchronous append + fan-out (see the file comment: nothing interleaves). */
  private record(input: EventInput): LiveEvent {
    const { event, body } = this.log.append(input);
    this.fanOut(event, body);
    const forwarding = this.companyForwarding();
    if (forwarding) {
      // Staged with the append (one storage step), sent after: a failed or interrupted
      // forward is retried from storage, never dropped.
      forwarding.stage({ ...input, machineEventId: event.id });
      this.ctx.waitUntil(forwarding.drain());
    }
    return event;
  }

  /**
   * The company stream's forwarding outbox (a machine stream only; null otherwise): in the
   * machine's order, one call in flight at a time; a failure is logged and retried (the
   * object's alarm covers an eviction meanwhile).
   */
  private companyForwarding(): Outbox<EventInput> | null {
    if (this.forwarding) return this.forwarding;
    const name = this.log.stream();
    if (name?.kind !== "machine") return null;
    const company = companyStream(name.companyId);
    const stub = this.env.MACHINE_EVENTS.get(this.env.MACHINE_EVENTS.idFromName(company));
    this.forwarding = new Outbox<EventInput>(
      this.ctx.storage.sql,
      "forward_outbox",
      (batch, delivery) => stub.appendMany(company, batch, delivery),
      (error, retryAt) => {
        console.error(
          JSON.stringify({ level: "error", event: "company_stream_forward", error: String(error) }),
        );
        this.ctx.waitUntil(this.wakeBy(retryAt));
      },
    );
    return this.forwarding;
  }

  /** Sets the alarm to `at` unless it is set no later already. */
  private async wakeBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  private fanOut(event: LiveEvent, body: string): void {
    this.subscribers.fanOut(event, body);
  }

  /**
   * Subscribes a client: `GET /subscribe?since=<id>` with `Upgrade: websocket` for a
   * WebSocket, else a Server-Sent Events stream. Sends the missed events (or `reset`),
   * then the live ones. The lease headers name the credential's connection lease, released
   * when the connection ends; `x-closes-at` (ms) is when the credential expires (an access
   * token), at which the connection is closed. A credential revoked while this stream
   * served it gets 401.
   */
  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    this.log.remember(url.searchParams.get("stream") ?? "");
    const sinceText = url.searchParams.get("since");
    const since = sinceText === null ? null : Number(sinceText);
    const credentialId = request.headers.get("x-lease-credential");
    const leaseId = request.headers.get("x-lease-id");
    const closesAtText = request.headers.get("x-closes-at");
    const holder: Holder = {
      lease: credentialId && leaseId ? { credentialId, leaseId } : null,
      credentialId,
      closesAt: closesAtText === null ? null : Number(closesAtText),
    };
    if (this.subscribers.isRevoked(credentialId)) {
      return Response.json({ detail: "Not authenticated" }, { status: 401 });
    }
    const websocket = request.headers.get("upgrade")?.toLowerCase() === "websocket";
    const response = this.subscribers.open(since, holder, websocket);
    if (holder.closesAt !== null) await this.scheduleClosing();
    return response;
  }

  /**
   * Closes every connection of a revoked credential on this stream, and refuses it from
   * now on.
   *
   * @returns how many connections were closed.
   */
  async closeCredential(stream: string, credentialId: string): Promise<number> {
    this.log.remember(stream);
    return this.subscribers.closeCredential(credentialId);
  }

  /** Wakes the object (its alarm) when the next connection's credential expires. */
  private async scheduleClosing(): Promise<void> {
    const at = this.subscribers.nextClosing();
    if (at !== null) await this.wakeBy(at);
  }

  override async webSocketMessage(): Promise<void> {
    // Subscribers only listen; "ping" is answered without waking the object.
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    await this.subscribers.closed(ws, code);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.subscribers.failed(ws);
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
    // The alarm also ends connections whose access token expired (`scheduleClosing`), and
    // retries forwards that failed.
    this.subscribers.closeExpired(Date.now());
    const forwarding = this.companyForwarding();
    if (forwarding && forwarding.pending() > 0) this.ctx.waitUntil(forwarding.drain());
    this.ticking ??= this.tick().finally(() => {
      this.ticking = null;
    });
    await this.ticking;
    await this.scheduleClosing();
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
  async acquire(
    leaseId: string,
    limit: number,
    ttlMs: number,
    stream = "",
  ): Promise<LeaseDecision> {
    return this.leases().acquire(leaseId, limit, ttlMs, stream);
  }

  /**
   * Marks the credential revoked (every later `acquire` is refused) and names the streams
   * that hold its open connections, for the caller to close them.
   */
  async revoke(): Promise<string[]> {
    return this.leases().revoke();
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
