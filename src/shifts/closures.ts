/**
 * The plant calendar: closures of a company, or of one of its machines, over local dates
 * (a holiday, a weekend, a shutdown week) or between two instants (a night the plant does
 * not run). A shift instance whose start lies in a closure is **not scheduled**: no planned production time in the metrics and KPI reports (its
 * day still counts in the KPI report's calendar time), no shift the realtime endpoints,
 * the stops report or a production log fall in, and no detected stop. The rule is the one
 * of a definition's `weekdays` (the date of the start), so a night shift that starts the
 * evening before a closed day runs, and one that starts on the closed day does not.
 * docs/metrics.md ("The plant calendar"), docs/operator-api.md ("The plant calendar").
 *
 * A closure is a row: nothing walks its dates. Its instants (`startAt`, `endAt`) are given,
 * or for dates fixed in the company's zone when it is written, and an instance is closed when its start lies
 * in `[startAt, endAt)`: the shift plan carries them (`companyClosuresQuery`), and the
 * reports count, page and list each machine's instances between its closures
 * (src/reports/covered-instances.ts), the work growing with the closures, not their days.
 */

import { asc, eq, isNull, or, sql } from "drizzle-orm";
import { type CompanyScope, notDeleted, owned, softDelete } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { machines, plantClosures } from "../db/schema";
import { notFound, unprocessable } from "../http/errors";
import { wallClockInstant } from "./instances";
import { assertCompanyMachines, type MachineRef } from "./machine-refs";

/** Most closures a company has at once (not deleted); a create beyond it is a 422. */
export const MAX_CLOSURES = 1_000;

/** Earliest and latest date of a closure, inclusive (`YYYY-MM-DD`). */
export const CLOSURE_MIN_DATE = "1970-01-02";
export const CLOSURE_MAX_DATE = "9999-12-30";

/**
 * A closure to create: local dates (`startDate`, `endDate`, the instants null) or two
 * instants (`start`, `end`, the dates null).
 */
interface ClosureInput {
  name: string;
  /** `YYYY-MM-DD`, local to the company, from `CLOSURE_MIN_DATE`; or null. */
  startDate: string | null;
  /** `YYYY-MM-DD`, local, inclusive, not before `startDate`, up to `CLOSURE_MAX_DATE`; or null. */
  endDate: string | null;
  /** ms; or null (dates given). */
  start: number | null;
  /** ms, after `start`; or null (dates given). */
  end: number | null;
  /** null = every machine of the company (present and future). */
  machineId: number | null;
}

/** A closure as the operator API shows it. */
export interface ClosureOut {
  /** UUID. */
  id: string;
  name: string;
  /** The dates it was given as, or null (given as instants). */
  startDate: string | null;
  endDate: string | null;
  machineId: number | null;
  /** Its instants: for dates, the company zone's midnights that begin and end them. */
  start: string;
  end: string;
}

/** A closed span of one machine, ms: `[start, end)`. */
export interface ClosedSpan {
  start: number;
  end: number;
}

const columns = {
  id: plantClosures.id,
  name: plantClosures.name,
  startDate: plantClosures.startDate,
  endDate: plantClosures.endDate,
  machineId: plantClosures.machineId,
  startAt: plantClosures.startAt,
  endAt: plantClosures.endAt,
};

type ClosureRow = {
  id: string;
  name: string;
  startDate: string | null;
  endDate: string | null;
  machineId: number | null;
  startAt: number;
  endAt: number;
};

function toOut(row: ClosureRow): ClosureOut {
  return {
    id: row.id,
    name: row.name,
    startDate: row.startDate,
    endDate: row.endDate,
    machineId: row.machineId,
    start: new Date(row.startAt).toISOString(),
    end: new Date(row.endAt).toISOString(),
  };
}

/**
 * The company zone's instant of a local date's midnight, ms (a midnight the zone skipped:
 * the first instant of that date).
 *
 * @param date `YYYY-MM-DD`; `plusDays` days later (0 or 1).
 */
function midnightOf(date: string, timezone: string, plusDays = 0): number {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  return wallClockInstant(y, m - 1, d + plusDays, 0, 0, timezone);
}

/** A closure's identity for the idempotent create: the same closure twice is one. */
const sameAs = (c: Omit<ClosureRow, "id">) =>
  JSON.stringify([c.machineId, c.startDate, c.endDate, c.startAt, c.endAt, c.name]);

