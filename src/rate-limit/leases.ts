/**
 * Admissions leased by one isolate from a bucket's `RateLimiter` object, so a busy credential
 * does not pay a Durable Object round trip per request: the object counts a lease's admissions
 * when it grants them (the quota stays exact); one not used within `LEASE_MS` is dropped. The
 * size follows the isolate's own recent rate, at most `LEASE_SHARE` of the quota and
 * `MAX_LEASE`; a client sending one request at a time gets leases of 1.
 * docs/api-guide.md ("Rate limits", leases).
 */

/** How long a leased admission may wait in the isolate, ms. */
export const LEASE_MS = 1_000;
/** Largest share of a policy's quota one lease may hold. */
const LEASE_SHARE = 0.01;
/** Largest lease, whatever the quota. */
export const MAX_LEASE = 100;
/** Window over which an isolate measures a bucket's request rate, ms. */
const RATE_WINDOW_MS = 250;
/** Most buckets one isolate keeps leases for (a guard against unbounded growth). */
const MAX_BUCKETS = 10_000;

/** A policy: `requests` per `periodSeconds`. */
interface Policy {
  requests: number;
  periodSeconds: number;
}

/** Admissions the object counted at one instant and the isolate has not used yet. */
interface Grant {
  count: number;
  /** ms: used by then or dropped. */
  expiresAt: number;
  /** The object's remaining count right after this grant. */
  remaining: number;
  /** ms: when the object's window admits more, as of this grant. */
  resetAt: number;
}

interface BucketState {
  /** Policy the grants were made under (`requests/periodSeconds`). */
  policy: string;
  /** Oldest first. */
  grants: Grant[];
  /** Requests of the bucket this isolate saw in the current rate window, and the one before. */
  windowStart: number;
  inWindow: number;
  previousWindow: number;
  /** Asks for a lease (more than one admission) waiting for the object's answer. */
  leasing: number;
}

/** What a leased admission tells the response's `RateLimit` header field. */
interface LeasedAdmission {
  remaining: number;
  resetAfterMs: number;
}

const policyKey = (p: Policy) => `${p.requests}/${p.periodSeconds}`;

/**
 * Per-isolate leases, by bucket. One instance serves the whole isolate; the
 * clock is passed in so that tests can drive it.
 */
export class AdmissionLeases {
  private readonly buckets = new Map<string, BucketState>();

  private state(bucket: string, policy: Policy, now: number): BucketState {
    const key = policyKey(policy);
    let state = this.buckets.get(bucket);
    if (!state || state.policy !== key) {
      // A changed policy (a new key limit) drops the old grants: they were sized for it.
      if (!state && this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
      state = {
        policy: key,
        grants: [],
        windowStart: now,
        inWindow: 0,
        previousWindow: 0,
        leasing: 0,
      };
      this.buckets.set(bucket, state);
    }
    if (now - state.windowStart >= RATE_WINDOW_MS) {
      const adjacent = now - state.windowStart < 2 * RATE_WINDOW_MS;
      state.previousWindow = adjacent ? state.inWindow : 0;
      state.inWindow = 0;
      state.windowStart = now;
    }
    return state;
  }

  /**
   * Takes one leased admission for a request, when this isolate holds one; counts the
   * request for the bucket's rate either way.
   *
   * @param bucket the bucket's object name.
   * @param policy the request's policy (grants made under another policy are dropped).
   * @param now ms since the epoch.
   * @returns the admission with the remaining count and the reset time to show, or null
   *   when the request must ask the object (`ask`, then `answered`).
   */
  take(bucket: string, policy: Policy, now: number): LeasedAdmission | null {
    const state = this.state(bucket, policy, now);
    state.inWindow += 1;
    // Grants are in the order made, each expiring LEASE_MS after it: drop used and expired
    // ones from the front (no new array per request).
    let grant = state.grants[0];
    while (grant && (grant.count <= 0 || grant.expiresAt <= now)) {
      state.grants.shift();
      grant = state.grants[0];
    }
    if (!grant) return null;
    grant.count -= 1;
    const held = state.grants.reduce((sum, g) => sum + g.count, 0);
    const latest = state.grants[state.grants.length - 1] ?? grant;
    return {
      remaining: latest.remaining + held,
      resetAfterMs: Math.max(1, latest.resetAt - now),
    };
  }

  /**
   * How many admissions a request that found no lease asks the object for: this
   * isolate's request rate for the bucket over the last quarter second (what a lease
   * of `LEASE_MS` would likely serve, at a quarter of the risk), at least 1, at most
   * `LEASE_SHARE` of the quota and `MAX_LEASE`; and 1 while another ask for a lease
   * is waiting (so that a burst does not lease once per request). Every `ask` is
   * followed by one `answered` with the same size.
   */
  ask(bucket: string, policy: Policy, now: number): number {
    const state = this.state(bucket, policy, now);
    if (state.leasing > 0) return 1;
    const cap = Math.max(1, Math.min(MAX_LEASE, Math.floor(policy.requests * LEASE_SHARE)));
    const size = Math.max(1, Math.min(cap, Math.max(state.inWindow, state.previousWindow)));
    if (size > 1) state.leasing += 1;
    return size;
  }

  /**
   * Records the object's answer to an `ask`: one admission is the request's own; the
   * rest are kept for `LEASE_MS`.
   *
   * @param asked what `ask` returned.
   * @param answer admissions the object counted (0 when it refused), its remaining count
   *   after them and ms until its window admits more; null when it could not be reached.
   */
  answered(
    bucket: string,
    policy: Policy,
    now: number,
    asked: number,
    answer: { granted: number; remaining: number; resetAfterMs: number } | null,
  ): void {
    const state = this.state(bucket, policy, now);
    if (asked > 1) state.leasing = Math.max(0, state.leasing - 1);
    if (!answer || answer.granted <= 1) return;
    state.grants.push({
      count: answer.granted - 1,
      expiresAt: now + LEASE_MS,
      remaining: answer.remaining,
      resetAt: now + answer.resetAfterMs,
    });
  }

  /** Admissions this isolate holds for a bucket now (counted in the `RateLimit` field's remaining). */
  held(bucket: string, now: number): number {
    const state = this.buckets.get(bucket);
    if (!state) return 0;
    return state.grants.filter((g) => g.expiresAt > now).reduce((sum, g) => sum + g.count, 0);
  }
}
