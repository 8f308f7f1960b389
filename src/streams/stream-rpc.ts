/**
 * What the stream-events Durable Objects answer over RPC, one interface per class: the
 * machine stream (`MachineStream`), the company stream (`CompanyStream`), a credential's
 * connection leases (`ConnectionLeases`) and a company's browser tickets
 * (`RealtimeTickets`). Each class implements its interface; stubs are typed by it, so their
 * callers do not import the classes (no import cycle, type-only ones included).
 */
import type { LiveLogChange } from "./live-inputs";
import type { StreamEvent, StreamEventInput } from "./names";
import type { StreamDelivery } from "./stream-outbox";
import type { TicketPrincipal } from "./tickets";

/** The answer of `acquire`. */
export type LeaseDecision = { ok: true } | { ok: false; revoked: boolean; retryAfterMs: number };

/**
 * What both kinds of stream answer (src/streams/stream-core.ts documents each); their
 * `fetch` opens a subscription (`GET /subscribe`).
 */
export interface StreamRpc extends Rpc.DurableObjectBranded {
  /**
   * Appends events in order, each once per `delivery` sequence number (a resent batch adds
   * nothing twice); returns the last id (0 for none).
   */
  appendMany(
    stream: string,
    inputs: StreamEventInput[],
    delivery?: StreamDelivery,
  ): Promise<number>;
  /**
   * Closes every connection of a revoked credential on this stream; returns how many, and
   * whether `restart` must follow (it closed WebSockets).
   */
  closeCredential(
    stream: string,
    credentialId: string,
  ): Promise<{ closed: number; restart: boolean }>;
  /** Ends the object's instance after `closeCredential` asked for it (the call then fails). */
  restart(): Promise<void>;
}

/** Why a stream object ends its instance after a revocation (in the error its caller gets). */
export const RESTART_REASON = "closing revoked connections";

/** Why a stream object ends its instance after closing WebSockets whose access token expired. */
export const EXPIRY_RESTART_REASON = "closing expired connections";

/** The RPC methods of `MachineStream` (src/streams/machine-stream.ts documents each). */
export interface MachineStreamRpc extends StreamRpc {
  /** Appends one event to the stream and fans it out; returns it with its id. */
  append(stream: string, input: StreamEventInput): Promise<StreamEvent>;
  /**
   * The stream's live figures may have changed (with `change`: the logs a realtime flush
   * wrote): recompute them (at most once a second).
   */
  nudge(stream: string, change?: LiveLogChange): Promise<void>;
}

/** The RPC methods of `CompanyStream` (src/streams/company-stream.ts): a stream's. */
export type CompanyStreamRpc = StreamRpc;

/** The RPC methods of `ConnectionLeases` (src/streams/lease-object.ts). */
export interface ConnectionLeasesRpc extends Rpc.DurableObjectBranded {
  /** Opens a connection lease under `limit` for `stream`, or says when to retry (or revoked). */
  acquire(leaseId: string, limit: number, ttlMs: number, stream?: string): Promise<LeaseDecision>;
  /** Marks the credential revoked; returns the streams holding its open connections. */
  revoke(): Promise<string[]>;
  /** Renews open leases (the SSE heartbeat). */
  renew(leaseIds: string[], ttlMs: number): Promise<void>;
  /** Ends a lease (the connection closed). */
  release(leaseId: string): Promise<void>;
}

/** The RPC methods of `RealtimeTickets` (src/streams/ticket-object.ts). */
export interface RealtimeTicketsRpc extends Rpc.DurableObjectBranded {
  /** Stores a one-use ticket for its time to live. */
  issueTicket(ticket: string, principal: TicketPrincipal): Promise<void>;
  /** Takes a ticket once, while valid; null otherwise. */
  redeemTicket(ticket: string): Promise<TicketPrincipal | null>;
}
