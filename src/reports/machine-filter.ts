/**
 * The reports' `machines {search, include, exclude}` filter applied to the company's
 * machines (its schema, `MachinesFilter`, is in src/http/filters.ts with the other filter
 * operators).
 */
import type { CompanyScope } from "../db/company-scope";
import { listMachines, type MachineRow } from "../db/machines";
import type { MachinesFilterValue } from "../http/filters";
import { normalizeForSearch } from "../http/search";

/** A machine as report rows show it. */
type ReportMachine = Pick<MachineRow, "id" | "name">;

/**
 * The company's machines (not deleted) that pass a `machines` filter, by id.
 *
 * The name search is done here rather than in SQL because `machines` has no
 * normalized search column and SQLite's `lower()` folds ASCII only; a company
 * has few machines, so reading their names is cheap and keeps the fuzzy rule
 * identical to the catalog searches (`normalizeForSearch`).
 *
 * @param scope the caller's company; other companies' machines never appear.
 * @param filter the parsed filter, or null/undefined for all machines.
 * @returns the matching machines, ascending id.
 */
export async function filterMachines(
  scope: CompanyScope,
  filter: MachinesFilterValue,
): Promise<ReportMachine[]> {
  const rows = await listMachines(scope);
  const term = filter?.search ? normalizeForSearch(filter.search) : "";
  const include = filter?.include && filter.include.length > 0 ? new Set(filter.include) : null;
  const exclude = new Set(filter?.exclude ?? []);
  return rows
    .filter(
      (m) =>
        (term === "" || normalizeForSearch(m.name).includes(term)) &&
        (include === null || include.has(m.id)) &&
        !exclude.has(m.id),
    )
    .map(({ id, name }) => ({ id, name }));
}
