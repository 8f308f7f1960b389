/**
 * People give the reason at the machine: the scanner's side of a stop's classification
 * (`POST /v1/realtime/{machine_id}/stop-reason`) and what a scanner shows before it
 * (`GET /v1/realtime/{machine_id}/stops`). The stop is one of the machine's recent ones
 * (begun, and open or ended less than `RECENT_STOP_MS` ago), named by id or by default the one a
 * person at the machine means: its open stop, else its last stop.
 * The reason comes from the company's catalog of causes, never added to it; the
 * classification goes through the one classification path
 * (src/stops/classify.ts), with its webhook and stream events. docs/realtime.md,
 * "Stop reasons".
 */

import { and, desc, eq, gte, isNull, lte, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, type NamedScope, ownedSql } from "../db/company-scope";
import { machineByIdQuery } from "../db/machines";
import { stops } from "../db/schema";
import { ApiError, notFound, type ValidationIssue } from "../http/errors";
import { machineStopsSince, type StopsReportRow } from "../reports/stops-report";
import { loadShiftPlan } from "../shifts/queries";
import {
  CAUSE_FIELDS,
  type Cause,
  type CauseField,
  causeCatalog,
  causesNamedQuery,
  resolveCause,
} from "../stops/causes";
import { firstReadOf, firstReadStatements } from "../stops/classification-queries";
import { type ClassifyBindings, classifyStop, type FirstRead } from "../stops/classify";
import { machineNotFound } from "./queries";
import {
  MAX_RECENT_STOPS,
  RECENT_STOP_MS,
  type RealtimeStopsOut,
  type StopReasonBody,
} from "./stop-reason-schemas";

/** The words of each cause field in messages. */
const FIELD_WORDS: Record<CauseField, string> = {
  generalCause: "general cause",
  specificCause: "specific cause",
  component: "component",
};

/** Columns of a stop that decide whether it can be given a reason here. */
const stopFacts = {
  id: stops.id,
  machineId: stops.machineId,
  startTime: stops.startTime,
  endTime: stops.endTime,
};

/**
 * "This machine's stops that are not deleted", seeking the index on the machine's stop ends
 * (`stops_machine_end_idx`): the unary plus keeps SQLite from the company's indexes, which
 * would read every stop the company ever had (`test/realtime/stop-reason-work.test.ts`).
 */
function ofMachine(scope: CompanyScope, machineId: number): SQL {
  return and(
    ownedSql(scope, "+stops.company_id"),
    eq(stops.machineId, machineId),
    isNull(stops.deletedAt),
  ) as SQL;
}

/**
 * The query of the machine's open stop (begun by `now`) that started last. The plus on the
 * start, in the condition and in the order, keeps SQLite off the machine's index on starts,
 * which the order would tempt it to walk: through the whole history when none is open.
 */
function openStopQuery(scope: CompanyScope, machineId: number, now: number) {
  const start = sql`+${stops.startTime}`;
  return scope.db
    .select(stopFacts)
    .from(stops)
    .where(and(ofMachine(scope, machineId), isNull(stops.endTime), sql`${start} <= ${now}`))
    .orderBy(desc(start), desc(stops.id))
    .limit(1);
}

/** The query of the machine's last stop: the one that ended last, at or after `since` (and by `now`). */
function lastStopQuery(scope: CompanyScope, machineId: number, since: number, now: number) {
  return scope.db
    .select(stopFacts)
    .from(stops)
    .where(and(ofMachine(scope, machineId), gte(stops.endTime, since), lte(stops.endTime, now)))
    .orderBy(desc(stops.endTime), desc(stops.id))
    .limit(1);
}

/** True when a stop ended more than `RECENT_STOP_MS` before `now`. */
function isPast(stop: { endTime: number | null }, now: number): boolean {
  return stop.endTime !== null && stop.endTime < now - RECENT_STOP_MS;
}

/** 409 of a machine without a stop to give a reason to, for a write that names none. */
function noRecentStop(machineId: number): ApiError {
  return new ApiError(
    409,
    `Machine ${machineId} has no open stop and no stop in the last 24 hours: there is no stop ` +
      "to give a reason to",
  );
}

