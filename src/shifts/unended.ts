/**
 * "Production logs only for shifts that have ended": a log may not reach into an instance of
 * its machine that is running or in the future. Two halves of one rule: `firstUnendedInstance`
 * checks a log against the company's plan (for the answer's message), `noUnendedStored` is the
 * same condition in SQL inside the statement that writes the log, so check and write are one
 * step. The rule's home: src/resources/production-logs/running-shift.ts; docs/resources.md.
 */

import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { type CompanyRef, ownedSql } from "../db/company-scope";
import { shiftDefinitions, shiftInstances } from "../db/schema";
import { DAY_MS } from "../time/units";
import { overlapsInstance } from "./instances";
import { MAX_INSTANCE_MS, plannedInstances, type ShiftPlan } from "./plan";

/** A log's interval on a machine (instants in ms). */
export interface MachineSpan {
  machineId: number;
  start: number;
  end: number;
}

/** An instance that has not ended, as a refusal names it. */
export interface UnendedInstance {
  machineId: number;
  name: string;
  start: number;
  end: number;
}

/** How far past `max(log start, now)` an instance can start and still be the first the log reaches. */
const SEARCH_DAYS_MS = 9 * DAY_MS;

/**
 * The earliest instance of the log's machine that overlaps `[start, end)` and has not
 * ended at `now` (`end > now`): the running one when the log reaches it, else the first
 * future one, else null.
 *
 * Bounded: such an instance starts after `max(start, now) - MAX_INSTANCE_MS`, and every
 * definition has an occurrence in any 7 days, so a window of 9 days past that finds the
 * first one whatever the log's length.
 *
 * @param plan the company's shift plan (`loadShiftPlan`).
 * @param span the log.
 * @param now the current instant, ms.
 */
export function firstUnendedInstance(
  plan: ShiftPlan,
  span: MachineSpan,
  now: number,
): UnendedInstance | null {
  const after = Math.max(span.start, now);
  const from = after - MAX_INSTANCE_MS;
  const to = Math.min(span.end, after + SEARCH_DAYS_MS);
  if (to <= from) return null;
  const names = new Map(plan.definitions.map((d) => [d.id, d.name]));
  let first: UnendedInstance | null = null;
  for (const w of plannedInstances(plan, from, to, new Set([span.machineId]))) {
    if (w.end <= now || !overlapsInstance(w, span)) continue;
    if (!first || w.start < first.start) {
      first = {
        machineId: w.machineId,
        name: names.get(w.definitionId) ?? "",
        start: w.start,
        end: w.end,
      };
    }
  }
  return first;
}

/**
 * The stored instances of definitions not deleted that have not ended at `now` and overlap one of
 * `spans`: one row per (span, instance), `k` the span's index. Reads a range of the
 * (machine, start) index per span: such an instance starts in `(now - MAX_INSTANCE_MS, end)`.
 */
function unendedStoredSql(company: CompanyRef, spans: readonly MachineSpan[], now: number): SQL {
  const json = JSON.stringify(spans.map((s) => [s.machineId, s.start, s.end]));
  return sql`SELECT g.key AS k, si.start AS start, si."end" AS "end", d.name AS name
    FROM json_each(${json}) AS g
    JOIN ${shiftInstances} AS si ON si.machine_id = g.value ->> 0
      AND si.start > ${now - MAX_INSTANCE_MS} AND si.start < g.value ->> 2
      AND si."end" > g.value ->> 1 AND si."end" > ${now}
    JOIN ${shiftDefinitions} AS d ON d.id = si.shift_definition_id AND d.deleted_at IS NULL
    WHERE ${ownedSql(company, "si.company_id")}`;
}

/**
 * The SQL condition "no stored instance that has not ended overlaps any of `spans`", for
 * the `WHERE` of the statements that write them (see the file comment).
 */
export function noUnendedStored(
  company: CompanyRef,
  spans: readonly MachineSpan[],
  now: number,
): SQL {
  return sql`NOT EXISTS (${unendedStoredSql(company, spans, now)})`;
}

/**
 * For each span, the earliest stored instance that stopped its write (`noUnendedStored`),
 * or null: what the refusal of a write that the plan's check let through names.
 */
export async function unendedStored(
  db: Database,
  company: CompanyRef,
  spans: readonly MachineSpan[],
  now: number,
): Promise<(UnendedInstance | null)[]> {
  const rows = await db.all<{ k: number; start: number; end: number; name: string }>(
    unendedStoredSql(company, spans, now),
  );
  const out: (UnendedInstance | null)[] = spans.map(() => null);
  for (const r of rows) {
    const current = out[r.k];
    const span = spans[r.k];
    if (span && (!current || r.start < current.start)) {
      out[r.k] = { machineId: span.machineId, name: r.name, start: r.start, end: r.end };
    }
  }
  return out;
}
