/**
 * What a `MachineEvents` object answers over RPC: the stream methods (machine and
 * company streams), the connection leases (`k:` objects) and the tickets (`t:`
 * objects). `MachineEvents` implements it; stubs are typed by it, so their callers do
 * not import the class (no import cycle, type-only ones included).
 */
import type { LiveLogChange } from "./live-inputs";
import type { EventInput, LiveEvent } from "./names";
import type { Delivery } from "./outbox";
import type { TicketPrincipal } from "./tickets";

/** The answer of `acquire`. */
export type LeaseDecision = { ok: true } | { ok: false; revoked: boolean; retryAfterMs: number };

/** The RPC methods of `MachineEvents` (src/events/machine-events.ts documents each). */
export interface MachineEventsRpc extends Rpc.DurableObjectBranded {
  /** Appends one event to the stream and fans it out; returns it with its id. */
  append(stream: string, input: EventInput): Promise<LiveEvent>;
  /**
   * Appends events in order, each once per `delivery` sequence number (a resent batch adds
   * nothing twice); returns the last id (0 for none).
   */
  appendMany(stream: string, inputs: EventInput[], delivery?: Delivery): Promise<number>;
  /**
   * The stream's live figures may have changed (with `change`: the logs a realtime flush
   * wrote): recompute them (at most once a second).
   */
  nudge(stream: string, change?: LiveLogChange): Promise<void>;
  /** Opens a connection lease under `limit` for `stream`, or says when to retry (or revoked). */
  acquire(leaseId: string, limit: number, ttlMs: number, stream?: string): Promise<LeaseDecision>;
  /** Marks the credential revoked; returns the streams holding its open connections. */
  revoke(): Promise<string[]>;
  /** Closes every connection of a revoked credential on this stream; returns how many. */
  closeCredential(stream: string, credentialId: string): Promise<number>;
  /** Renews open leases (the SSE heartbeat). */
  renew(leaseIds: string[], ttlMs: number): Promise<void>;
  /** Ends a lease (the connection closed). */
  release(leaseId: string): Promise<void>;
  /** Open leases now. */
  openLeases(): Promise<number>;
  /** Stores a one-use ticket for its time to live. */
  issueTicket(ticket: string, principal: TicketPrincipal): Promise<void>;
  /** Takes a ticket once, while valid; null otherwise. */
  redeemTicket(ticket: string): Promise<TicketPrincipal | null>;
}
