/**
 * SKU queries; every one is scoped to a company and ignores deleted SKUs.
 */
import { asc, count, eq, type SQL } from "drizzle-orm";
import { type CompanyScope, notDeleted, owned, softDelete } from "../../db/company-scope";
import { type JsonRowColumn, jsonRowSelects } from "../../db/json-rows";
import { skus } from "../../db/schema";
import { type Page, type PageRequest, paginate } from "../../http/pagination";
import { fuzzyContains, idListConditions, normalizeForSearch } from "../../http/search";
import { syncConditions, syncOrder } from "../../http/sync";
import type { SkuFilters, SkuPatch } from "./schemas";

/** A SKU row as the API shows it (instants in ms since the epoch). */
export interface SkuRow {
  id: string;
  sku: string;
  name: string | null;
  description: string | null;
  unit: string | null;
  archived: boolean;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

const skuColumns = {
  id: skus.id,
  sku: skus.sku,
  name: skus.name,
  description: skus.description,
  unit: skus.unit,
  archived: skus.archived,
  createdAt: skus.createdAt,
  updatedAt: skus.updatedAt,
  deletedAt: skus.deletedAt,
};

/** A new SKU, defaults already applied. */
interface NewSku {
  sku: string;
  name: string | null;
  description: string | null;
  unit: string | null;
  archived: boolean;
}

/** The columns of `skus` in table order, as `jsonRowSelects` fills them. */
const SKU_COLUMNS: readonly JsonRowColumn[] = [
  ...["json", "company"],
  // sku, name, description, unit, archived and the four search columns
  ...["json", "json", "json", "json", "json", "json", "json", "json", "json"],
  ...["now", "now", "null"],
] as const;

/**
 * Inserts SKUs, all or none: one `INSERT ... SELECT FROM json_each(?)` per
 * chunk of rows (`src/db/json-rows.ts`; one for a typical 1,000-item call),
 * in one batch.
 *
 * @returns the created rows, in the order given.
 */
export async function insertSkus(
  { db, companyId }: CompanyScope,
  items: readonly NewSku[],
): Promise<SkuRow[]> {
  const now = Date.now();
  const rows: SkuRow[] = items.map((item) => ({
    id: crypto.randomUUID(),
    ...item,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  }));
  // Every column in table order, as drizzle's insert-select lists them.
  const [first, ...rest] = jsonRowSelects(
    { companyId },
    SKU_COLUMNS,
    rows.map((r) => [
      r.id,
      r.sku,
      r.name,
      r.description,
      r.unit,
      r.archived,
      normalizeForSearch(r.sku),
      normalizeForSearch(r.name),
      normalizeForSearch(r.description),
      normalizeForSearch(r.unit),
    ]),
    { now },
  ).map((select) => db.insert(skus).select(select));
  if (first) await db.batch([first, ...rest]);
  return rows;
}

/** The company's SKU with this id, or undefined (deleted, unknown, or another company's). */
export function findSku(scope: CompanyScope, id: string): Promise<SkuRow | undefined> {
  return scope.db
    .select(skuColumns)
    .from(skus)
    .where(notDeleted(scope, skus, eq(skus.id, id)))
    .get();
}

/**
 * Applies a partial update (only the fields present), keeping the search columns in step.
 *
 * @returns false when the SKU does not exist for this company (or is deleted).
 */
export async function updateSku(
  scope: CompanyScope,
  id: string,
  patch: SkuPatch,
): Promise<boolean> {
  const set: Partial<typeof skus.$inferInsert> = {};
  if (patch.sku !== undefined) {
    set.sku = patch.sku;
    set.skuSearch = normalizeForSearch(patch.sku);
  }
  if (patch.name !== undefined) {
    set.name = patch.name;
    set.nameSearch = normalizeForSearch(patch.name);
  }
  if (patch.description !== undefined) {
    set.description = patch.description;
    set.descriptionSearch = normalizeForSearch(patch.description);
  }
  if (patch.unit !== undefined) {
    set.unit = patch.unit;
    set.unitSearch = normalizeForSearch(patch.unit);
  }
  if (patch.archived !== undefined) set.archived = patch.archived;
  if (Object.keys(set).length === 0) return (await findSku(scope, id)) !== undefined;
  set.updatedAt = Date.now();
  const updated = await scope.db
    .update(skus)
    .set(set)
    .where(notDeleted(scope, skus, eq(skus.id, id)))
    .returning({ id: skus.id });
  return updated.length > 0;
}

/**
 * Soft-deletes a SKU (`deleted_at` set): gone from GET and filters.
 *
 * @returns false when the SKU does not exist for this company (or is already deleted).
 */
export async function softDeleteSku(scope: CompanyScope, id: string): Promise<boolean> {
  return (await softDelete(scope, skus, eq(skus.id, id))) > 0;
}

/**
 * One page of the company's SKUs matching every filter given, ordered by the
 * `sku` code, then id. Archived SKUs are included.
 */
export function filterSkus(
  scope: CompanyScope,
  filters: SkuFilters,
  page: PageRequest,
): Promise<Page<SkuRow>> {
  const conditions: (SQL | undefined)[] = [
    ...syncConditions(skus, filters),
    fuzzyContains(skus.skuSearch, filters.skus?.search),
    ...idListConditions(skus.id, filters.skus),
    fuzzyContains(skus.nameSearch, filters.names?.search),
    fuzzyContains(skus.descriptionSearch, filters.description?.search),
    fuzzyContains(skus.unitSearch, filters.unit?.search),
  ];
  const where = owned(scope, skus, ...conditions);
  return paginate(
    page,
    scope.db.select({ count: count() }).from(skus).where(where),
    ({ limit, offset }) =>
      scope.db
        .select(skuColumns)
        .from(skus)
        .where(where)
        .orderBy(...syncOrder(skus, filters, [asc(skus.sku), asc(skus.id)]))
        .limit(limit)
        .offset(offset),
  );
}
