/**
 * The stops report (`POST /v1/reports/stops`): one row per stop with its classification,
 * machine and the shift instance containing its start (null outside any shift), ordered by
 * `startTime` then id, without deleted stops or those with `isIncludedInStops = false`; an
 * open stop's duration runs to now and any `endDate` operator leaves it out. One count and one
 * page query in one batch, then the page's instances only. docs/resources.md (the reports).
 */

import { z } from "@hono/zod-openapi";
import { and, asc, count, desc, eq, gte, isNull, type SQL, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Database } from "../db/client";
import { type CompanyScope, type NamedScope, owned, ownedSql } from "../db/company-scope";
import { machines, stopCauses, stopClassifications, stops } from "../db/schema";
import {
  DateComparisonFilter,
  dateConditions,
  IdComparisonFilter,
  idComparisonConditions,
  inIntegerList,
  MachinesFilter,
} from "../http/filters";
import { emptyPage, type Page, PageFields, type PageRequest, paginate } from "../http/pagination";
import { SyncFilterFields, syncConditions, syncOrder } from "../http/sync";
import { CompanyRefSchema } from "../resources/references";
import { loadShiftPlan } from "../shifts/plan";
import { instancesContaining } from "../shifts/queries";
import { filterMachines } from "./machine-filter";
import {
  type ClassificationRow,
  ClassificationSchema,
  originCondition,
  ReportMachineSchema,
  ReportShiftSchema,
  StopOriginFilter,
  type StopRow,
  StopSchema,
  toClassificationOut,
  toReportShift,
  toStopOut,
} from "./schemas";

export const StopsReportFiltersSchema = z
  .object({
    ...PageFields,
    machines: MachinesFilter.openapi({
      description: "`search` (fuzzy, on the machine name), `include`, `exclude` (machine ids).",
    }),
    stopId: IdComparisonFilter.openapi({
      description: "Stop ids: `include`, `exclude` and numeric comparisons, all applied.",
    }),
    startDate: DateComparisonFilter.openapi({ description: "On the stop's `startTime`." }),
    endDate: DateComparisonFilter.openapi({
      description: "On the stop's `endTime`; an open stop matches no operator.",
    }),
    origin: StopOriginFilter,
    ...SyncFilterFields,
  })
  .strict()
  .openapi("StopsReportFilters");

export type StopsReportFilters = z.infer<typeof StopsReportFiltersSchema>;

export const StopsReportRowSchema = z
  .object({
    classification: ClassificationSchema,
    company: CompanyRefSchema,
    machine: ReportMachineSchema,
    // `.or(z.null())`: `.nullable()` of a registered schema would make the component itself
    // nullable in the document (zod-openapi); see MachineRefObject in resources/references.ts.
    shift: ReportShiftSchema.or(z.null()).openapi({
      description: "The shift instance containing the stop's start; null when none.",
    }),
    stop: StopSchema,
  })
  .openapi("StopsReportRow");

export type StopsReportRow = z.infer<typeof StopsReportRowSchema>;

const component = alias(stopCauses, "component");
const specificCause = alias(stopCauses, "specific_cause");
const generalCause = alias(stopCauses, "general_cause");

/** Columns of a stop row. */
export const stopColumns = {
  id: stops.id,
  machineId: stops.machineId,
  startTime: stops.startTime,
  endTime: stops.endTime,
  isProgrammed: stops.isProgrammed,
  isIncludedInAvailability: stops.isIncludedInAvailability,
  isIncludedInStops: stops.isIncludedInStops,
  isManual: stops.isManual,
  origin: stops.origin,
  detectedStartTime: stops.detectedStartTime,
  detectedEndTime: stops.detectedEndTime,
  createdAt: stops.createdAt,
  updatedAt: stops.updatedAt,
  deletedAt: stops.deletedAt,
};

/** Columns of a classification joined with its causes (use with `withClassification`). */
const classificationColumns = {
  classificationId: stopClassifications.id,
  classificationCreatedAt: stopClassifications.createdAt,
  classificationUpdatedAt: stopClassifications.updatedAt,
  description: stopClassifications.description,
  componentId: component.id,
  componentName: component.name,
  specificCauseId: specificCause.id,
  specificCauseName: specificCause.name,
  generalCauseId: generalCause.id,
  generalCauseName: generalCause.name,
};

interface JoinedClassification {
  classificationId: number | null;
  classificationCreatedAt: number | null;
  classificationUpdatedAt: number | null;
  description: string | null;
  componentId: string | null;
  componentName: string | null;
  specificCauseId: string | null;
  specificCauseName: string | null;
  generalCauseId: string | null;
  generalCauseName: string | null;
}

