/**
 * The production-log search (`POST /v1/production-logs/filters`): one page of
 * the company's live logs matching every filter, expanded. Every filter and
 * the order have an index behind them (docs/bounded-work.md).
 */

import { and, asc, count, eq, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, type NamedScope, owned } from "../../db/company-scope";
import { machines, productionLogs, skus } from "../../db/schema";
import { dateConditions } from "../../http/filters";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import { idListConditions, normalizeForSearch, numericConditions } from "../../http/search";
import { syncConditions, syncOrder } from "../../http/sync";
import { inList, selectExpanded, toOut } from "./read";
import type { ProductionLogFilters, ProductionLogOut } from "./schemas";

/**
 * The ids of the company's machines (deleted ones included, since their logs
 * stay readable) whose name contains the term, fuzzily (`normalizeForSearch`).
 * Done in code: `machines` has no normalized search column, and a company has
 * few machines.
 */
async function machineIdsMatching(scope: CompanyScope, term: string): Promise<number[]> {
  const { db, companyId } = scope;
  const rows = await db
    .select({ id: machines.id, name: machines.name })
    .from(machines)
    .where(owned({ companyId }, machines))
    .all();
  const wanted = normalizeForSearch(term);
  return rows.filter((m) => normalizeForSearch(m.name).includes(wanted)).map((m) => m.id);
}

/**
 * One page of the company's live logs matching every filter given, expanded,
 * ordered by `start`, then id. The count runs on `production_logs` alone; the
 * page is one joined query.
 */
export async function filterLogs(
  scope: NamedScope,
  filters: ProductionLogFilters,
  page: PageRequest,
): Promise<Page<ProductionLogOut>> {
  const { db } = scope;
  const companyId = scope.companyId;
  const machineSearch = filters.machines?.search;
  const skuSearch = filters.skus?.search;
  const conditions: (SQL | undefined)[] = [
    owned({ companyId }, productionLogs),
    ...syncConditions(productionLogs, filters),
    ...idListConditions(productionLogs.machineId, filters.machines),
    machineSearch
      ? inList(productionLogs.machineId, await machineIdsMatching(scope, machineSearch))
      : undefined,
    ...idListConditions(productionLogs.skuId, {
      include: filters.skus?.include?.map((s) => s.toLowerCase()),
      exclude: filters.skus?.exclude?.map((s) => s.toLowerCase()),
    }),
    skuSearch
      ? sql`${productionLogs.skuId} IN (SELECT ${skus.id} FROM ${skus}
          WHERE ${skus.companyId} = ${companyId}
            AND (instr(${skus.skuSearch}, ${normalizeForSearch(skuSearch)}) > 0
              OR instr(${skus.nameSearch}, ${normalizeForSearch(skuSearch)}) > 0))`
      : undefined,
    ...dateConditions(productionLogs.start, filters.start),
    ...dateConditions(productionLogs.end, filters.end),
    ...numericConditions(productionLogs.count, filters.count),
    filters.isReviewed === undefined || filters.isReviewed === null
      ? undefined
      : eq(productionLogs.isReviewed, filters.isReviewed),
    filters.type ? eq(productionLogs.type, filters.type) : undefined,
  ];
  const where = and(...conditions);
  const result = await paginate(
    page,
    db.select({ count: count() }).from(productionLogs).where(where),
    ({ limit, offset }) =>
      selectExpanded(db)
        .where(where)
        .orderBy(
          ...syncOrder(productionLogs, filters, [
            asc(productionLogs.start),
            asc(productionLogs.id),
          ]),
        )
        .limit(limit)
        .offset(offset)
        .all(),
  );
  return { ...result, rows: result.rows.map((r) => toOut(r, scope)) };
}

/**
 * The machines a search can touch, for the read barrier: its `machines.include`
 * list less `exclude` when it names one, else every machine (undefined).
 */
export function machinesFilterCanTouch(filters: ProductionLogFilters): number[] | undefined {
  const include = filters.machines?.include;
  if (!include || include.length === 0) return undefined;
  const exclude = new Set(filters.machines?.exclude ?? []);
  return include.filter((id) => !exclude.has(id));
}
