/**
 * Materializing shift instances as rows of `shift_instances`: the rows of a
 * range are written once (idempotent `INSERT OR IGNORE` on the unique key
 * (definition, machine, start)), and afterwards a range costs one indexed
 * count (`ensureInstances`).
 */

import { gte, inArray, lt, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { type CompanyScope, live, owned } from "../db/company-scope";
import { machines, shiftDefinitions, shiftInstances } from "../db/schema";
import { inIntegerList } from "../http/filters";
import {
  companyQuery,
  definitionMachinesQuery,
  definitionsQuery,
  machineIdsQuery,
  type PlannedInstance,
  plannedCount,
  plannedInstances,
  toPlan,
} from "./plan";

/** Rows per `INSERT ... SELECT FROM json_each(?)` statement (one bound JSON parameter each). */
const INSERT_CHUNK = 2000;

/** `INSERT OR IGNORE` statements for planned instances, one per chunk of rows. */
export function insertStatements(
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

/**
 * Makes sure every instance of the company whose start lies in `[from, to)`
 * is stored, for the machines given (default: every machine the definitions
 * apply to). Idempotent; after the first call over a range the cost is one
 * indexed count: instances follow deterministically from the definitions, so
 * when the stored count equals the planned count nothing is missing.
 *
 * @param scope the company.
 * @param from inclusive lower bound of instance starts, ms.
 * @param to exclusive upper bound of instance starts, ms.
 * @param onlyMachines restrict to these machine ids (others are left as they are).
 */
export async function ensureInstances(
  scope: CompanyScope,
  from: number,
  to: number,
  onlyMachines?: readonly number[],
): Promise<void> {
  const { db, companyId } = scope;
  if (to <= from) return;
  const machineSet = onlyMachines ? new Set(onlyMachines) : undefined;
  const machineCondition = onlyMachines
    ? inIntegerList(shiftInstances.machineId, onlyMachines)
    : undefined;
  // Stored instances of live definitions and machines: a subset of the planned ones. The
  // live ones are two lists built once per statement (`IN (SELECT ...)`), not a join: D1
  // bills rows read, and a join read a definition and a machine row for every instance.
  const storedCount = db
    .select({ count: sql<number>`count(*)` })
    .from(shiftInstances)
    .where(
      owned(
        { companyId },
        shiftInstances,
        gte(shiftInstances.start, from),
        lt(shiftInstances.start, to),
        machineCondition,
        inArray(
          shiftInstances.shiftDefinitionId,
          db
            .select({ id: shiftDefinitions.id })
            .from(shiftDefinitions)
            .where(live({ companyId }, shiftDefinitions)),
        ),
        inArray(
          shiftInstances.machineId,
          db.select({ id: machines.id }).from(machines).where(live({ companyId }, machines)),
        ),
      ),
    );
  const [company, defs, links, machineRows, stored] = await db.batch([
    companyQuery(scope),
    definitionsQuery(scope),
    definitionMachinesQuery(scope),
    machineIdsQuery(scope),
    storedCount,
  ] as const);
  const plan = toPlan(companyId, company, defs, links, machineRows);
  if (!plan) return;
  if (Number(stored[0]?.count ?? 0) >= plannedCount(plan, from, to, machineSet)) return;
  const planned = plannedInstances(plan, from, to, machineSet);
  const [first, ...rest] = insertStatements(scope, planned);
  if (first) await db.batch([first, ...rest]);
}
