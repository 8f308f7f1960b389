/**
 * Connection leases (the `k:<credentialId>` objects, class `ConnectionLeases`: ./lease-object.ts): how many event
 * connections a credential holds open. A lease expires unless renewed (an SSE connection's
 * heartbeat renews it), so a connection that vanished without a word frees its place.
 */

import { namedStub } from "../durable/named-stub";
import type { Env } from "../env";
import { logError } from "../observability/log";
import { DAY_MS } from "../time/units";
import { streamObject } from "./publish";
import { type ConnectionLeasesRpc, type LeaseDecision, RESTART_REASON } from "./stream-rpc";

/** A comment line to every Server-Sent Events subscriber this often (ms). */
export const HEARTBEAT_MS = 15_000;
/** How long an SSE connection's lease lives without a heartbeat renewing it (ms). */
export const SSE_LEASE_MS = 3 * HEARTBEAT_MS;
/** How long a WebSocket's lease lives (ms): released on close; this bounds a lost close. */
export const WS_LEASE_MS = DAY_MS;

/** Who a subscriber is, for its connection lease. */
export interface SubscriberLease {
  /** The `k:` object counting the credential's connections. */
  credentialId: string;
  /** This connection's lease id. */
  leaseId: string;
}

/** The `leases` table of a `k:` object. */
export class LeaseTable {
  /** @param sql the object's SQLite, migrated (./lease-migrations.ts). */
  constructor(private readonly sql: SqlStorage) {}

  /** True once the credential was revoked: it opens no connection again. */
  private revoked(): boolean {
    return this.sql.exec("SELECT 1 FROM revoked LIMIT 1").toArray().length > 0;
  }

  /**
   * Marks the credential revoked and names the streams holding its open connections.
   *
   * @returns the stream names (`m:...`, `c:...`), each once.
   */
  async revoke(): Promise<string[]> {
    if (!this.revoked()) this.sql.exec("INSERT INTO revoked (at) VALUES (?)", Date.now());
    return this.sql
      .exec<{ stream: string }>("SELECT DISTINCT stream FROM leases WHERE stream != ''")
      .toArray()
      .map((r) => r.stream);
  }

  /**
   * Takes a connection lease when fewer than `limit` are open.
   *
   * @param leaseId a fresh id.
   * @param limit most open connections of the credential.
   * @param ttlMs how long the lease lives unless renewed.
   * @param stream the stream the connection is for (to close it if the credential is revoked).
   * @returns ok; or the ms until the oldest lease may expire; or revoked.
   */
  async acquire(
    leaseId: string,
    limit: number,
    ttlMs: number,
    stream = "",
  ): Promise<LeaseDecision> {
    if (this.revoked()) return { ok: false, revoked: true, retryAfterMs: 0 };
    const now = Date.now();
    this.sql.exec("DELETE FROM leases WHERE expires <= ?", now);
    const open = this.sql
      .exec<{ n: number; soonest: number | null }>(
        "SELECT count(*) AS n, min(expires) AS soonest FROM leases",
      )
      .toArray()[0];
    if ((open?.n ?? 0) >= limit) {
      return {
        ok: false,
        revoked: false,
        retryAfterMs: Math.min(HEARTBEAT_MS, (open?.soonest ?? now) - now),
      };
    }
    this.sql.exec(
      "INSERT OR REPLACE INTO leases (id, expires, stream) VALUES (?, ?, ?)",
      leaseId,
      now + ttlMs,
      stream,
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
}

/** The `k:` object counting a credential's connections. */
export function connectionCounter(
  env: Pick<Env, "CONNECTION_LEASES">,
  credentialId: string,
): DurableObjectStub<ConnectionLeasesRpc> {
  return namedStub(env.CONNECTION_LEASES, `k:${credentialId}`);
}

export async function releaseLease(
  env: Pick<Env, "CONNECTION_LEASES">,
  lease: SubscriberLease,
): Promise<void> {
  try {
    await connectionCounter(env, lease.credentialId).release(lease.leaseId);
  } catch (error) {
    logError("lease_release", error);
  }
}

/**
 * Revokes a credential's event connections: from now on it opens none, and every stream
 * holding one of its open connections closes them (SSE and WebSocket); a stream that closed
 * WebSockets restarts, so that their sockets are gone before this returns, its other
 * connections told to reconnect (`StreamCore.closeCredential`).
 *
 * @param env the bindings of the leases and the streams.
 * @param credentialId `key:<id>` for an API key.
 * @returns how many connections were closed.
 * @throws when a stream cannot be reached (the caller logs it: the credential is already
 *   refused by authentication, and the streams refuse it once told).
 */
export async function closeCredentialConnections(
  env: Pick<Env, "CONNECTION_LEASES" | "MACHINE_STREAM" | "COMPANY_STREAM">,
  credentialId: string,
): Promise<number> {
  const streams = await connectionCounter(env, credentialId).revoke();
  const closed = await Promise.all(
    streams.map(async (stream) => {
      const object = streamObject(env, stream);
      const { closed, restart } = await object.closeCredential(stream, credentialId);
      if (restart) {
        // The call that ends the instance fails by design; any other failure is logged (the
        // sockets then go when the object leaves memory, as before).
        await object.restart().catch((error: unknown) => {
          if (String(error).includes(RESTART_REASON)) return;
          logError("stream_restart", error);
        });
      }
      return closed;
    }),
  );
  return closed.reduce((sum, n) => sum + n, 0);
}
