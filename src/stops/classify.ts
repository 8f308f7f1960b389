/**
 * The one classification path of a stop: every door that gives a stop its reason (the
 * operator's `PUT /operator/v1/stops/{stop_id}/classification`, the scanner's
 * `POST /v1/realtime/{machine_id}/stop-reason`) and takes it away (the operator's
 * `DELETE`) calls these functions, so that each writes the same rows, emits the same
 * webhook events (`MachineStopClassificationCreated` / `Updated` / `Deleted`,
 * docs/webhooks.md) and the same stream events (`stop.classified`, `stop.unclassified`,
 * docs/stream-events.md). Their D1 work is in ./classification-queries.ts.
 */

import type { Database } from "../db/client";
import { type CompanyScope, scopeIn } from "../db/company-scope";
import type { Env } from "../env";
import { ApiError } from "../http/errors";
import {
  type ClassificationOut,
  type ClassificationRow,
  type ReportShift,
  type StopOut,
  toClassificationOut,
} from "../reports/schemas";
import { findStopWithClassification, type StopWithClassification } from "../reports/stops-report";
import { loadShiftPlan, type ShiftPlan } from "../shifts/queries";
import { stopClassified, stopUnclassified } from "../streams/payloads";
import { publish } from "../streams/publish";
import { dispatchDeliveries } from "../webhooks/webhook-events";
import type { OutboxBindings } from "../webhooks/webhook-outbox";
import {
  type ClassificationInput,
  classificationChange,
  deleteClassification,
  type FirstRead,
  firstReadOf,
  firstReadStatements,
  putClassification,
  type StopPlace,
  shiftOfStop,
} from "./classification-queries";

export type { ClassificationInput, FirstRead, StopPlace } from "./classification-queries";

/** The bindings a classification change needs: the webhook outbox and the stop's stream. */
export type ClassifyBindings = OutboxBindings & Pick<Env, "WEBHOOK_ENDPOINT" | "MACHINE_STREAM">;

/**
 * How many times a classification is read and written when other requests change it between
 * the read and the write. Every round lets one writer through, so five scanners giving a stop
 * reasons at the same instant all succeed; more than that, and the caller is told to retry.
 */
const MAX_ATTEMPTS = 5;

/** A stop as it was classified: the stops report's shapes, as webhook events carry them. */
interface ClassifiedStop {
  /** The stop before the change, with its company. */
  found: StopWithClassification & { companyId: number };
  classification: ClassificationOut;
  stop: StopOut;
  machine: { id: number; name: string };
  /** The shift instance containing the stop's start, or null. */
  shift: ReportShift | null;
  /** The webhook event the change emitted; null when the stop already had this classification. */
  emitted: "Created" | "Updated" | null;
}

/** True when the stored classification already says exactly what `input` says. */
function sameClassification(row: ClassificationRow, input: ClassificationInput): boolean {
  return (
    row.id !== null &&
    row.description === input.description &&
    row.componentName === input.component &&
    row.specificCauseName === input.specificCause &&
    row.generalCauseName === input.generalCause
  );
}

/** What a caller of `classifyStop` knows already, so that its reads overlap. */
interface ClassifyOptions {
  /** The instant of the change, ms (the event's timestamp, open stops' duration); default now. */
  now?: number;
  /**
   * The company's shift plan, read by the caller beside its own reads (default: read here,
   * beside the stop, when `companyId` is given).
   */
  plan?: Promise<ShiftPlan | null>;
  /**
   * The stop's machine and start, as the caller read them: the shift containing the start is
   * then looked up beside the stop's classification, instead of after it (again after it
   * when the stop read differs).
   */
  stop?: StopPlace;
  /**
   * Every cause named is in the company's catalog already (the caller found it there, and
   * causes are never removed from it): the write adds none, one to three statements fewer.
   */
  causesInCatalog?: boolean;
  /**
   * The stop, its classification, the stored instances around its start and the company's
   * shift plan, read by the caller in its first batch (`firstReadStatements`): the first
   * attempt then reads nothing before its write when the stop's shift instance is stored.
   */
  first?: FirstRead;
  /**
   * Keeps work alive after the answer (the request's `ctx.waitUntil`). Given, the webhook
   * deliveries are handed over (Queue message, then their deliverers) after the answer,
   * once the stream event is stored; absent, before returning. Nothing is lost either way:
   * the deliveries are stored with the change, and the outbox sweeper sends any whose
   * hand-over failed (docs/webhook-delivery.md).
   */
  afterAnswer?: (work: Promise<unknown>) => void;
}

/** Marks a promise's rejection as handled where it is awaited later, not where it began. */
function awaitedLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Reads what a classification of stop `stopId` starts from in one D1 batch
 * (`firstReadStatements`), for `classifyStop`'s `options.first`.
 *
 * @param scope the company the stop must belong to, and its shard.
 */
export async function readStopFirst(scope: CompanyScope, stopId: number): Promise<FirstRead> {
  return firstReadOf(scope, await scope.db.batch(firstReadStatements(scope, stopId)));
}

/**
 * Announces a written classification: the `stop.classified` stream event, and the hand-over
 * of its stored webhook deliveries (`handOver`). With `options.afterAnswer`, the caller's
 * answer waits for the stream event only (a client that saw it and subscribes with its last
 * id gets it) and the hand-over follows it after the answer; otherwise both are awaited.
 *
 * @param event the stream event of the classification.
 * @param handOver sends the stored deliveries (the outbox sweeper retries a failed one).
 */
async function announce(
  env: ClassifyBindings,
  companyId: number,
  machineId: number,
  event: ReturnType<typeof stopClassified>,
  handOver: () => Promise<unknown>,
  options: ClassifyOptions,
): Promise<void> {
  const published = publish(env, companyId, machineId, event);
  if (options.afterAnswer) {
    options.afterAnswer(published.then(handOver));
    await published;
  } else {
    await Promise.all([handOver(), published]);
  }
}

