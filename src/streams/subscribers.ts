/**
 * The subscribers of one stream object: SSE streams held in memory and WebSockets accepted
 * through the Hibernation API; catching up with the log a page (`REPLAY_PAGE`) at a time, the
 * last page and the switch to live delivery in one synchronous step so nothing falls between;
 * and connections ending with their credential (`closeCredential` on revocation,
 * `closeExpired` at a token's expiry). docs/stream-events.md.
 */
import type { Env } from "../env";
import {
  connectionCounter,
  HEARTBEAT_MS,
  releaseLease,
  SSE_LEASE_MS,
  type SubscriberLease,
} from "./connection-leases";
import type { EventLog } from "./event-log";
import type { StreamEvent } from "./names";

/** Events read from the log per page when a subscriber catches up. */
const REPLAY_PAGE = 500;
/** Chunks a slow SSE subscriber may have queued before it is dropped (it resumes by id). */
const MAX_QUEUED_CHUNKS = 5_000;
/** WebSocket close code when the credential was revoked or expired (policy violation). */
const WS_CLOSE_CREDENTIAL = 1008;
/** WebSocket close code when the stream restarts ("Service Restart": reconnect, resume by id). */
const WS_CLOSE_RESTART = 1012;

/** Who holds a connection and until when. */
export interface Holder {
  /** The credential's connection lease (null when the subscribe request named none). */
  lease: SubscriberLease | null;
  /** The credential (`key:<id>`, `token:<company>:<sub>`), or null when unknown. */
  credentialId: string | null;
  /** When the connection ends (ms since the epoch), or null for never (API keys). */
  closesAt: number | null;
}

interface SseSubscriber {
  controller: ReadableStreamDefaultController<Uint8Array>;
  holder: Holder;
  /** The last event id sent while catching up; null once live. */
  cursor: number | null;
}

const encoder = new TextEncoder();