/**
 * Creates closures, all or none. Idempotent: an item equal (machine, span and name) to a
 * closure the company has, or to an earlier item, answers that closure (its id) and adds no
 * row, so a create can be repeated after a lost answer.
 *
 * @param scope the company.
 * @param timezone the company's IANA zone (the dates are its).
 * @param items the closures, validated (dates or instants in order and in bounds).
 * @returns the closures, in request order, and how many of them are new rows.
 * @throws ApiError 422 a machine that is not the company's (`["body", i, "machineId"]`), or
 *   more than `MAX_CLOSURES` closures at once (`too_many_closures`).
 */
export async function createClosures(
  scope: CompanyScope,
  timezone: string,
  items: readonly ClosureInput[],
): Promise<{ closures: ClosureOut[]; created: number }> {
  const { db, companyId } = scope;
  const refs = items.flatMap((item, index) =>
    item.machineId === null ? [] : [{ loc: ["body", index, "machineId"], id: item.machineId }],
  );
  const [known, existing] = await db.batch([
    db
      .select({ id: machines.id })
      .from(machines)
      .where(notDeleted({ companyId }, machines, inJsonList(machines.id, distinctIds(refs)))),
    db
      .select(columns)
      .from(plantClosures)
      .where(notDeleted({ companyId }, plantClosures))
      .orderBy(asc(plantClosures.startAt))
      .limit(MAX_CLOSURES + 1),
  ] as const);
  assertCompanyMachines(refs, new Set(known.map((m) => m.id)));
  const { out, fresh } = matchExisting(existing, items, timezone);
  if (existing.length + fresh.length > MAX_CLOSURES) {
    throw unprocessable(
      ["body"],
      `A company has at most ${MAX_CLOSURES} closures; it has ${existing.length} and this ` +
        `request adds ${fresh.length}: delete past ones first`,
      "too_many_closures",
    );
  }
  if (fresh.length > 0) await insertClosures(scope, fresh);
  return { closures: out, created: fresh.length };
}

/** The distinct ids of machine refs, in first-seen order. */
const distinctIds = (refs: readonly MachineRef[]): number[] => [...new Set(refs.map((r) => r.id))];

/**
 * The items as closures: each one equal (`sameAs`) to a closure the company has, or to an
 * earlier item, is that closure; any other is a new row with a fresh UUID, its dates turned
 * into the company zone's midnights (`startDate`'s, and the day after `endDate`'s).
 *
 * @param existing the company's closures (not deleted).
 * @param items the closures asked for, in request order.
 * @param timezone the company's IANA zone.
 * @returns `out`, the items' closures in request order; `fresh`, the rows to insert.
 */
function matchExisting(
  existing: readonly ClosureRow[],
  items: readonly ClosureInput[],
  timezone: string,
): { out: ClosureOut[]; fresh: ClosureRow[] } {
  const byIdentity = new Map<string, ClosureRow>(existing.map((r) => [sameAs(r), r]));
  const fresh: ClosureRow[] = [];
  const out = items.map((item) => {
    const wanted = {
      name: item.name,
      startDate: item.startDate,
      endDate: item.endDate,
      machineId: item.machineId,
      startAt: item.startDate === null ? (item.start ?? 0) : midnightOf(item.startDate, timezone),
      endAt: item.endDate === null ? (item.end ?? 0) : midnightOf(item.endDate, timezone, 1),
    };
    const key = sameAs(wanted);
    let row = byIdentity.get(key);
    if (!row) {
      row = { id: crypto.randomUUID(), ...wanted };
      byIdentity.set(key, row);
      fresh.push(row);
    }
    return toOut(row);
  });
  return { out, fresh };
}

/**
 * Inserts new closure rows in one statement: at most `MAX_CLOSURES` rows of 9 columns each
 * would pass D1's 100-parameter limit, so the rows travel as one JSON parameter. Their
 * `createdAt` and `updatedAt` are D1's clock, ms.
 *
 * @param scope the company the rows are written for.
 * @param rows the rows, their ids fresh UUIDs and their instants ms.
 * @throws D1's error (nothing written: one statement).
 */
