/**
 * D1 queries of the operator's stop routes (./routes.ts): create, edit and delete.
 * The operator addresses a stop by its global id; a created stop takes the company of
 * its machine.
 */

import { and, eq, isNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, softDeleted } from "../../db/company-scope";
import { stops } from "../../db/schema";
import { stopColumns } from "../../reports/stops-report";

/** A stop to create (times in ms since the epoch; `endTime` null or absent = open). */
export interface StopInput {
  startTime: number;
  endTime?: number | null | undefined;
  isProgrammed: boolean;
  isIncludedInAvailability?: boolean | undefined;
  isIncludedInStops?: boolean | undefined;
  isManual?: boolean | undefined;
}

/** The fields of a stop an edit may change (undefined = unchanged). */
export type StopPatch = Partial<{
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
  isIncludedInAvailability: boolean;
  isIncludedInStops: boolean;
  isManual: boolean;
}>;

/**
 * Creates stops of a machine of the company in one batch (all or none); the flags
 * default to included in availability and stops, not manual.
 *
 * @returns the created rows in order (`stopColumns`).
 */
export async function createStops(
  scope: CompanyScope,
  machineId: number,
  items: readonly StopInput[],
) {
  const { db, companyId } = scope;
  const [first, ...rest] = items.map((s) =>
    db
      .insert(stops)
      .values({
        companyId,
        machineId,
        startTime: s.startTime,
        endTime: s.endTime ?? null,
        isProgrammed: s.isProgrammed,
        isIncludedInAvailability: s.isIncludedInAvailability ?? true,
        isIncludedInStops: s.isIncludedInStops ?? true,
        isManual: s.isManual ?? false,
        origin: "operatorApi",
      })
      .returning(stopColumns),
  );
  if (!first) return [];
  return (await db.batch([first, ...rest])).flat();
}

/** A stop's times as the store holds them: shown, and its own as recorded. */
interface StopTimes {
  /** The times it shows (with the detected downtime it took in, if any). */
  startTime: number;
  endTime: number | null;
  /** Its own times as recorded (equal to the shown ones when it took in no downtime). */
  recordedStartTime: number;
  recordedEndTime: number | null;
  companyId: number;
}

/** The times and company of a stop that is not deleted, or null. */
export async function findNotDeletedStop(db: Database, stopId: number): Promise<StopTimes | null> {
  const merged = sql`${stops.detectedStartTime} IS NOT NULL`;
  const row = await db
    .select({
      startTime: stops.startTime,
      endTime: stops.endTime,
      recordedStartTime: sql<number>`CASE WHEN ${merged} THEN ${stops.recordedStartTime} ELSE ${stops.startTime} END`,
      recordedEndTime: sql<
        number | null
      >`CASE WHEN ${merged} THEN ${stops.recordedEndTime} ELSE ${stops.endTime} END`,
      companyId: stops.companyId,
    })
    .from(stops)
    .where(and(eq(stops.id, stopId), isNull(stops.deletedAt)))
    .get();
  return row ?? null;
}

/**
 * Writes `changes` to a stop that is not deleted, guarded on the times read before
 * (`current`), so that a concurrent edit cannot slip an end before the start. Times edit the
 * stop's own (recorded) times: the stop shows them alone, without the detected downtime it
 * took in, until its machine's detector takes that in again (the route tells it at once).
 *
 * @returns the stop as written (`stopColumns`), or null when it is deleted or its times
 *   changed meanwhile.
 */
export async function updateStop(
  db: Database,
  stopId: number,
  current: StopTimes,
  changes: StopPatch,
) {
  const set = Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  );
  const row = await db
    .update(stops)
    // A person's edit makes a detected stop a recorded one (docs/machine-state.md).
    .set({
      startTime: current.recordedStartTime,
      endTime: current.recordedEndTime,
      ...set,
      detectedStartTime: null,
      detectedEndTime: null,
      recordedStartTime: null,
      recordedEndTime: null,
      detectionKey: null,
      updatedAt: sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`,
    })
    .where(
      and(
        eq(stops.id, stopId),
        isNull(stops.deletedAt),
        eq(stops.startTime, current.startTime),
        current.endTime === null ? isNull(stops.endTime) : eq(stops.endTime, current.endTime),
      ),
    )
    .returning(stopColumns)
    .get();
  return row ?? null;
}

/**
 * Soft-deletes a stop (`deletedAt` set).
 *
 * @returns the deleted stop with its company, or null when unknown or already deleted.
 */
export async function deleteStop(db: Database, stopId: number) {
  const row = await db
    .update(stops)
    .set(softDeleted(stops))
    .where(and(eq(stops.id, stopId), isNull(stops.deletedAt)))
    .returning({ ...stopColumns, companyId: stops.companyId, detectionKey: stops.detectionKey })
    .get();
  return row ?? null;
}