/** One event in the Server-Sent Events framing (an `id`, an `event` name, one `data` line). */
function sseFrame(event: StreamEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A WebSocket's holder (attachments written before holders existed were a bare lease). */
function holderOf(ws: WebSocket): Holder {
  const attached = ws.deserializeAttachment() as Holder | SubscriberLease | null;
  if (attached === null) return { lease: null, credentialId: null, closesAt: null };
  if ("leaseId" in attached) {
    return { lease: attached, credentialId: attached.credentialId, closesAt: null };
  }
  return attached;
}

export class Subscribers {
  private readonly sse = new Set<SseSubscriber>();
  /** WebSockets catching up, with the last id sent to each. */
  private readonly catchingUp = new Map<WebSocket, number>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly log: EventLog,
  ) {}

  /** True when the credential was revoked while this stream served it. */
  isRevoked(credentialId: string | null): boolean {
    return credentialId !== null && this.log.meta(`revoked:${credentialId}`) !== null;
  }

  /**
   * Opens a subscription: a WebSocket when `websocket`, else an SSE response. Sends `reset`
   * first when `since` is further back than the log reaches (or an id it never gave), then
   * the missed events (paged), then the live ones.
   */
  open(since: number | null, holder: Holder, websocket: boolean): Response {
    const reach = since === null ? "live" : this.log.reaches(since);
    const cursor = reach === "ok" ? since : null;
    const first = reach === "reset" ? [this.log.resetEvent()] : [];
    if (websocket) {
      const pair = new WebSocketPair();
      const [client, server] = [pair[0], pair[1]];
      this.ctx.acceptWebSocket(server);
      server.serializeAttachment(holder);
      for (const event of first) server.send(JSON.stringify(event));
      if (cursor !== null) {
        this.catchingUp.set(server, cursor);
        this.ctx.waitUntil(this.replayWs(server));
      }
      return new Response(null, { status: 101, webSocket: client });
    }
    let sub: SseSubscriber | undefined;
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        sub = { controller, holder, cursor };
        controller.enqueue(encoder.encode(`retry: 2000\n: connected\n\n`));
        for (const event of first) controller.enqueue(encoder.encode(sseFrame(event)));
        this.sse.add(sub);
      },
      pull: () => {
        if (sub) this.replaySsePage(sub);
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

  /**
   * The next page of the log after the subscriber's cursor (synchronous: a short page and
   * the switch to live happen in one step). Null when the log no longer reaches back there
   * (pruned meanwhile): the caller sends `reset` and goes live.
   */
  private nextPage(cursor: number): { events: StreamEvent[]; done: boolean } | null {
    const events = this.log.after(cursor, REPLAY_PAGE);
    if (events === null) return null;
    return { events, done: events.length < REPLAY_PAGE };
  }

  private replaySsePage(sub: SseSubscriber): void {
    if (sub.cursor === null) return;
    const page = this.nextPage(sub.cursor);
    try {
      if (page === null) {
        sub.cursor = null;
        sub.controller.enqueue(encoder.encode(sseFrame(this.log.resetEvent())));
        return;
      }
      if (page.events.length > 0) {
        sub.controller.enqueue(encoder.encode(page.events.map(sseFrame).join("")));
      }
      sub.cursor = page.done ? null : (page.events.at(-1)?.id ?? sub.cursor);
    } catch {
      this.dropSse(sub);
    }
  }

  private async replayWs(ws: WebSocket): Promise<void> {
    for (;;) {
      const cursor = this.catchingUp.get(ws);
      if (cursor === undefined) return; // closed meanwhile
      const page = this.nextPage(cursor);
      try {
        if (page === null) {
          this.catchingUp.delete(ws);
          ws.send(JSON.stringify(this.log.resetEvent()));
          return;
        }
        for (const event of page.events) ws.send(JSON.stringify(event));
      } catch {
        this.catchingUp.delete(ws);
        return;
      }
      if (page.done) {
        this.catchingUp.delete(ws);
        return;
      }
      this.catchingUp.set(ws, page.events.at(-1)?.id ?? cursor);
      // Let the object's other work (appends, other subscribers) run between pages.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  }

  /** Sends one stored event to every live subscriber (those catching up read it from the log). */
  fanOut(event: StreamEvent, body: string): void {
    if (this.sse.size > 0) {
      const chunk = encoder.encode(sseFrame(event));
      for (const sub of this.sse) if (sub.cursor === null) this.send(sub, chunk);
    }
    for (const ws of this.ctx.getWebSockets()) {
      if (this.catchingUp.has(ws)) continue;
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

  private dropSse(sub: SseSubscriber): Promise<void> | undefined {
    if (!this.sse.delete(sub)) return undefined;
    const release = sub.holder.lease ? releaseLease(this.env, sub.holder.lease) : undefined;
    if (release) this.ctx.waitUntil(release);
    if (this.sse.size === 0 && this.heartbeat !== undefined) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
    return release;
  }

  /** The heartbeat: a comment to every SSE subscriber, and their leases renewed. */
  private beat(): void {
    const chunk = encoder.encode(": heartbeat\n\n");
    const renew = new Map<string, string[]>();
    for (const sub of [...this.sse]) {
      this.send(sub, chunk);
      const lease = sub.holder.lease;
      if (lease && this.sse.has(sub)) {
        const ids = renew.get(lease.credentialId) ?? [];
        ids.push(lease.leaseId);
        renew.set(lease.credentialId, ids);
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

  /**
   * Ends the connections that match, an SSE stream with a comment saying why.
   *
   * @returns how many were closed, and how many of them were WebSockets.
   */
  private closeWhere(
    match: (holder: Holder) => boolean,
    reason: string,
    code = WS_CLOSE_CREDENTIAL,
  ): { closed: number; webSockets: number; released: Promise<void>[] } {
    let closed = 0;
    let webSockets = 0;
    const released: Promise<void>[] = [];
    for (const sub of [...this.sse]) {
      if (!match(sub.holder)) continue;
      try {
        sub.controller.enqueue(encoder.encode(`: ${reason}\n\n`));
        sub.controller.close();
      } catch {
        // already closed by its client
      }
      const release = this.dropSse(sub);
      if (release) released.push(release);
      closed += 1;
    }
    for (const ws of this.ctx.getWebSockets()) {
      const holder = holderOf(ws);
      // A socket closing already (by us or its client) is not closed twice: its lease goes
      // with its close handler, or went with the close that began it.
      if (ws.readyState !== WebSocket.OPEN || !match(holder)) continue;
      this.catchingUp.delete(ws);
      try {
        ws.close(code, reason);
      } catch {
        // already closing
      }
      if (holder.lease) {
        const release = releaseLease(this.env, holder.lease);
        released.push(release);
        this.ctx.waitUntil(release);
      }
      closed += 1;
      webSockets += 1;
    }
    return { closed, webSockets, released };
  }

  /**
   * Ends every connection of a credential and refuses it from now on (it was revoked).
   *
   * @returns how many connections were closed, and how many of them were WebSockets.
   */
  closeCredential(credentialId: string): { closed: number; webSockets: number } {
    this.log.setMeta(`revoked:${credentialId}`, String(Date.now()));
    const { closed, webSockets } = this.closeWhere(
      (h) => h.credentialId === credentialId,
      "credential revoked",
    );
    return { closed, webSockets };
  }

  /**
   * Ends every connection left, for a restart of the object: a WebSocket with code 1012 and
   * an SSE stream with a comment, so that their clients reconnect and resume from their last
   * event id (nothing is lost: the log has it); their leases released before it returns (a
   * restart would drop the releases still in flight, and a lease lives 24 h).
   */
  async closeAllForRestart(): Promise<void> {
    const { released } = this.closeWhere(
      () => true,
      "stream restarting: reconnect",
      WS_CLOSE_RESTART,
    );
    await Promise.all(released);
  }

  /**
   * Ends the connections whose credential has expired by `now` (ms): an SSE stream with the
   * comment `: credential expired`, a WebSocket with code 1008 and that reason.
   *
   * @returns how many were closed, and how many of them were WebSockets.
   */
  closeExpired(now: number): { closed: number; webSockets: number } {
    const { closed, webSockets } = this.closeWhere(
      (h) => h.closesAt !== null && h.closesAt <= now,
      "credential expired",
    );
    return { closed, webSockets };
  }

  /**
   * The earliest time an open connection must close (ms), or null when none ever must. A
   * WebSocket closing already (its close frame sent) is not waited for again.
   */
  nextClosing(): number | null {
    let next: number | null = null;
    const consider = (at: number | null) => {
      if (at !== null && (next === null || at < next)) next = at;
    };
    for (const sub of this.sse) consider(sub.holder.closesAt);
    for (const ws of this.ctx.getWebSockets()) {
      if (ws.readyState === WebSocket.OPEN) consider(holderOf(ws).closesAt);
    }
    return next;
  }

  /** A WebSocket closed by its client: its lease is released. */
  async closed(ws: WebSocket, code: number): Promise<void> {
    this.catchingUp.delete(ws);
    const { lease } = holderOf(ws);
    if (lease) await releaseLease(this.env, lease);
    try {
      ws.close(code === 1005 ? 1000 : code, "closed");
    } catch {
      // already closed
    }
  }

  /** A WebSocket failed: its lease is released. */
  async failed(ws: WebSocket): Promise<void> {
    this.catchingUp.delete(ws);
    const { lease } = holderOf(ws);
    if (lease) await releaseLease(this.env, lease);
  }
}
