/**
 * The per-credential rate-limit Durable Object: one per bucket (a credential, or a client
 * address for failed authentications, named by `bucketName`), an exact sliding-window log in
 * its SQLite storage: admitted when fewer than `requests` were admitted in the `periodSeconds`
 * before; rejections are not counted. `hit` reads and writes with the synchronous SQL API and
 * no `await` between, so the object's single thread serializes every caller; leased
 * admissions (`./leases.ts`) count at the instant they are granted. docs/api-guide.md ("Rate limits").
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject } from "../db/object-migrations";
import type { Env } from "../env";
import { SECOND_MS } from "../time/units";
import { RATE_LIMITER_MIGRATIONS } from "./rate-limiter-migrations";

/** Longest period a policy may have: one day (the operator API's maximum). */
const MAX_PERIOD_SECONDS = 86_400;

/** A rate-limit policy: `requests` per `periodSeconds`. */
export interface RateLimitPolicy {
  requests: number;
  periodSeconds: number;
}

/** The answer of `RateLimiter.hit`. */
export interface RateLimitDecision {
  /** True when the request is admitted (and counted). */
  allowed: boolean;
  /** Requests admitted and counted by this call: 1 to the count asked for; 0 when rejected. */
  granted: number;
  /** Requests still admitted in the current window, after these (0 when rejected). */
  remaining: number;
  /**
   * Milliseconds until the window admits more: when rejected, until the next
   * request would be admitted (always > 0); when admitted, until the oldest
   * counted request leaves the window.
   */
  resetAfterMs: number;
}

/**
 * The Durable Object name of a bucket: `credential:<credentialId>` or
 * `auth-failures:<client address>`. Deterministic, so every isolate reaches the
 * same object for the same bucket.
 *
 * @param kind what is counted.
 * @param id the credential id (`key:<id>`, `token:<company>:<sub>`) or the client address.
 */
export function bucketName(kind: "credential" | "auth-failures", id: string): string {
  return `${kind}:${id}`;
}

/** Throws RangeError unless the policy is a positive integer count over 1 s to 1 day. */
function assertPolicy(requests: number, periodSeconds: number): void {
  if (!Number.isSafeInteger(requests) || requests < 1) {
    throw new RangeError(`requests must be a positive integer, got ${requests}`);
  }
  if (
    !Number.isSafeInteger(periodSeconds) ||
    periodSeconds < 1 ||
    periodSeconds > MAX_PERIOD_SECONDS
  ) {
    throw new RangeError(`periodSeconds must be 1..${MAX_PERIOD_SECONDS}, got ${periodSeconds}`);
  }
}