function toClassificationRow(r: JoinedClassification): ClassificationRow {
  return {
    id: r.classificationId,
    createdAt: r.classificationCreatedAt,
    updatedAt: r.classificationUpdatedAt,
    description: r.description,
    componentId: r.componentId,
    componentName: r.componentName,
    specificCauseId: r.specificCauseId,
    specificCauseName: r.specificCauseName,
    generalCauseId: r.generalCauseId,
    generalCauseName: r.generalCauseName,
  };
}

/** A stop of the company with its machine and classification (all-null when unclassified). */
export interface StopWithClassification {
  stop: StopRow;
  machine: { id: number; name: string };
  classification: ClassificationRow;
}

function selectStopsWithClassification(db: Database) {
  return db
    .select({
      ...stopColumns,
      companyId: stops.companyId,
      machineName: machines.name,
      ...classificationColumns,
    })
    .from(stops)
    .innerJoin(machines, eq(machines.id, stops.machineId))
    .leftJoin(stopClassifications, eq(stopClassifications.stopId, stops.id))
    .leftJoin(component, eq(component.id, stopClassifications.componentId))
    .leftJoin(specificCause, eq(specificCause.id, stopClassifications.specificCauseId))
    .leftJoin(generalCause, eq(generalCause.id, stopClassifications.generalCauseId));
}

type JoinedStop = StopRow & { machineName: string } & JoinedClassification;

function splitJoined(r: JoinedStop): StopWithClassification {
  return {
    stop: {
      id: r.id,
      machineId: r.machineId,
      startTime: r.startTime,
      endTime: r.endTime,
      isProgrammed: r.isProgrammed,
      isIncludedInAvailability: r.isIncludedInAvailability,
      isIncludedInStops: r.isIncludedInStops,
      isManual: r.isManual,
      origin: r.origin,
      detectedStartTime: r.detectedStartTime,
      detectedEndTime: r.detectedEndTime,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      deletedAt: r.deletedAt,
    },
    machine: { id: r.machineId, name: r.machineName },
    classification: toClassificationRow(r),
  };
}

/**
 * One stop (any company when `companyId` is null: the operator sees all) that
 * is not deleted, with its machine and classification.
 *
 * @returns the stop, or undefined when unknown or deleted.
 */
export async function findStopWithClassification(
  db: Database,
  stopId: number,
  companyId: number | null = null,
): Promise<(StopWithClassification & { companyId: number }) | undefined> {
  const row = await selectStopsWithClassification(db)
    .where(
      and(
        eq(stops.id, stopId),
        isNull(stops.deletedAt),
        companyId === null ? undefined : owned({ companyId }, stops),
      ),
    )
    .get();
  return row ? { ...splitJoined(row), companyId: row.companyId } : undefined;
}

/**
 * One page of the stops report.
 *
 * @param scope the caller (its company scopes every query and fills `company`).
 * @param filters the parsed body.
 * @param page page and limit.
 * @param now the current instant, ms (open stops, `isActive`).
 * @returns the page of rows and the totals.
 */
export async function stopsReport(
  scope: NamedScope,
  filters: StopsReportFilters,
  page: PageRequest,
  now: number,
): Promise<Page<StopsReportRow>> {
  const { db } = scope;
  const companyId = scope.companyId;
  const machineRefs = await filterMachines(scope, filters.machines);
  if (machineRefs.length === 0) {
    return emptyPage(page);
  }
  const conditions: (SQL | undefined)[] = [
    owned({ companyId }, stops),
    ...syncConditions(stops, filters),
    eq(stops.isIncludedInStops, true),
    inIntegerList(
      stops.machineId,
      machineRefs.map((m) => m.id),
    ),
    ...idComparisonConditions(stops.id, filters.stopId),
    ...dateConditions(stops.startTime, filters.startDate),
    ...dateConditions(stops.endTime, filters.endDate),
    originCondition(stops.origin, filters.origin),
  ];
  const where = and(...conditions);
  const found = await paginate(
    page,
    db.select({ count: count() }).from(stops).where(where),
    ({ limit, offset }) =>
      selectStopsWithClassification(db)
        .where(where)
        .orderBy(...syncOrder(stops, filters, [asc(stops.startTime), asc(stops.id)]))
        .limit(limit)
        .offset(offset),
  );
  return { ...found, rows: await reportRows(scope, found.rows.map(splitJoined), now) };
}

/**
 * A stop as the webhook events of its stop carry it: a row of the stops report without
 * `company` (the envelope's company is the receiver's), built by the same function.
 */
