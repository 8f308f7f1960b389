/**
 * Where machines have records (production logs or stops), found without reading them: a
 * shift instance that none touches has the figures of an empty instance, which the KPI report
 * adds by arithmetic (./kpi-figures.ts, `emptyInstanceFigures`), so only the instances inside
 * these spans are computed from records. The spans may be wider than the records (an instance
 * they take in needlessly is computed exactly all the same), never narrower.
 *
 * Records of at most a day are found a day at a time by skipping along the (machine, start)
 * indexes of logs and stops: one index seek per day that has a record, whatever their number
 * (a year of 100,000 logs on 20 machines is at most 7,300 seeks per table); longer records
 * come from the (machine, duration) indexes, open stops from (machine, end).
 * docs/bounded-work.md ("Any range at once").
 */

import { sql } from "drizzle-orm";
import type { CompanyScope } from "../db/company-scope";
import { yieldToOtherRequests } from "../http/budget";
import { DAY_MS } from "../time/units";

/** Days visited per statement (each one index seek per table): a statement of a few ms. */
const STEPS_PER_STATEMENT = 2_000;

/** Spans `[start, end)` per machine outside which it has no log or stop. */
class RecordActivity {
  constructor(private readonly spans: ReadonlyMap<number, readonly [number, number][]>) {}

  /** Whether a record of the machine may touch `[start, end)`. */
  touches(machineId: number, start: number, end: number): boolean {
    const list = this.spans.get(machineId);
    if (!list || list.length === 0) return false;
    // The first span ending after `start`, then whether it begins before `end`.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((list[mid]?.[1] ?? Number.POSITIVE_INFINITY) <= start) lo = mid + 1;
      else hi = mid;
    }
    const span = list[lo];
    return span !== undefined && span[0] < end;
  }
}

/** Sorted, merged spans. */
function merged(spans: [number, number][]): [number, number][] {
  spans.sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** Safe integers only in SQL text: the text can carry nothing else. */
const integers = (values: readonly number[]) => values.every(Number.isSafeInteger);

/**
 * The days (from `base`, a day long each) on which each machine has a record starting, from
 * each machine's resume point: at most `STEPS_PER_STATEMENT` days over all machines. A
 * machine's list ends with null, or an instant past `to`, once it has no more.
 */
async function recordDays(
  scope: CompanyScope,
  resume: readonly [number, number][],
  base: number,
  to: number,
): Promise<Map<number, (number | null)[]>> {
  const seeds = sql.raw(resume.map(([m, at]) => `(${m}, ${at})`).join(", "));
  // The first log or stop of the machine starting at or after `from`: two index seeks.
  const nextAt = (machine: string, from: string) =>
    sql.raw(`(SELECT min(s) FROM (
      SELECT * FROM (SELECT l.start AS s FROM production_logs AS l
        WHERE l.machine_id = ${machine} AND l.start >= ${from} ORDER BY l.start LIMIT 1)
      UNION ALL
      SELECT * FROM (SELECT t.start_time AS s FROM stops AS t
        WHERE t.machine_id = ${machine} AND t.start_time >= ${from}
        ORDER BY t.start_time LIMIT 1)))`);
  const rows = await scope.db.all<{ m: number; days: string }>(
    sql`WITH RECURSIVE seen(m, at) AS (
        SELECT v.column1, ${nextAt("v.column1", "v.column2")} FROM (VALUES ${seeds}) AS v
        UNION ALL
        SELECT seen.m, ${nextAt("seen.m", `${base} + ((seen.at - ${base}) / ${DAY_MS} + 1) * ${DAY_MS}`)}
        FROM seen WHERE seen.at IS NOT NULL AND seen.at < ${sql.raw(String(to))}
        LIMIT ${sql.raw(String(STEPS_PER_STATEMENT))})
      SELECT m, json_group_array(at) AS days FROM seen GROUP BY m`,
  );
  return new Map(rows.map((r) => [Number(r.m), JSON.parse(r.days) as (number | null)[]]));
}

/**
 * The spans of `machineIds` (of the caller's company) in which a log or stop may touch
 * `[from, to)`: a day-long record starting on day k (counted from a day before `from`) makes
 * `[day k, day k + 2)`, a longer one its own span, an open stop `[start, +inf)`. Deleted
 * records are taken too (a span too wide costs an exact computation, never a wrong figure).
 *
 * @param scope the company (the machines are its own: the caller resolved them).
 * @param machineIds the machines; `from`, `to` instants, ms.
 */
export async function recordActivity(
  scope: CompanyScope,
  machineIds: readonly number[],
  from: number,
  to: number,
): Promise<RecordActivity> {
  const ids = machineIds.filter(Number.isSafeInteger);
  const base = Math.floor(from / DAY_MS) * DAY_MS - DAY_MS;
  const spans = new Map<number, [number, number][]>(ids.map((id) => [id, []]));
  if (ids.length === 0 || !integers([base, to])) return new RecordActivity(spans);
  const list = sql.raw(ids.join(", "));
  const [long, open] = await Promise.all([
    scope.db.all<{ m: number; start: number; end: number }>(
      sql`SELECT machine_id AS m, start, "end" FROM production_logs
        WHERE machine_id IN (${list}) AND ("end" - "start") > ${DAY_MS}
          AND start < ${to} AND "end" > ${base}
        UNION ALL
        SELECT machine_id, start_time, end_time FROM stops
        WHERE machine_id IN (${list}) AND ("end_time" - "start_time") > ${DAY_MS}
          AND start_time < ${to} AND end_time > ${base}`,
    ),
    // `+`: reach open stops by (machine, end_time), not by every earlier start.
    scope.db.all<{ m: number; start: number }>(
      sql`SELECT machine_id AS m, start_time AS start FROM stops
        WHERE machine_id IN (${list}) AND end_time IS NULL AND +start_time < ${to}`,
    ),
  ]);
  for (const r of long) spans.get(Number(r.m))?.push([r.start, r.end + 1]);
  for (const r of open) spans.get(Number(r.m))?.push([r.start, Number.POSITIVE_INFINITY]);
  let resume: [number, number][] = ids.map((id) => [id, base]);
  while (resume.length > 0) {
    // Each machine's seed is a row of the statement's steps: a bounded number per statement.
    const batch = resume.slice(0, STEPS_PER_STATEMENT / 4);
    const found = await recordDays(scope, batch, base, to);
    const next: [number, number][] = resume.slice(batch.length);
    for (const [m, from] of batch) {
      const days = found.get(m) ?? [];
      // Where the statement stopped for this machine (its steps ran out), or null when done.
      let last: number | null = days.length === 0 ? from : null;
      for (const at of days) {
        if (at === null || at >= to) {
          last = null;
          break;
        }
        const day = base + Math.floor((at - base) / DAY_MS) * DAY_MS;
        spans.get(m)?.push([day, day + 2 * DAY_MS]);
        last = day + DAY_MS;
      }
      if (last !== null) next.push([m, last]);
    }
    resume = next;
    if (resume.length > 0) await yieldToOtherRequests();
  }
  return new RecordActivity(new Map([...spans].map(([m, s]) => [m, merged(s)])));
}
