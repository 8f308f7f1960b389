/**
 * The retry policy of a delivery (docs/webhooks.md "Delivery and retries") as pure functions:
 * no I/O and no clock of its own, so every rule is unit-tested without D1, a Queue or a timer.
 * It is the one schedule: the deliverer decides here what follows an attempt and when
 * ({@link nextStep}, {@link dueAtOf}) and records both with the delivery, and the outbox
 * sweeper reads that record ({@link stalledSince}) (docs/webhook-delivery.md, "One schedule").
 */
import { SECOND_MS } from "../time/units";
/** The waits between rounds, s (docs/webhooks.md): 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h. */
export const ROUND_DELAYS_SECONDS: readonly number[] = [
  60, 300, 1_800, 7_200, 21_600, 43_200, 86_400,
];

/** Timing of rounds and attempts; the defaults are the contract's. */
export interface RetryPolicy {
  /** Time limit of one attempt, DNS included, ms. */
  attemptTimeoutMs: number;
  /**
   * Delay before each attempt of a round, seconds (the first is 0). Its
   * length is the number of attempts in a round.
   */
  attemptDelaysSeconds: readonly number[];
  /** Longest `Retry-After` honoured inside a round, seconds; a longer one ends the round. */
  maxInRoundRetryAfterSeconds: number;
  /** Delay before round 2, 3, ..., seconds. */
  roundDelaysSeconds: readonly number[];
  /** Longest wait before a round, seconds (24 h: the Queues maximum `delaySeconds`, kept). */
  maxDelaySeconds: number;
  /** Largest jitter, as a fraction of the delay. */
  jitter: number;
  /** Source of jitter, in [0, 1). */
  random: () => number;
}

/** The contract's policy. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  attemptTimeoutMs: 10_000,
  attemptDelaysSeconds: [0, 1, 2],
  maxInRoundRetryAfterSeconds: 10,
  roundDelaysSeconds: ROUND_DELAYS_SECONDS,
  maxDelaySeconds: 86_400,
  jitter: 0.1,
  random: Math.random,
};

/** The verdict of one attempt. */
export type Verdict = "delivered" | "retryable" | "failed";

/** Rounds of a delivery: the first plus one per scheduled delay. */
export function maxRounds(policy: RetryPolicy = DEFAULT_RETRY_POLICY): number {
  return 1 + policy.roundDelaysSeconds.length;
}

/**
 * Parses `Retry-After` (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date.
 *
 * @param value the header value, or null.
 * @param now ms since the epoch (for an HTTP-date).
 * @returns whole seconds to wait (>= 0), or null when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / SECOND_MS));
}

/**
 * The verdict of an HTTP status: 2XX delivered; 408, 429, 5XX retryable; 3XX
 * (redirects are not followed) and any other status failed for good.
 */
export function verdictOf(status: number): Verdict {
  if (status >= 200 && status < 300) return "delivered";
  if (status === 408 || status === 429 || status >= 500) return "retryable";
  return "failed";
}

/**
 * The delay before the next round, seconds: the schedule's delay for the
 * rounds done, with up to `jitter` added, raised to a long `Retry-After`, and
 * capped at `maxDelaySeconds`.
 *
 * @param roundsDone rounds completed, 1 or more.
 * @param retryAfterSeconds the last response's `Retry-After`, if any.
 */
export function nextRoundDelaySeconds(
  roundsDone: number,
  retryAfterSeconds: number | null,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): number {
  const schedule = policy.roundDelaysSeconds;
  const base = schedule[Math.min(roundsDone, schedule.length) - 1] ?? 0;
  const jittered = Math.round(base * (1 + policy.jitter * policy.random()));
  return Math.min(policy.maxDelaySeconds, Math.max(jittered, retryAfterSeconds ?? 0));
}

/** Where a delivery stands when an attempt is made. */
export interface RoundState {
  /** Rounds completed before this attempt. */
  rounds: number;
  /** Attempts already made in the current round (0 = this attempt opens it). */
  attemptsInRound: number;
}

/** What follows an attempt. */
export type NextStep =
  /** Delivered or failed for good; `rounds` = rounds completed, this one included. */
  | { kind: "done"; status: "delivered" | "failed"; rounds: number }
  /**
   * The next attempt of the same round, after `delaySeconds`; `attemptsInRound` = attempts
   * made in the round, this one included.
   */
  | { kind: "next-attempt"; delaySeconds: number; attemptsInRound: number }
  /** The round failed; the next one starts after `delaySeconds`. */
  | { kind: "next-round"; rounds: number; delaySeconds: number }
  /** The last round failed: the delivery is failed. */
  | { kind: "exhausted"; rounds: number };

/**
 * What follows an attempt whose verdict and `Retry-After` are known.
 *
 * @param state rounds completed and attempts already made in the current round.
 * @param verdict the attempt's verdict.
 * @param retryAfterSeconds the response's `Retry-After`, seconds, or null.
 */
export function nextStep(
  state: RoundState,
  verdict: Verdict,
  retryAfterSeconds: number | null,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): NextStep {
  if (verdict !== "retryable") return { kind: "done", status: verdict, rounds: state.rounds + 1 };
  const nextDelay = policy.attemptDelaysSeconds[state.attemptsInRound + 1];
  if (
    nextDelay !== undefined &&
    (retryAfterSeconds === null || retryAfterSeconds <= policy.maxInRoundRetryAfterSeconds)
  ) {
    return {
      kind: "next-attempt",
      delaySeconds: retryAfterSeconds ?? nextDelay,
      attemptsInRound: state.attemptsInRound + 1,
    };
  }
  const rounds = state.rounds + 1;
  if (rounds >= maxRounds(policy)) return { kind: "exhausted", rounds };
  return {
    kind: "next-round",
    rounds,
    delaySeconds: nextRoundDelaySeconds(rounds, retryAfterSeconds, policy),
  };
}

/**
 * The instant of what a step schedules, the one the deliverer's alarm waits for and the
 * delivery's record keeps (`next_attempt_at`): the wait counts from the end of the attempt.
 *
 * @param step what follows the attempt ({@link nextStep}).
 * @param attemptEndedAt when the attempt ended, ms since the epoch.
 * @returns ms since the epoch, or null when nothing follows (delivered, failed, exhausted).
 */
export function dueAtOf(step: NextStep, attemptEndedAt: number): number | null {
  if (step.kind === "next-attempt" || step.kind === "next-round") {
    return attemptEndedAt + step.delaySeconds * SECOND_MS;
  }
  return null;
}

/**
 * Since when a pending delivery has been quiet for the outbox sweeper: its next handling
 * was due (the recorded `next_attempt_at`, `Retry-After` and jitter included) or its
 * message was sent, whichever is later. Past that by the stalled margin, the message is
 * taken for lost and sent again. The sweeper evaluates the same rule in SQL
 * (src/webhooks/webhook-outbox.ts); this is its statement, unit-tested.
 *
 * @param nextAttemptAt the recorded next attempt, ms since the epoch, or null before the first.
 * @param enqueuedAt when the message was last sent, ms since the epoch.
 */
export function stalledSince(nextAttemptAt: number | null, enqueuedAt: number): number {
  return Math.max(nextAttemptAt ?? 0, enqueuedAt);
}