export type StopEventRow = Omit<StopsReportRow, "company">;

/**
 * Stops with their classification as rows of the report without their company: the shift
 * instance containing each one's start (one read of the shift plan, one of the instances).
 * The one builder of a stop's row, for the report and the webhook events alike.
 */
async function stopRows(
  scope: CompanyScope,
  items: readonly StopWithClassification[],
  now: number,
): Promise<StopEventRow[]> {
  const plan = items.length > 0 ? await loadShiftPlan(scope) : null;
  const shifts = plan
    ? await instancesContaining(
        scope.db,
        plan,
        items.map((i) => ({ machineId: i.stop.machineId, at: i.stop.startTime })),
      )
    : [];
  return items.map((item, index) => {
    const shift = shifts[index] ?? null;
    return {
      classification: toClassificationOut(item.classification),
      machine: item.machine,
      shift: shift ? toReportShift(shift, now) : null,
      stop: toStopOut(item.stop, now),
    };
  });
}

/** Stops with their classification as rows of the report, with their company. */
async function reportRows(
  scope: NamedScope,
  items: readonly StopWithClassification[],
  now: number,
): Promise<StopsReportRow[]> {
  const company = { id: scope.companyId, name: scope.companyName };
  return (await stopRows(scope, items, now)).map((row) => ({
    classification: row.classification,
    company,
    machine: row.machine,
    shift: row.shift,
    stop: row.stop,
  }));
}

/**
 * Stops of the company that are not deleted, by id, as rows of the stops report without
 * their company (`StopEventRow`: what the webhook events of a stop carry), whatever their
 * flags. One read of the stops, then the shift instances of their starts.
 *
 * @param stopIds the stops (a list of any length: `inIntegerList`).
 * @param now the current instant, ms (open stops' duration, `isActive`).
 * @returns the rows by stop id; an unknown, deleted or other company's stop is absent.
 */
export async function stopRowsByIds(
  scope: CompanyScope,
  stopIds: readonly number[],
  now: number,
): Promise<Map<number, StopEventRow>> {
  if (stopIds.length === 0) return new Map();
  const found = await selectStopsWithClassification(scope.db)
    .where(and(owned(scope, stops), inIntegerList(stops.id, stopIds), isNull(stops.deletedAt)))
    .all();
  const rows = await stopRows(scope, found.map(splitJoined), now);
  return new Map(rows.map((row) => [row.stop.id, row]));
}

/**
 * A machine's stops begun by `now` that are open, or ended at or after `since`, newest start
 * first, as rows of the report (deleted stops left out; every flag kept, so the row shows it). Two
 * reads, each a range of the index on the machine's stop ends (`stops_machine_end_idx`):
 * an `OR` of both would make SQLite read every stop the machine ever had.
 *
 * @param scope the caller (its company scopes the query and fills `company`).
 * @param since ms: stops that ended before it are left out.
 * @param limit most rows (the newest).
 * @param now the current instant, ms (stops starting after it are left out; open stops'
 *   duration, `isActive`).
 */
export async function machineStopsSince(
  scope: NamedScope,
  machineId: number,
  since: number,
  limit: number,
  now: number,
): Promise<StopsReportRow[]> {
  const { db } = scope;
  // The unary plus on the company and on the order's start keeps SQLite on the index of the
  // machine's stop ends: the company's indexes, or the machine's on starts (which the order
  // would tempt it to walk), hold every stop ever (test/realtime/stop-reason-work.test.ts).
  const newest = [desc(sql`+${stops.startTime}`), desc(stops.id)];
  const ofMachine = (end: SQL) =>
    selectStopsWithClassification(db)
      .where(
        and(
          ownedSql(scope, "+stops.company_id"),
          eq(stops.machineId, machineId),
          isNull(stops.deletedAt),
          // Begun by now: a stop recorded (or once detected) in the future is not offered.
          sql`+${stops.startTime} <= ${now}`,
          end,
        ),
      )
      .orderBy(...newest)
      .limit(limit);
  // Not one db.batch: inside a batch D1 keys a row's columns by name, and the three
  // causes' `id` and `name` would overwrite each other.
  const [open, ended] = await Promise.all([
    ofMachine(isNull(stops.endTime)),
    ofMachine(gte(stops.endTime, since)),
  ]);
  const rows = [...open, ...ended]
    .sort((a, b) => b.startTime - a.startTime || b.id - a.id)
    .slice(0, limit);
  return reportRows(scope, rows.map(splitJoined), now);
}
