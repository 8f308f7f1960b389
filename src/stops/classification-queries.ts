/**
 * D1 work of a stop's classification, for the one classification path (./classify.ts) that the
 * operator's `PUT`/`DELETE .../classification` and the scanner's stop reason share: causes are
 * a per-company catalog found by exact name or created on first use; the write, its webhook
 * event and its deliveries go in one `db.batch`, guarded on the classification it replaces, so
 * two reasons given at once never make two `Created` events. docs/realtime.md.
 */

import { and, eq, gt, isNull, lte, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import { type CompanyScope, owned, ownedSql, scopeIn } from "../db/company-scope";
import { machines, shiftInstances, stopCauses, stopClassifications, stops } from "../db/schema";
import {
  type ClassificationRow,
  type ReportShift,
  type StopRow,
  toClassificationOut,
  toReportShift,
  toStopOut,
} from "../reports/schemas";
import { type StopWithClassification, stopColumns } from "../reports/stops-report";
import { companyClosuresQuery } from "../shifts/closures";
import { type StoredInstance, storedInstanceColumns } from "../shifts/materialize";
import {
  companyQuery,
  definitionMachinesQuery,
  definitionsQuery,
  MAX_INSTANCE_MS,
  machineIdsQuery,
  toPlan,
} from "../shifts/plan";
import { instancesContaining, loadShiftPlan, type ShiftPlan } from "../shifts/queries";
import {
  type ClassificationChange,
  type ClassificationChangeKind,
  classificationEventStatements,
} from "../webhooks/webhook-events";

/** Where a stop is: its machine and its start (ms). */
export type StopPlace = Pick<StopRow, "machineId" | "startTime">;

/**
 * The shift instance containing a stop's start, in the report shape, or null.
 *
 * @param plan the company's shift plan when the caller has started reading it (read here
 *   otherwise).
 * @param read stored instances the caller read already (`instancesAroundStopQuery`): no D1
 *   round trip when the stop's instance is among them.
 */
export async function shiftOfStop(
  scope: CompanyScope,
  stop: StopPlace,
  now: number,
  plan: Promise<ShiftPlan | null> = loadShiftPlan(scope),
  read: readonly StoredInstance[] = [],
): Promise<ReportShift | null> {
  const resolved = await plan;
  if (!resolved) return null;
  const [instance] = await instancesContaining(
    scope.db,
    resolved,
    [{ machineId: stop.machineId, at: stop.startTime }],
    read,
  );
  return instance ? toReportShift(instance, now) : null;
}

/**
 * The event context of a classification change of `found`: the stop, its machine, the
 * shift containing its start and the classification before the change.
 *
 * @param shift the shift containing the stop's start when the caller looked it up already
 *   (read here when undefined).
 */
export async function classificationChange(
  db: Database,
  found: StopWithClassification & { companyId: number },
  kind: ClassificationChangeKind,
  now: number,
  shift?: ReportShift | null,
) {
  return {
    kind,
    companyId: found.companyId,
    stopId: found.stop.id,
    stop: toStopOut(found.stop, now),
    machine: found.machine,
    shift:
      shift !== undefined
        ? shift
        : await shiftOfStop(scopeIn(db, found.companyId), found.stop, now),
    previous: found.classification.id === null ? null : toClassificationOut(found.classification),
  };
}

const componentCause = alias(stopCauses, "component");
const specificCause = alias(stopCauses, "specific_cause");
const generalCause = alias(stopCauses, "general_cause");

/**
 * The classification of a stop that is not deleted, with its causes, as a
 * `ClassificationRow` (for `toClassificationOut`); no row when the stop is
 * unknown, deleted or unclassified. Run last in the write's batch, it reads the
 * classification as that batch wrote it.
 */
function classificationQuery(db: Database, stopId: number, companyId: number) {
  return db
    .select({
      id: stopClassifications.id,
      createdAt: stopClassifications.createdAt,
      updatedAt: stopClassifications.updatedAt,
      description: stopClassifications.description,
      // Aliased: inside db.batch, D1 returns rows as objects keyed by column
      // name, so the three causes' `id` and `name` would overwrite each other.
      componentId: sql<string | null>`${componentCause.id}`.as("component_id"),
      componentName: sql<string | null>`${componentCause.name}`.as("component_name"),
      specificCauseId: sql<string | null>`${specificCause.id}`.as("specific_cause_id"),
      specificCauseName: sql<string | null>`${specificCause.name}`.as("specific_cause_name"),
      generalCauseId: sql<string | null>`${generalCause.id}`.as("general_cause_id"),
      generalCauseName: sql<string | null>`${generalCause.name}`.as("general_cause_name"),
    })
    .from(stopClassifications)
    .innerJoin(stops, and(eq(stops.id, stopClassifications.stopId), isNull(stops.deletedAt)))
    .leftJoin(componentCause, eq(componentCause.id, stopClassifications.componentId))
    .leftJoin(specificCause, eq(specificCause.id, stopClassifications.specificCauseId))
    .leftJoin(generalCause, eq(generalCause.id, stopClassifications.generalCauseId))
    .where(and(eq(stopClassifications.stopId, stopId), owned({ companyId }, stopClassifications)));
}

/** The classification of a stop that has none. */
const UNCLASSIFIED: ClassificationRow = {
  id: null,
  createdAt: null,
  updatedAt: null,
  description: null,
  componentId: null,
  componentName: null,
  specificCauseId: null,
  specificCauseName: null,
  generalCauseId: null,
  generalCauseName: null,
};

/** The query of a stop of the company that is not deleted, with its machine's name, by id. */
function stopRowQuery(scope: CompanyScope, stopId: number) {
  return scope.db
    .select({
      ...stopColumns,
      // Aliased: a batch's rows are keyed by column name, and `name` is the machine's here.
      machineName: sql<string>`${machines.name}`.as("machine_name"),
    })
    .from(stops)
    .innerJoin(machines, eq(machines.id, stops.machineId))
    .where(owned(scope, stops, eq(stops.id, stopId), isNull(stops.deletedAt)));
}

/**
 * The query of the stored shift instances of a stop's machine that may contain its start
 * (starting in `(start - MAX_INSTANCE_MS, start]`, through the index on machine and start),
 * by the stop's id: nothing to wait for before it, so it goes in a first batch beside the
 * stop itself.
 */
function instancesAroundStopQuery(scope: CompanyScope, stopId: number) {
  const ofStop = (column: typeof stops.startTime | typeof stops.machineId) =>
    sql`(SELECT ${column} FROM ${stops} WHERE ${stops.id} = ${stopId})`;
  const start = ofStop(stops.startTime);
  return scope.db
    .select(storedInstanceColumns)
    .from(shiftInstances)
    .where(
      owned(
        scope,
        shiftInstances,
        eq(shiftInstances.machineId, ofStop(stops.machineId)),
        lte(shiftInstances.start, start),
        gt(shiftInstances.start, sql`${start} - ${MAX_INSTANCE_MS}`),
      ),
    );
}

/**
 * The reads a classification of stop `stopId` starts from, as statements for the caller's
 * first `db.batch` (with its own before them, if any): the stop with its machine, its
 * classification, the stored shift instances around its start and the company's shift plan.
 * Read together, they spare the round trips that would follow one another (the stop, then
 * its shift); `firstReadOf` shapes their results.
 */
export function firstReadStatements(scope: CompanyScope, stopId: number) {
  return [
    stopRowQuery(scope, stopId),
    classificationQuery(scope.db, stopId, scope.companyId),
    instancesAroundStopQuery(scope, stopId),
    companyQuery(scope),
    definitionsQuery(scope),
    definitionMachinesQuery(scope),
    machineIdsQuery(scope),
    companyClosuresQuery(scope),
  ] as const;
}

/** The results of a tuple of queries, in order. */
type ResultsOf<T extends readonly unknown[]> = { readonly [K in keyof T]: Awaited<T[K]> };

/** The results of `firstReadStatements`, in order. */
type FirstReadResults = ResultsOf<ReturnType<typeof firstReadStatements>>;

/** What a classification starts from (`firstReadStatements`), shaped. */
export interface FirstRead {
  /** The stop with its machine and classification; undefined when unknown or deleted. */
  found: (StopWithClassification & { companyId: number }) | undefined;
  /** Stored shift instances that may contain the stop's start. */
  instances: StoredInstance[];
  /** The company's shift plan (null when the company does not exist). */
  plan: ShiftPlan | null;
}

/** The stop's own columns of a first-read row (all of `stopColumns`, without its machine's name). */
function stopOf(row: FirstReadResults[0][number]): StopWithClassification["stop"] {
  const { machineName: _machineName, ...stop } = row;
  return stop;
}

/** Shapes the results of `firstReadStatements(scope, ...)`. */
export function firstReadOf(scope: CompanyScope, results: FirstReadResults): FirstRead {
  const [[row], [classification], instances, company, defs, links, machineRows, closures] = results;
  const found =
    row === undefined
      ? undefined
      : {
          stop: stopOf(row),
          machine: { id: row.machineId, name: row.machineName },
          classification: classification ?? UNCLASSIFIED,
          companyId: scope.companyId,
        };
  return {
    found,
    instances,
    plan: toPlan(scope.companyId, company, defs, links, machineRows, closures),
  };
}

/**
 * The last two results of a `db.batch` whose statements begin with a variable
 * number of writes, typed as the batch typed them (reading them by index would
 * lose the types).
 */
function lastTwo<D, Q>(results: readonly [...unknown[], D, Q]): [D, Q] {
  return [results[results.length - 2], results[results.length - 1]] as [D, Q];
}

/** The classification a write replaces: its id and `updatedAt` (ms), or null for none. */
interface ReplacedClassification {
  id: number;
  updatedAt: number;
}

/** A classification to write: cause names (trimmed; null = none) and a description. */
export interface ClassificationInput {
  description: string | null;
  component: string | null;
  specificCause: string | null;
  generalCause: string | null;
}

/**
 * Creates or replaces the classification of a stop of the company, with its causes (found
 * by name in the company's catalog or created) and the webhook event of `change`, in one
 * batch, provided the stop's classification is still `replaces` (null: the stop has none).
 *
 * @param options.addCauses false when every cause named is in the catalog already (the
 *   caller found it there; causes are never removed): no statement adds them.
 * @returns `applied` false when the classification changed since it was read (nothing was
 *   written but causes, no event); else the event's id and deliveries (to dispatch), and the
 *   classification as written (undefined when the stop was deleted meanwhile).
 */
export async function putClassification(
  scope: CompanyScope,
  stopId: number,
  input: ClassificationInput,
  change: ClassificationChange,
  replaces: ReplacedClassification | null,
  options: { addCauses: boolean } = { addCauses: true },
) {
  const { db, companyId } = scope;
  const names = {
    component: input.component,
    specific_cause: input.specificCause,
    general_cause: input.generalCause,
  } as const;
  const causes: BatchItem<"sqlite">[] = [];
  for (const [kind, name] of Object.entries(names) as [keyof typeof names, string | null][]) {
    if (name === null || !options.addCauses) continue;
    causes.push(
      db
        .insert(stopCauses)
        .values({ id: crypto.randomUUID(), companyId, kind, name })
        .onConflictDoNothing(),
    );
  }
  const causeId = (kind: keyof typeof names) =>
    sql`(SELECT id FROM stop_causes WHERE ${ownedSql({ companyId })} AND kind = ${kind} AND name = ${names[kind]})`;
  const values = {
    description: input.description,
    componentId: causeId("component"),
    specificCauseId: causeId("specific_cause"),
    generalCauseId: causeId("general_cause"),
  };
  // A first classification is inserted only if the stop still has none; a replacement
  // updates only the row that was read, as it was read. Either way the statement that
  // follows (the webhook event) is written only if this one changed a row.
  const write =
    replaces === null
      ? db
          .insert(stopClassifications)
          .values({ companyId, stopId, ...values })
          .onConflictDoNothing({ target: stopClassifications.stopId })
          .returning({ id: stopClassifications.id })
      : db
          .update(stopClassifications)
          .set({ ...values, updatedAt: sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)` })
          .where(
            and(
              eq(stopClassifications.stopId, stopId),
              eq(stopClassifications.id, replaces.id),
              eq(stopClassifications.updatedAt, replaces.updatedAt),
              owned({ companyId }, stopClassifications),
            ),
          )
          .returning({ id: stopClassifications.id });
  const event = classificationEventStatements(db, change);
  // The causes, then the classification that refers to them; `head` is typed
  // apart because db.batch wants a tuple with a first element.
  const [head = write, ...middle] = [...causes, write];
  const results = await db.batch([
    head,
    ...middle,
    event.event,
    event.deliveries,
    classificationQuery(db, stopId, companyId),
  ] as const);
  const [deliveries, [written]] = lastTwo(results);
  // The write comes right after the causes; both of its forms return the ids they wrote.
  const wrote = results[causes.length] as { id: number }[];
  return { applied: wrote.length > 0, eventId: event.eventId, deliveries, written };
}

/**
 * The statements that delete a stop's classification with the webhook event of `change`
 * (`MachineStopClassificationDeleted`), for a batch of the caller's: the delete, which
 * returns the id it deleted, then the event and its deliveries (written only if the delete
 * removed a row). The detector runs them after its own removal of the stop, in one batch.
 *
 * @param options.onlyIfStopDeleted delete only when the stop is deleted by then (an earlier
 *   statement of the same batch removed it): a stop a person took over keeps its reason.
 * @returns the statements in order, and the event's id.
 */
export function classificationDeletion(
  db: Database,
  stopId: number,
  change: ClassificationChange,
  options: { onlyIfStopDeleted?: boolean } = {},
) {
  const event = classificationEventStatements(db, change);
  const remove = db
    .delete(stopClassifications)
    .where(
      and(
        eq(stopClassifications.stopId, stopId),
        options.onlyIfStopDeleted
          ? sql`EXISTS (SELECT 1 FROM stops WHERE stops.id = ${stopId} AND stops.deleted_at IS NOT NULL)`
          : undefined,
      ),
    )
    .returning({ id: stopClassifications.id });
  return { eventId: event.eventId, statements: [remove, event.event, event.deliveries] as const };
}

/**
 * Deletes the classification of a stop with the webhook event of `change`, in one batch.
 *
 * @returns `deleted` false when another request deleted it first (then no event is
 *   written); the event's id and deliveries (to dispatch).
 */
export async function deleteClassification(
  db: Database,
  stopId: number,
  change: ClassificationChange,
) {
  const deletion = classificationDeletion(db, stopId, change);
  const [removed, , deliveries] = await db.batch(deletion.statements);
  return { deleted: removed.length > 0, eventId: deletion.eventId, deliveries };
}
