/**
 * The figures of ended shift instances, kept once computed (`instance_figures`) at the finest
 * split (SKU, operator, work order), so a year of KPIs reads one packed row per instance. Never
 * stale: SQL triggers delete the kept rows a written log, stop or classification overlaps and
 * count each machine's writes (`machine_writes`); a report keeps what it computed only where
 * that count is unchanged, in the same statement.
 * docs/bounded-work.md ("KPIs: figures of closed instances kept").
 */

import { and, gte, lt, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { type CompanyScope, owned } from "../db/company-scope";
import { instanceFigures, machineWrites } from "../db/schema";
import { ITEMS_PER_TURN, yieldToOtherRequests } from "../http/budget";
import { inIntegerList } from "../http/filters";
import { addFigures, FIGURE_FIELDS, type Figures, zeroFigures } from "./kpi-figures";

/** SKU id, operator id, simple work order id: the key of a kept part. */
export type Attribution = [string | null, number | null, string | null];

/** One part of an instance: its attribution and figures. */
export interface Part {
  key: Attribution;
  figures: Figures;
}

/** Rows kept per statement (one JSON parameter each; a statement holds D1 a few ms). */
const KEEP_BATCH = 100;
/** Kept rows travel packed per machine and this many ms of instance starts. */
const CHUNK_MS = 30 * 86_400_000;

type PackedPart = [string | null, number | null, string | null, ...number[]];

/** A part list as stored: `[[sku, operator, workOrder, ...FIGURE_FIELDS], ...]`. */
function encodeParts(parts: readonly Part[]): PackedPart[] {
  return parts.map((p) => [...p.key, ...FIGURE_FIELDS.map((f) => p.figures[f])]);
}

/** The inverse of `encodeParts`. */
function decodeParts(packed: readonly PackedPart[]): Part[] {
  // An object literal per part (not a loop over FIGURE_FIELDS): a year is 50,000 parts.
  return packed.map((r) => ({
    key: [r[0], r[1], r[2]] as Attribution,
    figures: {
      availableTime: r[3] ?? 0,
      programmedDowntime: r[4] ?? 0,
      nonProgrammedDowntime: r[5] ?? 0,
      otherStopsTime: r[6] ?? 0,
      lateStartTime: r[7] ?? 0,
      earlyStopTime: r[8] ?? 0,
      noDataTime: r[9] ?? 0,
      unavailableTime: r[10] ?? 0,
      annotatedDowntime: r[11] ?? 0,
      idealTime: r[12] ?? 0,
      total: r[13] ?? 0,
      good: r[14] ?? 0,
      defects: r[15] ?? 0,
      unplannedStops: r[16] ?? 0,
    },
  }));
}

/** The figures of parts added up. */
function sumOf(parts: readonly Part[]): Figures {
  const out = zeroFigures();
  for (const p of parts) addFigures(out, p.figures);
  return out;
}

/**
 * The write counts of machines (0 for a machine never written).
 *
 * @param machineIds machines of the caller's company.
 */
export async function machineWriteCounts(
  db: Database,
  machineIds: readonly number[],
): Promise<Map<number, number>> {
  const rows = await db
    .select({ machineId: machineWrites.machineId, count: machineWrites.count })
    .from(machineWrites)
    .where(inIntegerList(machineWrites.machineId, machineIds));
  const out = new Map<number, number>(machineIds.map((id) => [id, 0]));
  for (const r of rows) out.set(r.machineId, r.count);
  return out;
}

/**
 * The kept parts of the instances of `machineIds` starting in `[from, to)`, by instance id.
 *
 * @param scope the caller's company (every row read is of it).
 * @param wholeOnly read each instance's parts summed into one part of null keys (for a
 *   grouping without SKU, operator or work order: less to carry and to add).
 */
export async function readKept(
  scope: CompanyScope,
  machineIds: readonly number[],
  from: number,
  to: number,
  wholeOnly = false,
): Promise<Map<number, Part[]>> {
  const { db, companyId } = scope;
  const column = wholeOnly ? instanceFigures.whole : instanceFigures.parts;
  const chunks = await db
    .select({
      // Concatenated as text: the stored parts are JSON already, and json() would make
      // SQLite parse and write every one of them again.
      packed: sql<string>`'[' || group_concat('[' || ${instanceFigures.shiftInstanceId} || ','
        || ${column} || ']') || ']'`,
    })
    .from(instanceFigures)
    .where(
      owned(
        { companyId },
        instanceFigures,
        and(
          inIntegerList(instanceFigures.machineId, machineIds),
          gte(instanceFigures.start, from),
          lt(instanceFigures.start, to),
        ),
      ),
    )
    .groupBy(instanceFigures.machineId, sql`${instanceFigures.start} / ${CHUNK_MS}`);
  const out = new Map<number, Part[]>();
  let sinceYield = 0;
  for (const { packed } of chunks) {
    for (const [id, parts] of JSON.parse(packed) as [number, PackedPart[]][]) {
      out.set(id, decodeParts(parts));
      sinceYield++;
    }
    if (sinceYield >= ITEMS_PER_TURN) {
      sinceYield = 0;
      await yieldToOtherRequests();
    }
  }
  return out;
}

/** An instance's computed parts to keep, with the write count read before its records. */
export interface ToKeep {
  instanceId: number;
  machineId: number;
  start: number;
  end: number;
  parts: Part[];
  writeCount: number;
}

/**
 * Keeps computed parts, each only if its machine's write count is still the one
 * read before its records (see the module docstring).
 *
 * @param scope the company of every instance given.
 */
export async function keep(scope: CompanyScope, items: readonly ToKeep[]): Promise<void> {
  const { db, companyId } = scope;
  const statements = [];
  for (let i = 0; i < items.length; i += KEEP_BATCH) {
    const rows = items
      .slice(i, i + KEEP_BATCH)
      .map((k) => [
        k.instanceId,
        k.machineId,
        k.start,
        k.end,
        JSON.stringify(encodeParts(k.parts)),
        k.writeCount,
        JSON.stringify(encodeParts([{ key: [null, null, null], figures: sumOf(k.parts) }])),
      ]);
    // Every column in table order; a row whose machine was written meanwhile is left out.
    statements.push(
      db
        .insert(instanceFigures)
        .select(
          sql`SELECT e.value ->> 0, CAST(${companyId} AS INTEGER), e.value ->> 1, e.value ->> 2,
                e.value ->> 3, e.value ->> 4, e.value ->> 6
              FROM json_each(${JSON.stringify(rows)}) AS e
              WHERE ifnull((SELECT w.count FROM ${machineWrites} AS w
                WHERE w.machine_id = e.value ->> 1), 0) = e.value ->> 5`,
        )
        .onConflictDoUpdate({
          target: instanceFigures.shiftInstanceId,
          set: {
            parts: sql`excluded.parts`,
            whole: sql`excluded.whole`,
            start: sql`excluded.start`,
            end: sql`excluded."end"`,
          },
        }),
    );
  }
  // One statement at a time (each keeps its rows only where the count is unchanged, so each
  // is right alone), the isolate free for other requests in between: a year's first call
  // keeps 21,900 rows, which as one batch held D1's writer for the whole of it.
  for (const statement of statements) {
    await statement;
    await yieldToOtherRequests();
  }
}