async function insertClosures(scope: CompanyScope, rows: readonly ClosureRow[]): Promise<void> {
  await scope.db.insert(plantClosures).select(
    sql`SELECT json_extract(value, '$[0]'), CAST(${scope.companyId} AS INTEGER),
          json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]'),
          CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER),
          NULL
        FROM json_each(${JSON.stringify(
          rows.map((r) => [r.id, r.machineId, r.name, r.startDate, r.endDate, r.startAt, r.endAt]),
        )})`,
  );
}

/**
 * The company's closures (not deleted), by start then id; with `machineId`, those
 * that apply to that machine (its own and the company's).
 *
 * @returns at most `MAX_CLOSURES` closures (all a company can have).
 */
export async function listClosures(scope: CompanyScope, machineId?: number): Promise<ClosureOut[]> {
  const { db, companyId } = scope;
  const rows = await db
    .select(columns)
    .from(plantClosures)
    .where(
      notDeleted(
        { companyId },
        plantClosures,
        machineId === undefined
          ? undefined
          : or(isNull(plantClosures.machineId), eq(plantClosures.machineId, machineId)),
      ),
    )
    .orderBy(asc(plantClosures.startAt), asc(plantClosures.id))
    .limit(MAX_CLOSURES);
  return rows.map(toOut);
}

/**
 * Deletes a closure (soft delete). Idempotent: a closure already deleted answers as
 * deleted again, and changes nothing.
 *
 * @returns the closure's machine (null: every machine), and whether this call deleted it.
 * @throws ApiError 404 `Closure not found` when the company never had it.
 */
export async function deleteClosure(
  scope: CompanyScope,
  id: string,
): Promise<{ machineId: number | null; deleted: boolean }> {
  const { db, companyId } = scope;
  const [row] = await db
    .select({ machineId: plantClosures.machineId })
    .from(plantClosures)
    .where(owned({ companyId }, plantClosures, eq(plantClosures.id, id)));
  if (!row) throw notFound("Closure not found");
  const deleted = await softDelete(scope, plantClosures, eq(plantClosures.id, id));
  return { machineId: row.machineId, deleted: deleted > 0 };
}

/**
 * The closed spans of one machine (its own closures and the company's), ms (`start`, `end`),
 * by start: what the machine's stop detector keeps with its plan. A statement, for a batch.
 */
export function closedSpansQuery(scope: CompanyScope, machineId: number) {
  const { db, companyId } = scope;
  return db
    .select({ start: plantClosures.startAt, end: plantClosures.endAt })
    .from(plantClosures)
    .where(
      notDeleted(
        { companyId },
        plantClosures,
        or(isNull(plantClosures.machineId), eq(plantClosures.machineId, machineId)),
      ),
    )
    .orderBy(asc(plantClosures.startAt))
    .limit(MAX_CLOSURES);
}

/** A closure as a shift plan keeps it: its machine (null: all) and instants, ms. */
export interface PlanClosure {
  machineId: number | null;
  start: number;
  end: number;
}

/**
 * The company's closures (not deleted), by start, as a shift plan keeps them. A statement,
 * for a batch; at most `MAX_CLOSURES` rows (all a company can have).
 */
export function companyClosuresQuery(scope: CompanyScope) {
  const { db, companyId } = scope;
  return db
    .select({
      machineId: plantClosures.machineId,
      start: plantClosures.startAt,
      end: plantClosures.endAt,
    })
    .from(plantClosures)
    .where(notDeleted({ companyId }, plantClosures))
    .orderBy(asc(plantClosures.startAt))
    .limit(MAX_CLOSURES);
}

/**
 * The closed spans of one machine among a plan's closures (its own and the company's),
 * joined where they overlap or touch, by start.
 */
export function closedSpansOf(closures: readonly PlanClosure[], machineId: number): ClosedSpan[] {
  const out: ClosedSpan[] = [];
  for (const c of closures) {
    if (c.machineId !== null && c.machineId !== machineId) continue;
    const last = out[out.length - 1];
    if (last && c.start <= last.end) last.end = Math.max(last.end, c.end);
    else out.push({ start: c.start, end: c.end });
  }
  return out;
}

/** Whether an instant lies in one of the spans (few: a company's closures). */
export function isClosedAt(spans: readonly ClosedSpan[], at: number): boolean {
  return spans.some((s) => s.start <= at && at < s.end);
}
