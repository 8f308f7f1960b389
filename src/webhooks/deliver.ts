/**
 * Delivering a set of deliveries due now, one attempt each, concurrently: one
 * D1 read for all of them, the attempts, and their records written by group
 * commit (the writes of the attempts that end while no write is in flight go
 * out at once as one `db.batch`, the writes of those that end meanwhile as the
 * next one), so a slow attempt never holds back the record of another. What
 * follows each attempt comes from the retry policy (./retry-policy.ts); the
 * caller (the endpoint's deliverer, ./endpoint-deliverer.ts) schedules it.
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { attemptDelivery } from "./attempt";
import {
  attemptStatement,
  type DeliveryContext,
  type DeliveryProgress,
  loadDeliveries,
  progressStatement,
} from "./delivery-records";
import { GroupCommit } from "./group-commit";
import { dueAtOf, type NextStep, nextStep, type RetryPolicy } from "./retry-policy";
import type { UrlSafetyOptions } from "./url-safety";

/**
 * What follows an attempt, with the instant it is due (`dueAt`, ms since the epoch, for
 * the next attempt or round): the deliverer's alarm and the delivery's record share it.
 */
type ScheduledStep = NextStep & { dueAt: number | null };

/** What became of one delivery handed to {@link deliverDue}. */
export type DeliveryStep =
  | ScheduledStep
  /** Unknown, or no longer pending (delivered, failed, a duplicate hand-over): nothing done. */
  | { kind: "not-pending" }
  /** Its registration was deleted while it waited: marked failed, no attempt. */
  | { kind: "registration-deleted" }
  /** D1 failed (read or write): try again later. */
  | { kind: "error"; error: unknown };

/** Where a delivery stands after `step` (its record: rounds, attempts of the round, next attempt). */
function progressAfter(
  delivery: DeliveryContext,
  step: NextStep,
  dueAt: number | null,
): DeliveryProgress {
  switch (step.kind) {
    case "next-attempt":
      return {
        status: "pending",
        rounds: delivery.rounds,
        attemptsInRound: step.attemptsInRound,
        nextAttemptAt: dueAt,
      };
    case "next-round":
      return { status: "pending", rounds: step.rounds, attemptsInRound: 0, nextAttemptAt: dueAt };
    case "exhausted":
      return { status: "failed", rounds: step.rounds, attemptsInRound: 0, nextAttemptAt: null };
    case "done":
      return { status: step.status, rounds: step.rounds, attemptsInRound: 0, nextAttemptAt: null };
  }
}

/**
 * One attempt of a pending delivery, recorded: the attempt row and where the delivery
 * stands after it (rounds, attempts of the round, when the next is due), in one
 * transaction, so the count and the schedule are the record's and nothing else's.
 *
 * @throws what D1 throws for the write.
 */
async function attemptAndRecord(
  db: Database,
  writes: GroupCommit<BatchItem<"sqlite">>,
  delivery: DeliveryContext,
  urlOptions: UrlSafetyOptions,
  policy: RetryPolicy,
): Promise<ScheduledStep> {
  const requestId = crypto.randomUUID();
  const at = Date.now();
  const result = await attemptDelivery(delivery, requestId, urlOptions, policy.attemptTimeoutMs);
  const ended = Date.now();
  const step = nextStep(delivery, result.verdict, result.retryAfterSeconds, policy);
  const dueAt = dueAtOf(step, ended);
  await writes.submit([
    attemptStatement(db, delivery, requestId, at, ended - at, result),
    progressStatement(db, delivery.id, progressAfter(delivery, step, dueAt)),
  ]);
  return { ...step, dueAt };
}

/**
 * Makes one attempt of each pending delivery of `deliveryIds`, concurrently,
 * and records them.
 *
 * @param deliveryIds at most 100 (one D1 read).
 * @returns what became of each delivery, by id; never throws (a D1 failure is
 *   an `error` step of the deliveries it concerns).
 */
export async function deliverDue(
  db: Database,
  deliveryIds: readonly string[],
  urlOptions: UrlSafetyOptions,
  policy: RetryPolicy,
): Promise<Map<string, DeliveryStep>> {
  const steps = new Map<string, DeliveryStep>();
  let deliveries: Map<string, DeliveryContext>;
  try {
    deliveries = await loadDeliveries(db, deliveryIds);
  } catch (error) {
    for (const id of deliveryIds) steps.set(id, { kind: "error", error });
    return steps;
  }
  const writes = new GroupCommit<BatchItem<"sqlite">>((statements) => db.batch(statements));
  await Promise.all(
    deliveryIds.map(async (id) => {
      const delivery = deliveries.get(id);
      try {
        if (delivery?.status !== "pending") {
          steps.set(id, { kind: "not-pending" });
        } else if (delivery.webhookDeletedAt !== null) {
          // The registration was deleted while the delivery waited: nobody to deliver to.
          await writes.submit([
            progressStatement(db, id, {
              status: "failed",
              rounds: delivery.rounds,
              attemptsInRound: 0,
              nextAttemptAt: null,
            }),
          ]);
          steps.set(id, { kind: "registration-deleted" });
        } else {
          steps.set(id, await attemptAndRecord(db, writes, delivery, urlOptions, policy));
        }
      } catch (error) {
        steps.set(id, { kind: "error", error });
      }
    }),
  );
  return steps;
}
