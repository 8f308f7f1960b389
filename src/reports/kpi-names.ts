/**
 * The names of what a KPI report's groups refer to: a group keyed by SKU, operator or simple
 * work order carries its id until the end, then `{id, name}` with the record's name (an
 * operator's first and last names), read in one statement per kind for the ids the groups
 * hold. docs/metrics.md ("KPIs by any dimension").
 */

import { type CompanyScope, owned } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { operators, simpleWorkOrders, skus } from "../db/schema";
import type { GroupKey } from "./grouping";
import type { KpiKey } from "./kpi-schemas";
import { type Attributed, isAttributed } from "./kpi-sums";

/**
 * The names of the SKUs, operators and work orders of the given ids, of the company: at most
 * three statements at once, none for a kind without ids. An id the company does not have
 * (a record deleted for good) has no entry.
 *
 * @param scope the caller's company (every row read is of it).
 * @param ids the ids per kind.
 * @returns the names per kind and id; an operator's is its first and last names.
 */
async function referenceNames(
  scope: CompanyScope,
  ids: Record<Attributed, Set<string | number>>,
): Promise<Record<Attributed, Map<string | number, string>>> {
  const { db, companyId } = scope;
  const json = (values: Set<string | number>) => JSON.stringify([...values]);
  const [skuRows, operatorRows, workOrderRows] = await Promise.all([
    ids.sku.size === 0
      ? []
      : db
          .select({ id: skus.id, name: skus.sku })
          .from(skus)
          .where(owned({ companyId }, skus, inJsonList(skus.id, json(ids.sku)))),
    ids.operator.size === 0
      ? []
      : db
          .select({ id: operators.id, first: operators.firstName, last: operators.lastName })
          .from(operators)
          .where(owned({ companyId }, operators, inJsonList(operators.id, json(ids.operator)))),
    ids.simpleWorkOrder.size === 0
      ? []
      : db
          .select({ id: simpleWorkOrders.id, name: simpleWorkOrders.name })
          .from(simpleWorkOrders)
          .where(
            owned(
              { companyId },
              simpleWorkOrders,
              inJsonList(simpleWorkOrders.id, json(ids.simpleWorkOrder)),
            ),
          ),
  ]);
  return {
    sku: new Map(skuRows.map((r) => [r.id, r.name])),
    operator: new Map(
      operatorRows.map((r) => [r.id, [r.first, r.last].filter((p) => p).join(" ")]),
    ),
    simpleWorkOrder: new Map(workOrderRows.map((r) => [r.id, r.name])),
  };
}

/**
 * Gives the groups' SKU, operator and work order keys their names, in place: each such key
 * that holds an id becomes `{id, name}` (the name "" for a record the company no longer
 * has); null keys (time no log covers) and the other keys stay as they are.
 *
 * @param scope the caller's company.
 * @param groupBy the ordered keys of the groups.
 * @param groups the summed groups, whose `keys` follow `groupBy`.
 */
export async function nameReferences(
  scope: CompanyScope,
  groupBy: readonly KpiKey[],
  groups: readonly { keys: GroupKey[] }[],
): Promise<void> {
  const ids: Record<Attributed, Set<string | number>> = {
    sku: new Set(),
    operator: new Set(),
    simpleWorkOrder: new Set(),
  };
  for (const g of groups) {
    groupBy.forEach((k, i) => {
      const key = g.keys[i];
      if (isAttributed(k) && key !== null && key !== undefined && typeof key !== "object") {
        ids[k].add(key);
      }
    });
  }
  const names = await referenceNames(scope, ids);
  for (const g of groups) {
    g.keys = g.keys.map((key, i) => {
      const k = groupBy[i];
      return k && isAttributed(k) && key !== null && typeof key !== "object"
        ? { id: key, name: names[k].get(key) ?? "" }
        : key;
    });
  }
}
