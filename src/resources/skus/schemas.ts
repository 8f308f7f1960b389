/**
 * Request and response schemas of the SKU endpoints.
 */

import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/instants";
import { PageFields } from "../../http/pagination";
import { unchangedWhenNull } from "../../http/patch-fields";
import { FuzzySearchFilter, SearchTerm, stringIdListFields } from "../../http/search";
import { SyncFilterFields } from "../../http/sync";
import { CompanyRefSchema } from "../references";

/** Longest SKU code, name, description and unit accepted. */
const SKU_LIMITS = { sku: 100, name: 200, description: 2000, unit: 50 } as const;

export const SkuSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    company: CompanyRefSchema,
    sku: z.string().openapi({ description: "Product code.", example: "P-0001" }),
    name: z.string().nullable().openapi({ example: "Product 1" }),
    description: z.string().nullable(),
    unit: z.string().nullable().openapi({ example: "units" }),
    archived: z.boolean(),
    createdAt: dateTime(),
    updatedAt: dateTime(),
    deletedAt: dateTime().nullable(),
  })
  .openapi("Sku");

export const SkuCreateSchema = z
  .object({
    sku: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(SKU_LIMITS.sku)
      .openapi({ description: "Product code (trimmed); the only required field." }),
    name: z.string().trim().max(SKU_LIMITS.name).nullish(),
    description: z.string().max(SKU_LIMITS.description).nullish(),
    unit: z
      .string()
      .trim()
      .max(SKU_LIMITS.unit)
      .nullish()
      .openapi({ description: "Omitted = `units`; null = no unit." }),
    archived: z.boolean().optional().openapi({ default: false }),
  })
  .strict()
  .openapi("SkuCreate");

export const SkuPatchSchema = z
  .object({
    sku: unchangedWhenNull(
      z.string().trim().regex(/\S/, "Must not be blank").max(SKU_LIMITS.sku),
    ).openapi({
      description: "New product code, trimmed; absent or null = unchanged.",
    }),
    name: z
      .string()
      .trim()
      .max(SKU_LIMITS.name)
      .nullish()
      .openapi({ description: "Absent = unchanged; null clears it." }),
    description: z
      .string()
      .max(SKU_LIMITS.description)
      .nullish()
      .openapi({ description: "Absent = unchanged; null clears it." }),
    unit: z.string().trim().max(SKU_LIMITS.unit).nullish().openapi({
      description:
        "Absent = unchanged; null clears it. Converts nothing: historical counts keep their numbers.",
    }),
    archived: unchangedWhenNull(z.boolean()).openapi({
      description: "true archives, false unarchives; absent or null = unchanged.",
    }),
  })
  .strict()
  .openapi("SkuPatch");

export const SkuFiltersSchema = z
  .object({
    ...PageFields,
    skus: z
      .object({
        search: SearchTerm.nullish().openapi({
          description:
            "Fuzzy search on the `sku` code: case- and accent-insensitive containment; blank = no filter.",
          example: "p-00",
        }),
        ...stringIdListFields,
      })
      .strict()
      .nullish(),
    names: FuzzySearchFilter,
    description: FuzzySearchFilter,
    unit: FuzzySearchFilter,
    ...SyncFilterFields,
  })
  .strict()
  .openapi("SkuFilters");

export type SkuFilters = z.infer<typeof SkuFiltersSchema>;
