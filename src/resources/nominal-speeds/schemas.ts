/**
 * Request and response schemas of the nominal speed endpoints.
 */

import { z } from "@hono/zod-openapi";
import { dateTime } from "../../http/instants";
import { PageFields } from "../../http/pagination";
import { unchangedWhenNull } from "../../http/patch-fields";
import {
  integerIdListFields,
  NumericComparisonFilter,
  stringIdListFields,
} from "../../http/search";
import { SyncFilterFields } from "../../http/sync";
import { MachineRefSchema, SkuRefSchema } from "../references";

/** Largest nominal speed or counting factor accepted (a sanity bound, not a physical one). */
export const MAX_RATE = 1e9;
/**
 * Smallest nominal speed or counting factor accepted: one unit in about two years per
 * minute-rate. Bounded so that `count / nominalSpeed` (the report's ideal minutes) and
 * `count / countingFactor` (sensor pulses) stay finite and safe integers
 * (docs/input-bounds.md).
 */
export const MIN_RATE = 1e-6;

/** What a rate's bounds say in a field description. */
export const RATE_BOUNDS = `Between ${MIN_RATE} and ${MAX_RATE.toExponential()} inclusive.`;

const positive = (description: string) =>
  z
    .number()
    .min(MIN_RATE)
    .max(MAX_RATE)
    .openapi({ description: `${description} ${RATE_BOUNDS}` });

export const NominalSpeedSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    machine: z.object({ id: z.number().int(), name: z.string() }),
    sku: z.object({
      id: z.string().openapi({ format: "uuid" }),
      sku: z.string().openapi({ description: "The SKU's code." }),
      name: z.string().nullable(),
      description: z.string().nullable(),
      unit: z.string().nullable(),
    }),
    nominalSpeed: z.number().openapi({
      description: "Expected rate, SKU units per minute; the denominator of performance in OEE.",
    }),
    countingFactor: z.number().openapi({
      description: "SKU units per sensor pulse (12 where one pulse is a case of twelve).",
    }),
    createdAt: dateTime(),
    updatedAt: dateTime(),
    deletedAt: dateTime().nullable(),
  })
  .openapi("NominalSpeed");

export const NominalSpeedCreateSchema = z
  .object({
    nominalSpeed: positive("SKU units per minute."),
    machine: MachineRefSchema,
    sku: SkuRefSchema,
    countingFactor: positive("SKU units per sensor pulse; default 1.").nullish(),
  })
  .strict()
  .openapi("NominalSpeedCreate");

export type NominalSpeedCreate = z.infer<typeof NominalSpeedCreateSchema>;

export const NominalSpeedPatchSchema = z
  .object({
    nominalSpeed: unchangedWhenNull(positive("SKU units per minute.")).openapi({
      description: "SKU units per minute, > 0; absent or null = unchanged.",
    }),
    countingFactor: unchangedWhenNull(positive("SKU units per sensor pulse.")).openapi({
      description: "SKU units per sensor pulse, > 0; absent or null = unchanged.",
    }),
    machine: unchangedWhenNull(MachineRefSchema).openapi({
      description: "The machine, by `id` or `name`; absent or null = unchanged.",
    }),
    sku: unchangedWhenNull(SkuRefSchema).openapi({
      description: "The SKU, by `id` or `name`; absent or null = unchanged.",
    }),
  })
  .strict()
  .openapi("NominalSpeedPatch");

export type NominalSpeedPatch = z.infer<typeof NominalSpeedPatchSchema>;

export const NominalSpeedFiltersSchema = z
  .object({
    ...PageFields,
    machines: z
      .object(integerIdListFields)
      .strict()
      .nullish()
      .openapi({ description: "Machine ids to include or exclude." }),
    skus: z
      .object(stringIdListFields)
      .strict()
      .nullish()
      .openapi({ description: "SKU ids to include or exclude." }),
    nominalSpeed: NumericComparisonFilter.openapi({
      description: "Comparisons with the nominal speed; every operator given applies.",
    }),
    ...SyncFilterFields,
  })
  .strict()
  .openapi("NominalSpeedFilters");

export type NominalSpeedFilters = z.infer<typeof NominalSpeedFiltersSchema>;
