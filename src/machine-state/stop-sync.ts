/**
 * Writes the detected stops the store wants to D1 (the company's shard, `companyDb`), as rows
 * of the stops table (`origin` detected, `isManual` false, `isProgrammed` false, in
 * availability and in stops), and the detected downtime recorded stops take in (their times
 * the union of both); and tells the machine's live stream what changed: `stop.started` when
 * a stop opens, `stop.ended` when it closes, `stop.updated` or `stop.deleted` when later
 * samples move or remove it (docs/machine-state.md, "Writes").
 *
 * Each write is keyed by the stop's `detection_key`, so a write resent after a crash finds
 * the row it made. A row a person deleted or edited meanwhile (no longer the detector's) is
 * left as it is. A removed stop that had a classification loses it through the one
 * classification path (src/stops/classification-queries.ts `classificationDeletion`):
 * `MachineStopClassificationDeleted` (webhook) and `stop.unclassified` (stream).
 */
import { eq, isNull, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, owned, softDeleted } from "../db/company-scope";
import { stops } from "../db/schema";
import { companyDb } from "../db/shards";
import type { StopOrigin } from "../db/stop-origins";
import type { Env } from "../env";
import { findStopWithClassification, stopColumns } from "../reports/stops-report";
import { classificationChange, classificationDeletion } from "../stops/classification-queries";
import { stopEvent, stopUnclassified } from "../streams/payloads";
import type { MachinePublisher } from "../streams/publish";
import { dispatchDeliveries } from "../webhooks/webhook-events";
import type { MergeSpan } from "./merge-tables";
import { shownSpan } from "./parts";
import type { DetectedRow, DetectorTables } from "./tables";

type Span = { start: number; end: number | null };

/** Most stops written in one D1 batch. */
const SYNC_BATCH = 50;

const NOW_MS = sql`CAST(unixepoch('subsec') * 1000 AS INTEGER)`;

type StopOutRow = {
  id: number;
  machineId: number;
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
  isIncludedInAvailability: boolean;
  isIncludedInStops: boolean;
  isManual: boolean;
  origin: StopOrigin;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
};

/** One row's write: its statements, and what to do once D1 answered. */
interface Write {
  row: DetectedRow;
  statements: BatchItem<"sqlite">[];
  /** Index in the batch of the statement whose RETURNING is the stop. */
  returns: number;
  /** The webhook event of a classification removed with the stop. */
  event?: { eventId: string; deliveriesAt: number };
  classified: boolean;
}

/**
 * What a sync of stops to D1 works with: the Worker's bindings, the store's detector tables,
 * the store's machine (its company picks the shard), the machine's stream publisher in this
 * store (events staged with the record of what D1 holds, in one synchronous step), and where
 * work after the write is handed (the store's `waitUntil`).
 */
interface StopSync {
  env: Env;
  tables: DetectorTables;
  machine: { companyId: number; machineId: number };
  publisher: MachinePublisher;
  background: (work: Promise<unknown>) => void;
}

/**
 * Writes every stop the store wants differently from what D1 holds, `SYNC_BATCH` at a time,
 * each batch in one D1 call; then stages the stream events in the store's outbox.
 *
 * @param sync the bindings, tables, machine, publisher and background hand-over (StopSync).
 * @returns once nothing is left to write; throws when D1 fails (the rows stay to write, and
 *   the caller retries).
 */
export async function syncDetectedStops(sync: StopSync): Promise<void> {
  const { env, tables, machine, publisher, background } = sync;
  for (;;) {
    const rows = tables.dirty(SYNC_BATCH);
    if (rows.length === 0) break;
    const toWrite: DetectedRow[] = [];
    for (const row of rows) {
      // A stop that went before D1 ever had it needs no write.
      if (row.removed && row.synced === null) tables.forgetDetected(row.key);
      else toWrite.push(row);
    }
    if (toWrite.length === 0) continue;
    const db = await companyDb(env, machine.companyId);
    const scope: CompanyScope = { db, companyId: machine.companyId };
    const writes: Write[] = [];
    const statements: BatchItem<"sqlite">[] = [];
    for (const row of toWrite) {
      const write = await writeOf(scope, machine.machineId, row);
      write.returns += statements.length;
      if (write.event) write.event.deliveriesAt += statements.length;
      statements.push(...write.statements);
      writes.push(write);
    }
    const [head, ...rest] = statements;
    if (!head) continue;
    const results = (await db.batch([head, ...rest])) as unknown[];
    for (const write of writes) {
      const stop = (results[write.returns] as StopOutRow[] | undefined)?.[0];
      const { row } = write;
      if (!stop) {
        // Not the detector's any more: a person deleted the stop or took it over.
        tables.forgetDetected(row.key);
        continue;
      }
      const written = { start: stop.startTime, end: stop.endTime, removed: write.row.removed };
      const wasOpen = row.synced !== null && row.synced.end === null;
      tables.markSynced(row.key, stop.id, written);
      if (row.removed) {
        if (write.classified) publisher.stage(stopUnclassified(stop.id));
        publisher.stage(stopEvent(stop, "deleted"));
      } else if (row.synced === null) publisher.stage(stopEvent(stop, "created"));
      else if (row.synced.start !== stop.startTime || row.synced.end !== stop.endTime) {
        publisher.stage(stopEvent(stop, "updated", wasOpen));
      }
      if (write.event) {
        const deliveries = results[write.event.deliveriesAt] as { id: string; webhookId: string }[];
        background(dispatchDeliveries(env, scope, write.event.eventId, deliveries));
      }
    }
    background(publisher.drain());
  }
  await syncMerges(sync);
}

