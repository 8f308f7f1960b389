/**
 * The SKUs' table as the shared queries read it (../crud-queries.ts: find, search, update,
 * soft delete), and the insert of a create. Every query is scoped to a company.
 */
import { asc } from "drizzle-orm";
import type { CompanyScope } from "../../db/company-scope";
import { type JsonRowColumn, jsonRowSelects } from "../../db/json-rows";
import { skus } from "../../db/schema";
import { fuzzyContains, idListConditions, normalizeForSearch } from "../../http/search";
import type { CrudTable } from "../crud-queries";
import type { SkuFilters } from "./schemas";

/** A SKU row as the API shows it (instants in ms since the epoch). */
interface SkuRow {
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

const { id, sku, name, description, unit, archived, createdAt, updatedAt, deletedAt } = skus;
const columns = { id, sku, name, description, unit, archived, createdAt, updatedAt, deletedAt };

/**
 * The SKUs: searched fuzzily on `sku`, `name`, `description` and `unit` (their `*_search`
 * twins), by id lists, ordered by the `sku` code, then id. Archived SKUs are included.
 */
export const skuTable: CrudTable<SkuRow, SkuFilters> = {
  table: skus,
  select: (db) => db.select(columns).from(skus),
  filters: (filters) => [
    fuzzyContains(skus.skuSearch, filters.skus?.search),
    ...idListConditions(skus.id, filters.skus),
    fuzzyContains(skus.nameSearch, filters.names?.search),
    fuzzyContains(skus.descriptionSearch, filters.description?.search),
    fuzzyContains(skus.unitSearch, filters.unit?.search),
  ],
  order: [asc(skus.sku), asc(skus.id)],
  searchTwins: {
    sku: "skuSearch",
    name: "nameSearch",
    description: "descriptionSearch",
    unit: "unitSearch",
  },
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
