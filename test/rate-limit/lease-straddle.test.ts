/**
 * A lease that straddles the quota: the object grants only what is left, and the
 * isolate hands out only what was granted.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AdmissionLeases } from "../../src/rate-limit/leases";

const policy = { requests: 10, periodSeconds: 60 };

function freshLimiter() {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`straddle:${crypto.randomUUID()}`));
}

describe("a lease straddling the quota", () => {
  it("grants 2 of a lease of 5 when 8 of 10 are admitted, then refuses", async () => {
    const stub = freshLimiter();
    expect(await stub.hit(10, 60, 8)).toMatchObject({ allowed: true, granted: 8, remaining: 2 });
    expect(await stub.hit(10, 60, 5)).toMatchObject({ allowed: true, granted: 2, remaining: 0 });
    expect(await stub.hit(10, 60, 1)).toMatchObject({ allowed: false, granted: 0, remaining: 0 });
    const counted = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COALESCE(SUM(n), 0) AS n FROM hits").one().n,
    );
    expect(counted).toBe(10);
  });

  it("hands out only the granted admissions of a cut-short lease", async () => {
    const stub = freshLimiter();
    await stub.hit(10, 60, 8);
    const leases = new AdmissionLeases();
    const now = Date.now();
    const answer = await stub.hit(10, 60, 5);
    // The asking request uses one of the 2; the isolate keeps the other.
    leases.answered("b", policy, now, 5, answer);
    expect(leases.held("b", now)).toBe(1);
    expect(leases.take("b", policy, now)).toMatchObject({ remaining: 0 });
    expect(leases.take("b", policy, now)).toBeNull();
    expect(leases.held("b", now)).toBe(0);
  });
});
