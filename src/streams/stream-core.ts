/**
 * What a machine stream and a company stream share, by composition (each class holds one
 * `StreamCore`): the log in SQLite (./event-log.ts), the subscribers (./subscribers.ts),
 * appending with fan-out in one synchronous step, replay and registration of a new subscriber
 * in another (so a resuming client gets exactly what it missed), deduplication of resent
 * batches, and closing connections of a revoked or expired credential. docs/stream-events.md.
 */
import type { Env } from "../env";
import { EventLog } from "./event-log";
import type { StreamEvent, StreamEventInput } from "./names";
import type { StreamDelivery } from "./stream-outbox";
import { EXPIRY_RESTART_REASON, RESTART_REASON } from "./stream-rpc";
import { type Holder, Subscribers } from "./subscribers";

/** Most senders whose last sequence number `fresh` keeps in memory (then it starts over). */
const MAX_SENDERS_KEPT = 10_000;

export class StreamCore {
  /** The stream's log. */
  readonly log: EventLog;
  /** The stream's SSE and WebSocket subscribers. */
  readonly subscribers: Subscribers;
  /**
   * The last sequence number stored per sender (`fresh`), as in the log's `meta`: read once
   * per sender, since only this object writes it (a company stream hears from every machine).
   */
  private readonly delivered = new Map<string, number>();
  /** A revocation closed WebSockets here: the next `restart` ends the instance. */
  private restartDue = false;

  constructor(
    private readonly ctx: DurableObjectState,
    env: Env,
  ) {
    this.log = new EventLog(ctx.storage.sql);
    this.subscribers = new Subscribers(ctx, env, this.log);
    // A client that pings keeps its socket alive without waking the object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** Synchronous append + fan-out (see the file comment: nothing interleaves). */
  record(input: StreamEventInput): StreamEvent {
    const { event, body } = this.log.append(input);
    this.subscribers.fanOut(event, body);
    return event;
  }

  /**
   * The events of a batch not stored yet: an event at or below the last sequence number
   * stored from its sender was stored already (a resent batch whose answer was lost).
   * Called in the same synchronous step as the appends.
   */
  fresh(inputs: StreamEventInput[], delivery?: StreamDelivery): StreamEventInput[] {
    if (!delivery) return inputs;
    const key = `delivered:${delivery.source}`;
    let upTo = this.delivered.get(key);
    if (upTo === undefined) {
      upTo = Number(this.log.meta(key) ?? 0);
      if (this.delivered.size >= MAX_SENDERS_KEPT) this.delivered.clear();
    }
    const next = Math.max(upTo, ...delivery.seqs);
    if (next !== upTo) this.log.setMeta(key, String(next));
    this.delivered.set(key, next);
    return inputs.filter((_, i) => (delivery.seqs[i] ?? 0) > upTo);
  }

  /**
   * Subscribes a client: `GET /subscribe?stream=<name>&since=<id>` with `Upgrade: websocket`
   * for a WebSocket, else a Server-Sent Events stream. Sends the missed events (or `reset`),
   * then the live ones. The lease headers name the credential's connection lease, released
   * when the connection ends; `x-closes-at` (ms) is when the credential expires (an access
   * token), at which the connection is closed. A credential revoked while this stream
   * served it gets 401.
   */
  async subscribe(request: Request): Promise<Response> {
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
   * now on. When WebSockets were among them, the object must then restart (`restart`, a
   * call of its own): the runtime lets a closed hibernatable WebSocket's TCP connection go
   * only when its object leaves memory (about 10 s after its last event, never while other
   * connections keep it busy), so without a restart the revoked client still sees its socket
   * open after the close frame, until its own close timeout. Before that, the object's
   * other connections are closed asking them to reconnect (`closeAllForRestart`).
   *
   * @returns how many connections were closed, and whether `restart` must follow.
   */
  async closeCredential(
    stream: string,
    credentialId: string,
  ): Promise<{ closed: number; restart: boolean }> {
    this.log.remember(stream);
    const { closed, webSockets } = this.subscribers.closeCredential(credentialId);
    if (webSockets === 0) return { closed, restart: false };
    await this.subscribers.closeAllForRestart();
    this.restartDue = true;
    return { closed, restart: true };
  }

  /**
   * Ends this instance when `closeCredential` asked for it (else does nothing): every
   * connection it still holds goes with it, its storage stays, the next call starts a new
   * instance. A call of its own, after `closeCredential` answered, so that what that call
   * wrote (the revocation) is stored first.
   *
   * @throws Error with `RESTART_REASON` when it restarts (the call that ends its instance
   *   cannot answer).
   */
  restart(): void {
    if (this.restartDue) this.ctx.abort(RESTART_REASON);
  }

  /**
   * Ends the connections whose access token expired by `now` (ms), at the instant SSE and
   * WebSocket alike: an SSE stream with `: credential expired`, a WebSocket with code 1008.
   * When WebSockets were among them, the instance must then end (`endInstance`), for the
   * reason `closeCredential` gives: the runtime lets a closed hibernatable WebSocket's TCP
   * connection go only when its object leaves memory, so a client would see its socket open
   * for 10 s or more after the close frame. Before that, the other connections are told to
   * reconnect (`closeAllForRestart`), and their leases released.
   *
   * @returns true when the instance must end now.
   */
  async closeExpired(now: number): Promise<boolean> {
    const { webSockets } = this.subscribers.closeExpired(now);
    if (webSockets === 0) return false;
    await this.subscribers.closeAllForRestart();
    return true;
  }

  /**
   * Ends this instance at once (after `closeExpired` asked for it): its connections go with
   * it, its storage stays, the next call or alarm starts a new instance.
   *
   * @throws Error with `EXPIRY_RESTART_REASON` (the event that ends its instance cannot finish).
   */
  endInstance(): never {
    this.ctx.abort(EXPIRY_RESTART_REASON);
    throw new Error(EXPIRY_RESTART_REASON);
  }

  /** Wakes the object (its alarm) when the next connection's credential expires. */
  async scheduleClosing(): Promise<void> {
    const at = this.subscribers.nextClosing();
    if (at !== null) await this.wakeBy(at);
  }

  /** Sets the alarm to `at` unless it is set no later already. */
  async wakeBy(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }
}