export class RateLimiter extends DurableObject<Env> {
  /** Requests admitted within the window (the sum of `hits.n`), mirrored in memory. */
  private total = 0;
  /** Period of the last policy seen, in ms (persisted in `meta` for the alarm). */
  private periodMs = 0;
  private ready = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, RATE_LIMITER_MIGRATIONS);
  }

  /** Loads the running total (after eviction too), the tables made again after a `deleteAll`. */
  private ensureReady(): void {
    if (this.ready) return;
    migrateObject(this.ctx.storage, RATE_LIMITER_MIGRATIONS);
    const sql = this.ctx.storage.sql;
    const totalRow = sql
      .exec<{ total: number }>("SELECT COALESCE(SUM(n), 0) AS total FROM hits")
      .one();
    this.total = totalRow.total;
    const meta = sql
      .exec<{ period_ms: number }>("SELECT period_ms FROM meta WHERE id = 1")
      .toArray();
    this.periodMs = meta[0]?.period_ms ?? 0;
    this.ready = true;
  }

  /** Deletes the hits that left the window ending at `now`; keeps `total` in step. */
  private expire(now: number, periodMs: number): void {
    const cutoff = now - periodMs;
    for (const row of this.ctx.storage.sql.exec<{ n: number }>(
      "DELETE FROM hits WHERE ts <= ? RETURNING n",
      cutoff,
    )) {
      this.total -= row.n;
    }
  }

  /**
   * Counts up to `count` requests against a policy, as many as the policy admits now.
   *
   * Synchronous on purpose (see the file comment): the check and the write
   * cannot be interleaved by another request. More than one is asked for by a
   * busy isolate that leases admissions (`./leases.ts`); all are counted at this
   * instant.
   *
   * @param requests requests admitted per period (positive integer).
   * @param periodSeconds the period, 1 to 86,400 seconds.
   * @param count requests to admit at once (positive integer, default 1).
   * @returns the decision: how many were admitted (at least 1, or rejected), the requests
   *   remaining and when the window admits more.
   * @throws RangeError on an invalid policy or count.
   */
  hit(requests: number, periodSeconds: number, count = 1): RateLimitDecision {
    assertPolicy(requests, periodSeconds);
    if (!Number.isSafeInteger(count) || count < 1) {
      throw new RangeError(`count must be a positive integer, got ${count}`);
    }
    this.ensureReady();
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    const periodMs = periodSeconds * SECOND_MS;
    const wasIdle = this.total === 0;
    this.expire(now, periodMs);
    if (periodMs !== this.periodMs) {
      sql.exec(
        "INSERT INTO meta (id, period_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET period_ms = excluded.period_ms",
        periodMs,
      );
      this.periodMs = periodMs;
    }

    if (this.total < requests) {
      const granted = Math.min(count, requests - this.total);
      sql.exec(
        "INSERT INTO hits (ts, n) VALUES (?, ?) ON CONFLICT (ts) DO UPDATE SET n = n + excluded.n",
        now,
        granted,
      );
      this.total += granted;
      const oldest = sql.exec<{ ts: number }>("SELECT MIN(ts) AS ts FROM hits").one().ts;
      // The alarm only removes idle objects; one pending alarm is enough.
      if (wasIdle) void this.ctx.storage.setAlarm(now + periodMs);
      return {
        allowed: true,
        granted,
        remaining: requests - this.total,
        resetAfterMs: Math.max(1, oldest + periodMs - now),
      };
    }

    // Rejected: the next admission comes when enough of the oldest hits have
    // left the window to bring the count below the limit.
    const mustLeave = this.total - requests + 1;
    let left = 0;
    let admitAt = now + periodMs;
    for (const row of sql.exec<{ ts: number; n: number }>("SELECT ts, n FROM hits ORDER BY ts")) {
      left += row.n;
      if (left >= mustLeave) {
        admitAt = row.ts + periodMs;
        break;
      }
    }
    return { allowed: false, granted: 0, remaining: 0, resetAfterMs: Math.max(1, admitAt - now) };
  }

  /**
   * Alarm: removes the whole storage of an object whose window is empty, so
   * that credentials that went quiet do not keep storage forever; otherwise
   * looks again when the newest hit leaves the window.
   */
  override async alarm(): Promise<void> {
    this.ensureReady();
    const now = Date.now();
    if (this.periodMs > 0) this.expire(now, this.periodMs);
    if (this.total > 0) {
      const newest = this.ctx.storage.sql
        .exec<{ ts: number }>("SELECT MAX(ts) AS ts FROM hits")
        .one().ts;
      await this.ctx.storage.setAlarm(newest + this.periodMs);
      return;
    }
    await this.ctx.storage.deleteAll();
    this.ready = false;
    this.total = 0;
    this.periodMs = 0;
  }
}

/**
 * Counts requests of a bucket in its Durable Object (see `RateLimiter.hit`).
 *
 * The one place where the Worker reaches the limiter: the middleware goes
 * through it, and the fail-open test replaces it.
 *
 * @param namespace the `RATE_LIMITER` binding.
 * @param name the bucket's object name (see `bucketName`).
 * @param policy the policy to apply.
 * @param count requests to admit at once (default 1).
 * @returns the object's decision.
 * @throws whatever the Durable Object call throws (the caller fails open).
 */
export async function consume(
  namespace: DurableObjectNamespace<RateLimiter>,
  name: string,
  policy: RateLimitPolicy,
  count = 1,
): Promise<RateLimitDecision> {
  const stub = namespace.get(namespace.idFromName(name));
  return stub.hit(policy.requests, policy.periodSeconds, count);
}
