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
  loadDeliveries,
  outcomeStatement,
} from "./delivery-records";
import { GroupCommit } from "./group-commit";
import { type NextStep, nextStep, type RetryPolicy } from "./retry-policy";
import type { UrlSafetyOptions } from "./url-safety";

/** What became of one delivery handed to {@link deliverDue}. */
export type DeliveryStep =
  | NextStep
  /** Unknown, or no longer pending (delivered, failed, a duplicate hand-over): nothing done. */
  | { kind: "not-pending" }
  /** Its registration was deleted while it waited: marked failed, no attempt. */
  | { kind: "registration-deleted" }
  /** D1 failed (read or write): try again later. */
  | { kind: "error"; error: unknown };

/**
 * One attempt of a pending delivery, recorded (the attempt row and, at the end
 * of the delivery or of a round, the outcome, in one transaction).
 *
 * @throws what D1 throws for the write.
 */
async function attemptAndRecord(
  db: Database,
  writes: GroupCommit<BatchItem<"sqlite">>,
  delivery: DeliveryContext,
  urlOptions: UrlSafetyOptions,
  policy: RetryPolicy,
): Promise<NextStep> {
  const requestId = crypto.randomUUID();
  const at = Date.now();
  const result = await attemptDelivery(delivery, requestId, urlOptions, policy.attemptTimeoutMs);
  const statements = [attemptStatement(db, delivery, requestId, at, Date.now() - at, result)];
  const step = nextStep(delivery, result.verdict, result.retryAfterSeconds, policy);
  if (step.kind === "done") {
    statements.push(outcomeStatement(db, delivery.id, step.status, step.rounds, at));
  } else if (step.kind === "next-round") {
    statements.push(outcomeStatement(db, delivery.id, "pending", step.rounds, at));
  } else if (step.kind === "exhausted") {
    statements.push(outcomeStatement(db, delivery.id, "failed", step.rounds, at));
  }
  await writes.submit(statements);
  return step;
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
          await writes.submit([outcomeStatement(db, id, "failed", delivery.rounds, null)]);
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
