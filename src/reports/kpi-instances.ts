/**
 * The shift instances a KPI report groups (`reportInstancesWhere` of the metrics report),
 * listed in pieces of about `INSTANCES_PER_STATEMENT`: one statement over many more (a year
 * of 20 machines is 21,900) holds D1 long enough to stall other companies' requests
 * (docs/bounded-work.md, "The budget of a request"). The same pieces cut the read of their
 * kept figures (`./figure-cache.ts`).
 */
import { and, eq, gte, lt, type SQL, sql } from "drizzle-orm";
import type { CompanyScope } from "../db/company-scope";
import { shiftDefinitions, shiftInstances } from "../db/schema";
import { yieldToOtherRequests } from "../http/budget";
import type { ReportInstances } from "./metrics-report";

/** Instances listed per JSON text: a machine's instances starting within 30 days. */
const LISTING_CHUNK_MS = 30 * 86_400_000;

/** Instances listed, and their kept figures read, per statement (about). */
const INSTANCES_PER_STATEMENT = 2_000;

/** A listed shift instance: id, machine, window (ms), definition name, closed or not. */
export interface ListedInstance {
  id: number;
  machineId: number;
  start: number;
  end: number;
  name: string;
  /** A closure of the plant calendar holds its start: not scheduled (src/shifts/closures.ts). */
  closed: boolean;
}

/**
 * The covered span of instance starts cut into spans of about `INSTANCES_PER_STATEMENT`
 * planned instances, `[from, to)` each, ascending.
 */
export function piecesOf(covered: ReportInstances): [number, number][] {
  const count = Math.max(1, Math.ceil(covered.planned / INSTANCES_PER_STATEMENT));
  const step = Math.ceil((covered.to - covered.from) / count);
  const out: [number, number][] = [];
  for (let a = covered.from; a < covered.to; a += step) {
    out.push([a, Math.min(a + step, covered.to)]);
  }
  return out;
}

/**
 * The instances matching `where`, one statement per piece (the isolate free for other
 * requests in between), ordered by start, machine and id. They travel packed, one JSON text
 * per machine and 30 days (page-spans.ts says why): 21,900 result rows cost the Worker far
 * more than 240 texts.
 *
 * @param scope the company (`where` selects its rows only).
 * @param where the condition on `shift_instances` joined with `shift_definitions`.
 * @param pieces spans of instance starts (`piecesOf`).
 * @param closed the SQL boolean "this instance is closed" (`ReportInstances.closed`).
 */
export async function listInstances(
  scope: CompanyScope,
  where: SQL,
  pieces: readonly [number, number][],
  closed: SQL,
): Promise<ListedInstance[]> {
  const { db } = scope;
  const chunks: { packed: string }[] = [];
  for (const [a, b] of pieces) {
    chunks.push(
      ...(await db
        .select({
          packed: sql<string>`json_group_array(json_array(${shiftInstances.id},
            ${shiftInstances.machineId}, ${shiftInstances.start}, ${shiftInstances.end},
            ${shiftDefinitions.name}, ${closed}))`,
        })
        .from(shiftInstances)
        .innerJoin(shiftDefinitions, eq(shiftDefinitions.id, shiftInstances.shiftDefinitionId))
        .where(and(where, gte(shiftInstances.start, a), lt(shiftInstances.start, b)))
        .groupBy(shiftInstances.machineId, sql`${shiftInstances.start} / ${LISTING_CHUNK_MS}`)),
    );
    await yieldToOtherRequests();
  }
  return chunks
    .flatMap((c) => JSON.parse(c.packed) as [number, number, number, number, string, number][])
    .map(([id, machineId, start, end, name, shut]) => ({
      id,
      machineId,
      start,
      end,
      name,
      closed: shut === 1,
    }))
    .sort((a, b) => a.start - b.start || a.machineId - b.machineId || a.id - b.id);
}