/**
 * Gives a stop its classification (creating or replacing it), with the webhook event and
 * the stream event of the change. Cause names are found in the company's catalog (exact,
 * trimmed by the caller) or added to it; a caller that must not add causes resolves them
 * first. A classification equal to the stored one (same description and causes) changes
 * nothing and emits nothing: a scanner that repeats its reason is not a second event.
 *
 * A person waits for the answer (a scanner, an operator's screen), so the reads that do not
 * depend on each other go out together (with `options.first`, in the caller's first batch:
 * the stop with its classification, the company's shift plan and the stored instances
 * around the stop's start; else the stop beside the shift containing the start when
 * `options.stop` gives it), and with `options.afterAnswer` the answer waits for the write
 * batch and the stream event only, the webhook deliveries being handed over after it: every
 * sequential round trip waits its turn on a busy runtime (docs/realtime.md, "Stop reasons";
 * bench/stop-reason.ts).
 *
 * @param env the webhook outbox and the stream bindings.
 * @param db the company's shard (or the shard holding the stop, for the operator).
 * @param stopId the stop, by its global id.
 * @param companyId the company the stop must belong to; null = any.
 * @param input the whole classification (an absent cause or description is null).
 * @param options what the caller read already, and the instant of the change.
 * @returns the stop, its classification and what was emitted; null when the stop is
 *   unknown, deleted, or not the company's.
 * @throws ApiError 409 when other requests changed the classification between each of
 *   `MAX_ATTEMPTS` reads and writes.
 */
export async function classifyStop(
  env: ClassifyBindings,
  db: Database,
  stopId: number,
  companyId: number | null,
  input: ClassificationInput,
  options: ClassifyOptions = {},
): Promise<ClassifiedStop | null> {
  const now = options.now ?? Date.now();
  const companyScope = companyId === null ? null : scopeIn(db, companyId);
  const { first } = options;
  const plan =
    options.plan ??
    (first ? Promise.resolve(first.plan) : undefined) ??
    (companyScope === null ? undefined : awaitedLater(loadShiftPlan(companyScope)));
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
    // The first round starts from what the caller read (the stop, or its place for its shift
    // beside the stop); a retry reads the stop again because another request changed it.
    const read = attempt === 0 && companyScope !== null ? first : undefined;
    const place =
      attempt === 0 && companyScope !== null ? (read?.found?.stop ?? options.stop) : undefined;
    const [found, early] = await Promise.all([
      read ? read.found : findStopWithClassification(db, stopId, companyId),
      place && companyScope
        ? shiftOfStop(companyScope, place, now, plan, read?.instances)
        : undefined,
    ]);
    if (!found) return null;
    const current = found.classification;
    const unchanged = sameClassification(current, input);
    const kind = current.id === null ? "Created" : "Updated";
    const samePlace =
      place !== undefined &&
      place.machineId === found.stop.machineId &&
      place.startTime === found.stop.startTime;
    const shift = samePlace
      ? early
      : await shiftOfStop(scopeIn(db, found.companyId), found.stop, now, plan);
    const change = await classificationChange(db, found, kind, now, shift ?? null);
    const context = { found, stop: change.stop, machine: change.machine, shift: change.shift };
    if (unchanged) {
      return { ...context, classification: toClassificationOut(current), emitted: null };
    }
    const scope = scopeIn(db, found.companyId);
    const replaces =
      current.id === null || current.updatedAt === null
        ? null
        : { id: current.id, updatedAt: current.updatedAt };
    const { applied, eventId, deliveries, written } = await putClassification(
      scope,
      stopId,
      input,
      change,
      replaces,
      { addCauses: !options.causesInCatalog },
    );
    if (!applied) continue;
    if (!written) {
      await dispatchDeliveries(env, scope, eventId, deliveries);
      return null;
    }
    const classification = toClassificationOut(written);
    const event = stopClassified(stopId, classification);
    const handOver = () => dispatchDeliveries(env, scope, eventId, deliveries);
    await announce(env, found.companyId, found.stop.machineId, event, handOver, options);
    return { ...context, classification, emitted: kind };
  }
  throw new ApiError(
    409,
    `The classification of stop ${stopId} was changed by other requests at the same time: try again`,
  );
}

/**
 * Deletes a stop's classification, with the `MachineStopClassificationDeleted` webhook event
 * and the `stop.unclassified` stream event.
 *
 * @param companyId the company the stop must belong to; null = any (the operator).
 * @returns `not_found` for an unknown or deleted stop (or another company's),
 *   `unclassified` when the stop has no classification (or another request deleted it
 *   first: one event only), else `deleted`.
 */
export async function unclassifyStop(
  env: ClassifyBindings,
  db: Database,
  stopId: number,
  companyId: number | null,
  now: number = Date.now(),
): Promise<"not_found" | "unclassified" | "deleted"> {
  const plan = companyId === null ? undefined : awaitedLater(loadShiftPlan(scopeIn(db, companyId)));
  const found = await findStopWithClassification(db, stopId, companyId);
  if (!found) return "not_found";
  if (found.classification.id === null) return "unclassified";
  const scope = scopeIn(db, found.companyId);
  const shift = await shiftOfStop(scope, found.stop, now, plan);
  const change = await classificationChange(db, found, "Deleted", now, shift);
  const { deleted, eventId, deliveries } = await deleteClassification(db, stopId, change);
  if (!deleted) return "unclassified";
  await Promise.all([
    dispatchDeliveries(env, scope, eventId, deliveries),
    publish(env, found.companyId, found.stop.machineId, stopUnclassified(stopId)),
  ]);
  return "deleted";
}
