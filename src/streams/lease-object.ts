/**
 * A credential's open event connections (`ConnectionLeases`, one object per credential,
 * named `k:<credentialId>`): the connection limit and revocation, kept by a `LeaseTable`
 * (`./connection-leases.ts`, which documents the rules).
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject } from "../db/object-migrations";
import type { Env } from "../env";
import { LeaseTable } from "./connection-leases";
import { LEASE_MIGRATIONS } from "./lease-migrations";
import type { ConnectionLeasesRpc, LeaseDecision } from "./stream-rpc";

export class ConnectionLeases extends DurableObject<Env> implements ConnectionLeasesRpc {
  private readonly leases: LeaseTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, LEASE_MIGRATIONS);
    this.leases = new LeaseTable(ctx.storage.sql);
  }

  /**
   * Takes a connection lease when fewer than `limit` are open.
   *
   * @param leaseId a fresh id.
   * @param limit most open connections of the credential.
   * @param ttlMs how long the lease lives unless renewed.
   * @param stream the stream the connection is on (to close it on revocation).
   * @returns ok, or the ms until the oldest lease may expire.
   */
  async acquire(
    leaseId: string,
    limit: number,
    ttlMs: number,
    stream = "",
  ): Promise<LeaseDecision> {
    return this.leases.acquire(leaseId, limit, ttlMs, stream);
  }

  /**
   * Marks the credential revoked (every later `acquire` is refused) and names the streams
   * that hold its open connections, for the caller to close them.
   */
  async revoke(): Promise<string[]> {
    return this.leases.revoke();
  }

  /** Renews open leases (the SSE heartbeat). */
  async renew(leaseIds: string[], ttlMs: number): Promise<void> {
    return this.leases.renew(leaseIds, ttlMs);
  }

  /** Ends a lease (the connection closed). */
  async release(leaseId: string): Promise<void> {
    return this.leases.release(leaseId);
  }
}