/**
 * The causes a body names, each resolved in the catalog rows found.
 *
 * @throws ApiError 422 listing every cause that is unknown, or whose id and name differ.
 */
function resolveReason(
  body: StopReasonBody,
  found: readonly { id: string; name: string; kind: string }[],
): Record<CauseField, Cause | null> {
  const issues: ValidationIssue[] = [];
  const out: Record<CauseField, Cause | null> = {
    generalCause: null,
    specificCause: null,
    component: null,
  };
  for (const field of CAUSE_FIELDS) {
    const ref = body[field];
    if (!ref) continue;
    const resolved = resolveCause(field, ref, found);
    const words = FIELD_WORDS[field];
    if (resolved === "unknown_id") {
      issues.push({
        loc: ["body", field, "id"],
        msg: `No ${words} with id ${ref.id} in the company's catalog`,
        type: "not_found",
      });
    } else if (resolved === "unknown_name") {
      issues.push({
        loc: ["body", field, "name"],
        msg: `No ${words} named "${ref.name}" in the company's catalog`,
        type: "not_found",
      });
    } else if (resolved === "id_and_name_differ") {
      issues.push({
        loc: ["body", field],
        msg: `id ${ref.id} and name "${ref.name}" name different ${words}s`,
        type: "value_error",
      });
    } else {
      out[field] = resolved;
    }
  }
  if (issues.length > 0) throw new ApiError(422, issues);
  return out;
}

/**
 * The machine, the catalog rows the body names and the stop a reason goes to, in one D1
 * batch: the stop `stopId` (any machine's: the caller checks) with what its classification
 * starts from (its classification, its shift: `first`), or else the machine's open stop,
 * else its last one since `now - RECENT_STOP_MS`.
 */
async function stopAndCauses(
  scope: NamedScope,
  machineId: number,
  body: StopReasonBody,
  stopId: number | null,
  now: number,
): Promise<{
  machine: { id: number } | undefined;
  causeRows: { id: string; name: string; kind: string }[];
  stop: { id: number; machineId: number; startTime: number; endTime: number | null } | undefined;
  first?: FirstRead;
}> {
  if (stopId !== null) {
    const [machineRows, causeRows, ...firstRows] = await scope.db.batch([
      machineByIdQuery(scope, machineId),
      causesNamedQuery(scope, body),
      ...firstReadStatements(scope, stopId),
    ] as const);
    const first = firstReadOf(scope, firstRows);
    return { machine: machineRows[0], causeRows, stop: first.found?.stop, first };
  }
  const [machineRows, causeRows, openRows, lastRows] = await scope.db.batch([
    machineByIdQuery(scope, machineId),
    causesNamedQuery(scope, body),
    openStopQuery(scope, machineId, now),
    lastStopQuery(scope, machineId, now - RECENT_STOP_MS, now),
  ] as const);
  return { machine: machineRows[0], causeRows, stop: openRows[0] ?? lastRows[0] };
}

/**
 * Gives a stop of a machine its reason from the company's catalog: the stop `stopId`, or
 * else the machine's open stop, or else its last stop (ended less than 24 hours ago): the
 * stop a person at the machine means, the same one again when a scan is repeated. The whole classification is replaced (an absent cause or
 * description becomes null), through the one classification path: the webhook event
 * `MachineStopClassificationCreated` (or `Updated`) and the stream event `stop.classified`,
 * and nothing at all when the stop already has exactly this reason.
 *
 * Reads the machine, the causes and the stop named with its classification, shift plan and
 * stored shift instances in one D1 batch (or both candidates of the default, the shift plan
 * beside it, then the stop's classification beside its shift); then one write batch and the
 * stream event, the webhook hand-over after the answer.
 *
 * @param now the instant of the write, ms.
 * @param afterAnswer keeps work alive after the answer (`ctx.waitUntil`): the webhook
 *   deliveries are then handed over after it (`classifyStop`).
 * @returns the stop as a row of the stops report, with its classification.
 * @throws ApiError, in this order: 404 for a machine that is not the company's; 404 for a
 *   `stopId` that is not a stop of this machine (unknown, deleted, another machine's or
 *   another company's); 409 when no stop is named and none is open or ended in the last 24 hours, or when the
 *   stop ended more than 24 hours ago or starts after `now`; 422 for a cause the catalog
 *   does not have.
 */