/**
 * Writes the detected downtime recorded stops take in (docs/machine-state.md, "Recorded
 * stops take in detected downtime"), `SYNC_BATCH` at a time: the stop's times become the
 * union of its own and the downtime's, its own kept in `recorded_*`; or, taking none any
 * more, its own again. Each write is guarded on the stop's own times as the store knows
 * them: a stop a person edited or deleted meanwhile is left as it is (the operator route
 * tells the store, which evaluates it again). Stages `stop.updated` (or `stop.ended`) when
 * the stop's times changed.
 */
async function syncMerges(sync: StopSync): Promise<void> {
  const { env, tables, machine, publisher, background } = sync;
  for (;;) {
    const merges = tables.dirtyMerges(SYNC_BATCH);
    if (merges.length === 0) return;
    const db = await companyDb(env, machine.companyId);
    const writes: {
      id: number;
      taken: MergeSpan | null;
      before: Span;
      statement: BatchItem<"sqlite">;
    }[] = [];
    for (const m of merges) {
      const own = tables.recorded(m.id);
      if (!own) {
        tables.forgetMerge(m.id);
        continue;
      }
      const shown = shownSpan(own, m.wanted);
      const merged = sql`${stops.detectedStartTime} IS NOT NULL`;
      const ownStart = sql`CASE WHEN ${merged} THEN ${stops.recordedStartTime} ELSE ${stops.startTime} END`;
      const ownEnd = sql`CASE WHEN ${merged} THEN ${stops.recordedEndTime} ELSE ${stops.endTime} END`;
      const statement = db
        .update(stops)
        .set({
          startTime: shown.start,
          endTime: shown.end,
          detectedStartTime: m.wanted?.start ?? null,
          detectedEndTime: m.wanted?.end ?? null,
          recordedStartTime: m.wanted ? own.start : null,
          recordedEndTime: m.wanted ? own.end : null,
          updatedAt: NOW_MS,
        })
        .where(
          owned(
            { companyId: machine.companyId },
            stops,
            eq(stops.id, m.id),
            eq(stops.machineId, machine.machineId),
            isNull(stops.deletedAt),
            isNull(stops.detectionKey),
            sql`${ownStart} = ${own.start}`,
            own.end === null ? sql`${ownEnd} IS NULL` : sql`${ownEnd} = ${own.end}`,
          ),
        )
        .returning(stopColumns);
      writes.push({ id: m.id, taken: m.wanted, before: shownSpan(own, m.synced), statement });
    }
    const [head, ...rest] = writes.map((w) => w.statement);
    if (!head) continue;
    const results = (await db.batch([head, ...rest])) as unknown[];
    writes.forEach((w, i) => {
      const stop = (results[i] as StopOutRow[] | undefined)?.[0];
      if (!stop) {
        // Edited or deleted meanwhile: the operator route tells the store.
        tables.forgetMerge(w.id);
        return;
      }
      tables.mergeSynced(w.id, w.taken);
      if (w.before.start !== stop.startTime || w.before.end !== stop.endTime) {
        publisher.stage(stopEvent(stop, "updated", w.before.end === null));
      }
    });
    background(publisher.drain());
  }
}

/** The statements of one row's write. */
async function writeOf(scope: CompanyScope, machineId: number, row: DetectedRow): Promise<Write> {
  const { db, companyId } = scope;
  const mine = owned(
    { companyId },
    stops,
    eq(stops.detectionKey, row.key),
    isNull(stops.deletedAt),
  );
  if (!row.removed && row.synced === null) {
    const insert = db
      .insert(stops)
      .values({
        companyId,
        machineId,
        startTime: row.start,
        endTime: row.end,
        isProgrammed: false,
        isIncludedInAvailability: true,
        isIncludedInStops: true,
        isManual: false,
        origin: "detected",
        detectionKey: row.key,
      })
      .onConflictDoUpdate({
        target: stops.detectionKey,
        set: { startTime: row.start, endTime: row.end, updatedAt: NOW_MS },
        setWhere: isNull(stops.deletedAt),
      })
      .returning(stopColumns);
    return { row, statements: [insert], returns: 0, classified: false };
  }
  if (!row.removed) {
    const update = db
      .update(stops)
      .set({ startTime: row.start, endTime: row.end, updatedAt: NOW_MS })
      .where(mine)
      .returning(stopColumns);
    return { row, statements: [update], returns: 0, classified: false };
  }
  const remove = db.update(stops).set(softDeleted(stops)).where(mine).returning(stopColumns);
  const found =
    row.stopId === null ? undefined : await findStopWithClassification(db, row.stopId, companyId);
  if (!found || found.classification.id === null) {
    return { row, statements: [remove], returns: 0, classified: false };
  }
  // The one classification path's deletion (src/stops/), after the removal: only a stop the
  // detector did remove loses its reason, with its webhook event.
  const change = await classificationChange(db, found, "Deleted", Date.now());
  const deletion = classificationDeletion(db, found.stop.id, change, { onlyIfStopDeleted: true });
  return {
    row,
    statements: [remove, ...deletion.statements],
    returns: 0,
    event: { eventId: deletion.eventId, deliveriesAt: 3 },
    classified: true,
  };
}
