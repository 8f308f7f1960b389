/**
 * SKUs: `POST /v1/skus`, `POST /v1/skus/filters`, `GET`, `PATCH` and `DELETE /v1/skus/{sku_id}`,
 * in the shared shape (../crud.ts). Their own: the create's defaults (`unit` `units`,
 * `archived` false) and the archive flag, which a PATCH sets and the searches keep showing.
 */
import { createRouter } from "../../http/openapi";
import { MAX_CREATE_ITEMS } from "../../http/schemas";
import { crudRoutes, shownWithCompany, uuidPathId } from "../crud";
import { insertSkus, skuTable } from "./queries";
import { SkuCreateSchema, SkuFiltersSchema, SkuPatchSchema, SkuSchema } from "./schemas";

export const skusRoutes = crudRoutes(createRouter(), {
  scope: "skus",
  path: "/v1/skus",
  tag: "SKUs",
  name: { one: "Sku", many: "Skus", list: "skus" },
  noun: { one: "SKU", many: "SKUs" },
  id: uuidPathId("sku_id"),
  notFound: "SKU not found",
  schemas: {
    row: SkuSchema,
    create: SkuCreateSchema,
    patch: SkuPatchSchema,
    filters: SkuFiltersSchema,
  },
  table: skuTable,
  out: shownWithCompany,
  create: {
    summary: "Create SKUs",
    description:
      `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} SKUs, all created or none: ` +
      'one invalid item gives a 422 whose `loc` starts with its index (`["body", 3, "sku"]`). ' +
      "`unit` defaults to `units` (null = no unit), `archived` to false. Codes need not be unique. " +
      "Success is **200** with the created SKUs in the order given.",
    run: ({ scope }, items) =>
      insertSkus(
        scope,
        items.map((item) => ({
          sku: item.sku,
          name: item.name ?? null,
          description: item.description ?? null,
          unit: item.unit === undefined ? "units" : item.unit,
          archived: item.archived ?? false,
        })),
      ),
  },
  search: {
    summary: "Search SKUs",
    description:
      "Every filter is optional and they combine with AND; `{}` (or no body) is the first page of 10. " +
      "`skus.search`, `names.search`, `description.search` and `unit.search` are fuzzy: case- and " +
      "accent-insensitive containment (`jose` finds `José`), at most 50 UTF-8 bytes. " +
      "`skus.include`/`skus.exclude` take SKU ids. Archived SKUs are included; deleted ones never. " +
      "Ordered by `sku` code, then id; `limit` is 1 to 100; a page past the last is empty with the same totals.",
  },
  get: { summary: "Get a SKU" },
  update: {
    summary: "Update a SKU",
    description:
      "Send only the fields to change; each is optional and nullable. `null` for `sku` or `archived` " +
      "(which cannot be null) leaves them unchanged, as an absent field does; `null` for `name`, " +
      "`description` or `unit` clears them. An unknown field is a 422. " +
      "`archived: true` archives and `archived: false` unarchives (an archived SKU stays in the catalog " +
      "and in searches). Changing `unit` converts no historical count. `{}` changes nothing. Success is 204.",
  },
  delete: {
    summary: "Delete a SKU",
    description:
      "Soft delete: `deletedAt` is set and the SKU disappears from GET and searches. Success is 204.",
  },
});
