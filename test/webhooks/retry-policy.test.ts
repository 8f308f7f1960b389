/**
 * The retry policy as pure functions (src/webhooks/retry-policy.ts): verdicts,
 * `Retry-After`, the waits inside a round and between rounds, the end.
 */
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  dueAtOf,
  maxRounds,
  nextRoundDelaySeconds,
  nextStep,
  parseRetryAfter,
  type RetryPolicy,
  stalledSince,
  verdictOf,
} from "../../src/webhooks/retry-policy";

/** The contract's policy with a fixed jitter draw. */
const policy = (random: number): RetryPolicy => ({ ...DEFAULT_RETRY_POLICY, random: () => random });

describe("verdictOf", () => {
  it.each([
    [200, "delivered"],
    [204, "delivered"],
    [299, "delivered"],
    [301, "failed"],
    [400, "failed"],
    [404, "failed"],
    [408, "retryable"],
    [429, "retryable"],
    [500, "retryable"],
    [503, "retryable"],
  ] as const)("%i is %s", (status, verdict) => {
    expect(verdictOf(status)).toBe(verdict);
  });
});

describe("parseRetryAfter", () => {
  const now = Date.UTC(2026, 0, 1, 12);
  it("reads seconds and HTTP dates, and nothing else", () => {
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter(" 7 ", now)).toBe(7);
    expect(parseRetryAfter(new Date(now + 4_500).toUTCString(), now)).toBe(4);
    expect(parseRetryAfter(new Date(now - 60_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeNull();
  });
});

describe("nextStep", () => {
  it("ends the delivery on a final verdict, counting the round", () => {
    expect(nextStep({ rounds: 2, attemptsInRound: 1 }, "delivered", null)).toEqual({
      kind: "done",
      status: "delivered",
      rounds: 3,
    });
    expect(nextStep({ rounds: 0, attemptsInRound: 0 }, "failed", null)).toEqual({
      kind: "done",
      status: "failed",
      rounds: 1,
    });
  });

  it("waits 1 s then 2 s inside a round, or a Retry-After of at most 10 s", () => {
    expect(nextStep({ rounds: 0, attemptsInRound: 0 }, "retryable", null)).toEqual({
      kind: "next-attempt",
      delaySeconds: 1,
      attemptsInRound: 1,
    });
    expect(nextStep({ rounds: 0, attemptsInRound: 1 }, "retryable", null)).toEqual({
      kind: "next-attempt",
      delaySeconds: 2,
      attemptsInRound: 2,
    });
    expect(nextStep({ rounds: 0, attemptsInRound: 0 }, "retryable", 10)).toEqual({
      kind: "next-attempt",
      delaySeconds: 10,
      attemptsInRound: 1,
    });
    expect(nextStep({ rounds: 0, attemptsInRound: 1 }, "retryable", 0)).toEqual({
      kind: "next-attempt",
      delaySeconds: 0,
      attemptsInRound: 2,
    });
  });

  it("ends the round after the 3rd attempt, or at once on a Retry-After over 10 s", () => {
    expect(nextStep({ rounds: 0, attemptsInRound: 2 }, "retryable", null, policy(0))).toEqual({
      kind: "next-round",
      rounds: 1,
      delaySeconds: 60,
    });
    expect(nextStep({ rounds: 1, attemptsInRound: 0 }, "retryable", 11, policy(0))).toEqual({
      kind: "next-round",
      rounds: 2,
      delaySeconds: 300,
    });
    expect(nextStep({ rounds: 0, attemptsInRound: 0 }, "retryable", 600, policy(0))).toEqual({
      kind: "next-round",
      rounds: 1,
      delaySeconds: 600,
    });
  });

  it("fails the delivery when the 8th round fails", () => {
    expect(maxRounds()).toBe(8);
    expect(nextStep({ rounds: 7, attemptsInRound: 2 }, "retryable", null)).toEqual({
      kind: "exhausted",
      rounds: 8,
    });
    expect(nextStep({ rounds: 7, attemptsInRound: 0 }, "retryable", 3600)).toEqual({
      kind: "exhausted",
      rounds: 8,
    });
  });
});

describe("nextRoundDelaySeconds", () => {
  it("follows 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h with up to 10 % jitter, capped at 24 h", () => {
    const bases = [60, 300, 1800, 7200, 21_600, 43_200, 86_400];
    expect(bases.map((_, i) => nextRoundDelaySeconds(i + 1, null, policy(0)))).toEqual(bases);
    expect(bases.map((_, i) => nextRoundDelaySeconds(i + 1, null, policy(0.999)))).toEqual([
      66, 330, 1980, 7919, 23_758, 47_516, 86_400,
    ]);
  });

  it("is raised to a longer Retry-After, still capped at 24 h", () => {
    expect(nextRoundDelaySeconds(1, 3600, policy(0))).toBe(3600);
    expect(nextRoundDelaySeconds(1, 30, policy(0))).toBe(60);
    expect(nextRoundDelaySeconds(1, 200_000, policy(0))).toBe(86_400);
  });
});

describe("the one schedule: dueAtOf and stalledSince", () => {
  const ended = Date.UTC(2026, 0, 1, 12);
  it("schedules the next attempt or round from the end of the attempt, Retry-After included", () => {
    const inRound = nextStep({ rounds: 0, attemptsInRound: 0 }, "retryable", 7, policy(0.5));
    expect(dueAtOf(inRound, ended)).toBe(ended + 7_000);
    const round = nextStep({ rounds: 0, attemptsInRound: 2 }, "retryable", null, policy(0.5));
    expect(dueAtOf(round, ended)).toBe(ended + 63_000); // 60 s + 5 % of the jitter drawn
    const long = nextStep({ rounds: 0, attemptsInRound: 0 }, "retryable", 3600, policy(0.5));
    expect(dueAtOf(long, ended)).toBe(ended + 3_600_000);
    expect(dueAtOf(nextStep({ rounds: 0, attemptsInRound: 0 }, "delivered", null), ended)).toBe(
      null,
    );
  });

  it("takes the later of the recorded next attempt and the message's sending", () => {
    expect(stalledSince(null, ended)).toBe(ended);
    expect(stalledSince(ended + 3_600_000, ended)).toBe(ended + 3_600_000);
    // Re-sent after its due instant: quiet from the re-send on, not sent again every sweep.
    expect(stalledSince(ended, ended + 60_000)).toBe(ended + 60_000);
  });
});