export async function giveStopReason(
  env: ClassifyBindings,
  scope: NamedScope,
  machineId: number,
  body: StopReasonBody,
  now: number,
  afterAnswer?: (work: Promise<unknown>) => void,
): Promise<StopsReportRow> {
  const stopId = body.stopId ?? null;
  // The company's shift plan (the shift of the stop, for the events) beside the batch, unless
  // the batch reads it (a stop named by id).
  const plan = stopId === null ? loadShiftPlan(scope) : undefined;
  plan?.catch(() => undefined); // awaited by the classification; a failure surfaces there
  // One batch: the stop named with its classification and shift, or else both candidates of
  // the default (only the statements this write needs: each costs the runtime's CPU a person
  // waits for).
  const { machine, causeRows, stop, first } = await stopAndCauses(
    scope,
    machineId,
    body,
    stopId,
    now,
  );
  if (!machine) throw machineNotFound(machineId);
  if (stopId !== null && (!stop || stop.machineId !== machineId)) {
    throw notFound(`Stop ${stopId} not found on machine ${machineId}`);
  }
  if (!stop) throw noRecentStop(machineId);
  if (isPast(stop, now)) {
    throw new ApiError(
      409,
      `Stop ${stop.id} ended more than 24 hours ago: a reason is given from the machine only ` +
        "to its open stop or to a stop that ended in the last 24 hours",
    );
  }
  // A stop recorded (or once detected) in the future has not happened: nobody at the
  // machine can know its reason (docs/realtime.md, "Stop reasons").
  if (stop.startTime > now) {
    throw new ApiError(
      409,
      `Stop ${stop.id} starts at ${new Date(stop.startTime).toISOString()}, after now: a ` +
        "reason is given from the machine only to a stop that has begun",
    );
  }
  const reason = resolveReason(body, causeRows);
  const classified = await classifyStop(
    env,
    scope.db,
    stop.id,
    scope.companyId,
    {
      description: body.description ?? null,
      generalCause: reason.generalCause?.name ?? null,
      specificCause: reason.specificCause?.name ?? null,
      component: reason.component?.name ?? null,
    },
    // The causes were found in the catalog: the write adds none.
    { now, plan, stop, first, causesInCatalog: true, afterAnswer },
  );
  // Deleted between the read and the write: as if it had never been there.
  if (!classified) throw notFound(`Stop ${stop.id} not found on machine ${machineId}`);
  return {
    classification: classified.classification,
    company: { id: scope.companyId, name: scope.companyName },
    machine: classified.machine,
    shift: classified.shift,
    stop: classified.stop,
  };
}

/**
 * What a scanner shows before it gives a reason: the machine's recent stops (begun by `now`,
 * and open or ended less than 24 hours ago; newest first, at most `MAX_RECENT_STOPS`) with their
 * classification, which of them a write without `stopId` goes to, and the company's catalog
 * of causes.
 *
 * @throws ApiError 404 for a machine that is not the company's.
 */
export async function recentStopsOf(
  scope: NamedScope,
  machineId: number,
  now: number,
): Promise<RealtimeStopsOut> {
  const since = now - RECENT_STOP_MS;
  const [machineRows, openRows, lastRows] = await scope.db.batch([
    machineByIdQuery(scope, machineId),
    openStopQuery(scope, machineId, now),
    lastStopQuery(scope, machineId, since, now),
  ] as const);
  const machine = machineRows[0];
  if (!machine) throw machineNotFound(machineId);
  const [rows, causes] = await Promise.all([
    machineStopsSince(scope, machineId, since, MAX_RECENT_STOPS, now),
    causeCatalog(scope),
  ]);
  return {
    machine: { id: machine.id, name: machine.name },
    recentSince: new Date(since).toISOString(),
    defaultStopId: (openRows[0] ?? lastRows[0])?.id ?? null,
    stops: rows,
    causes,
  };
}
