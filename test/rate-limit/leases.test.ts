/**
 * Admission leases of one isolate (src/rate-limit/leases.ts), driven with an
 * explicit clock and a fake object.
 */
import { describe, expect, it } from "vitest";
import { AdmissionLeases, LEASE_MS, MAX_LEASE } from "../../src/rate-limit/leases";

const policy = { requests: 1_000, periodSeconds: 60 };
const T = 1_800_000_000_000;

/** A fake object: admits up to its remaining count. */
function object(remaining: number) {
  return {
    hit(count: number) {
      const granted = Math.min(count, remaining);
      remaining -= granted;
      return { granted, remaining, resetAfterMs: 60_000 };
    },
    get remaining() {
      return remaining;
    },
  };
}

/** One request the way the middleware serves it; returns the size asked for (0 = leased). */
function serve(
  leases: AdmissionLeases,
  obj: ReturnType<typeof object>,
  now: number,
  p = policy,
): number {
  if (leases.take("b", p, now)) return 0;
  const asked = leases.ask("b", p, now);
  leases.answered("b", p, now, asked, obj.hit(asked));
  return asked;
}

describe("admission leases", () => {
  it("asks for one admission at a time while a client sends one request at a time", () => {
    const leases = new AdmissionLeases();
    const obj = object(1_000);
    const asked = [0, 1, 2, 3, 4].map((i) => serve(leases, obj, T + i * 1_000));
    expect(asked).toEqual([1, 1, 1, 1, 1]);
    expect(leases.held("b", T + 4_000)).toBe(0);
  });

  it("leases about the last quarter second's requests, at most 1 % of the quota", () => {
    const leases = new AdmissionLeases();
    const obj = object(1_000);
    const asked = Array.from({ length: 40 }, () => serve(leases, obj, T));
    // 1, 2, 3, 4 ... until 10 (1 % of 1,000), each lease serving the requests after it.
    expect(asked.filter((a) => a > 0)).toEqual([1, 2, 4, 8, 10, 10, 10]);
    // Every admission the object counted went to a request or is still held.
    expect(1_000 - obj.remaining).toBe(40 + leases.held("b", T));
  });

  it("never leases more than MAX_LEASE, whatever the quota", () => {
    const leases = new AdmissionLeases();
    const big = { requests: 10_000_000, periodSeconds: 60 };
    const obj = object(10_000_000);
    const asked = Array.from({ length: 1_000 }, () => serve(leases, obj, T, big));
    expect(Math.max(...asked)).toBe(MAX_LEASE);
  });

  it("asks for 1 while another ask for a lease waits for the object", () => {
    const leases = new AdmissionLeases();
    const obj = object(1_000);
    for (let i = 0; i < 20; i++) serve(leases, obj, T);
    while (leases.take("b", policy, T)); // use up what is held
    const first = leases.ask("b", policy, T);
    const second = leases.ask("b", policy, T);
    expect(first).toBeGreaterThan(1);
    expect(second).toBe(1);
    leases.answered("b", policy, T, second, obj.hit(second));
    leases.answered("b", policy, T, first, obj.hit(first));
    expect(leases.ask("b", policy, T)).toBeGreaterThan(1);
  });

  it("hands out each leased admission once, showing the object's count plus what is held", () => {
    const leases = new AdmissionLeases();
    leases.answered("b", policy, T, 4, { granted: 4, remaining: 900, resetAfterMs: 30_000 });
    expect(leases.held("b", T)).toBe(3);
    const shown = [1, 2, 3].map(() => leases.take("b", policy, T + 10));
    expect(shown.map((s) => s?.remaining)).toEqual([902, 901, 900]);
    expect(shown.every((s) => s?.resetAfterMs === 29_990)).toBe(true);
    expect(leases.take("b", policy, T + 10)).toBeNull();
  });

  it("keeps fewer than asked when the object grants fewer, and nothing on a refusal", () => {
    const leases = new AdmissionLeases();
    leases.answered("b", policy, T, 10, { granted: 3, remaining: 0, resetAfterMs: 5_000 });
    expect(leases.held("b", T)).toBe(2);
    const other = new AdmissionLeases();
    other.answered("b", policy, T, 10, { granted: 0, remaining: 0, resetAfterMs: 5_000 });
    other.answered("b", policy, T, 10, null);
    expect(other.held("b", T)).toBe(0);
  });

  it("drops leased admissions not used within LEASE_MS", () => {
    const leases = new AdmissionLeases();
    leases.answered("b", policy, T, 5, { granted: 5, remaining: 900, resetAfterMs: 30_000 });
    expect(leases.take("b", policy, T + LEASE_MS - 1)).not.toBeNull();
    expect(leases.take("b", policy, T + LEASE_MS)).toBeNull();
    expect(leases.held("b", T + LEASE_MS)).toBe(0);
  });

  it("drops admissions leased under another policy (the key's limit changed)", () => {
    const leases = new AdmissionLeases();
    leases.answered("b", policy, T, 5, { granted: 5, remaining: 900, resetAfterMs: 30_000 });
    expect(leases.take("b", { requests: 10, periodSeconds: 60 }, T)).toBeNull();
    expect(leases.take("b", policy, T)).toBeNull();
  });

  it("keeps buckets apart", () => {
    const leases = new AdmissionLeases();
    leases.answered("a", policy, T, 5, { granted: 5, remaining: 900, resetAfterMs: 30_000 });
    expect(leases.take("b", policy, T)).toBeNull();
    expect(leases.take("a", policy, T)).not.toBeNull();
  });
});
