/**
 * Shift instances written as rows of `shift_instances`, only those a request needs: the
 * instances of a report's page, the KPI report's instances that have records, the shift of a
 * log or of a machine now. A row is written once (`INSERT OR IGNORE` on definition, machine
 * and start) and its id is the instance's stable id. Also each machine's first activity, from
 * which a report covers its instances. docs/bounded-work.md ("Any range at once").
 */

import { and, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import { type CompanyScope, owned, ownedSql, scopeIn } from "../db/company-scope";
import { machines, productionLogs, shiftInstances, stops } from "../db/schema";
import { yieldToOtherRequests } from "../http/budget";
import type { PlannedInstance } from "./plan";

/**
 * Rows per `INSERT ... SELECT FROM json_each(?)` statement (one bound JSON parameter each),
 * and instances looked up per statement: few enough that one statement holds D1 a few
 * milliseconds.
 */
const INSERT_CHUNK = 500;

/** `INSERT OR IGNORE` statements for planned instances, one per chunk of rows. */
function insertStatements(
  scope: CompanyScope,
  rows: readonly PlannedInstance[],
): BatchItem<"sqlite">[] {
  const { db, companyId } = scope;
  const out: BatchItem<"sqlite">[] = [];
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows
      .slice(i, i + INSERT_CHUNK)
      .map((r) => [r.definitionId, r.machineId, r.start, r.end]);
    // Every column in table order (id NULL = autoincrement); `WHERE true` lets SQLite parse
    // the ON CONFLICT clause after a SELECT. (Drizzle cannot batch raw `db.run` statements.)
    out.push(
      db
        .insert(shiftInstances)
        .select(
          sql`SELECT NULL, CAST(${companyId} AS INTEGER), json_extract(value, '$[0]'),
                json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]')
              FROM json_each(${JSON.stringify(chunk)}) WHERE true`,
        )
        .onConflictDoNothing(),
    );
  }
  return out;
}

/** A stored instance row: its id, definition, machine and window (ms). */
export interface StoredInstance {
  id: number;
  definitionId: number;
  machineId: number;
  start: number;
  end: number;
}

/**
 * The columns of `shift_instances` read as a {@link StoredInstance}: a select of them over
 * the table gives its rows (`db.select(storedInstanceColumns).from(shiftInstances)`).
 */
export const storedInstanceColumns = {
  id: shiftInstances.id,
  definitionId: shiftInstances.shiftDefinitionId,
  machineId: shiftInstances.machineId,
  start: shiftInstances.start,
  end: shiftInstances.end,
};

/** The key of an instance among a company's: definition, machine and start. */
export const instanceKey = (r: { definitionId: number; machineId: number; start: number }) =>
  `${r.definitionId}:${r.machineId}:${r.start}`;

/** The stored rows of planned instances (some may be missing), in one statement. */
function lookupStatement(db: Database, companyId: number, planned: readonly PlannedInstance[]) {
  const keys = JSON.stringify(planned.map((r) => [r.definitionId, r.machineId, r.start]));
  const condition: SQL = sql`(${shiftInstances.shiftDefinitionId}, ${shiftInstances.machineId},
      ${shiftInstances.start})
    IN (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
        FROM json_each(${keys}))`;
  return db
    .select(storedInstanceColumns)
    .from(shiftInstances)
    .where(and(owned({ companyId }, shiftInstances), condition));
}

/**
 * The stored rows of planned instances, writing those not stored yet: a read first (an
 * instance is written once, the first time it is needed, and every later request is a read
 * alone: an `INSERT OR IGNORE` of a stored row still takes D1's one writer), then the
 * missing ones inserted and read back in one batch. `INSERT_CHUNK` instances per statement,
 * the isolate yielding between chunks.
 *
 * @param db the company's database; `companyId` the company of every instance given.
 * @param planned instances of the company's plan (definitions and machines of it).
 * @returns the rows by `instanceKey`.
 */
export async function storedInstances(
  db: Database,
  companyId: number,
  planned: readonly PlannedInstance[],
): Promise<Map<string, StoredInstance>> {
  const out = new Map<string, StoredInstance>();
  for (let i = 0; i < planned.length; i += INSERT_CHUNK) {
    if (i > 0) await yieldToOtherRequests();
    const chunk = planned.slice(i, i + INSERT_CHUNK);
    const lookup = lookupStatement(db, companyId, chunk);
    let rows: StoredInstance[] = await lookup;
    const found = new Set(rows.map(instanceKey));
    const missing = chunk.filter((r) => !found.has(instanceKey(r)));
    const [first, ...rest] = insertStatements(scopeIn(db, companyId), missing);
    if (first) {
      // The inserts come first so that the lookup, in the same transaction, sees every row.
      const results: unknown[] = await db.batch([first, ...rest, lookup]);
      rows = results[results.length - 1] as StoredInstance[];
    }
    for (const r of rows) out.set(instanceKey(r), r);
  }
  return out;
}

/**
 * Each machine's first activity: the earliest of its creation, its first production log and
 * its first stop (deleted ones included: they were data once), ms. One statement reading
 * three rows per machine: the machine by id, then one step of the (machine, start) index of
 * logs and of stops. The machines come as a `VALUES` list (D1 counts every row of a
 * `json_each` or of an `IN` probe as read).
 *
 * @param scope the company (every machine given is of it: the caller resolved them).
 * @param machineIds the machines.
 * @returns machine id to instant; a machine not found is left out.
 */
export async function firstActivity(
  scope: CompanyScope,
  machineIds: readonly number[],
): Promise<Map<number, number>> {
  const { db, companyId } = scope;
  const ids = machineIds.filter(Number.isSafeInteger);
  if (ids.length === 0) return new Map();
  // Safe integers only: the text cannot carry anything but numbers. The log and stop
  // subqueries need no company condition: a machine's logs and stops are its company's.
  const values = sql.raw(ids.map((id) => `(${id})`).join(", "));
  const rows = await db.all<{
    id: number;
    created: number | null;
    log: number | null;
    stop: number | null;
  }>(
    sql`SELECT v.column1 AS id,
        (SELECT m.created_at FROM ${machines} AS m
          WHERE m.id = v.column1 AND ${ownedSql({ companyId }, "+m.company_id")}) AS created,
        (SELECT min(l.start) FROM ${productionLogs} AS l WHERE l.machine_id = v.column1) AS log,
        (SELECT min(s.start_time) FROM ${stops} AS s WHERE s.machine_id = v.column1) AS stop
      FROM (VALUES ${values}) AS v`,
  );
  const out = new Map<number, number>();
  for (const r of rows) {
    if (r.created === null) continue;
    out.set(Number(r.id), Math.min(r.created, r.log ?? r.created, r.stop ?? r.created));
  }
  return out;
}
