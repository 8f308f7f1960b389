/**
 * Request and response schemas of the simple work order endpoints.
 */
import { z } from "@hono/zod-openapi";
import { PageFields } from "../../http/pagination";
import { unchangedWhenNull } from "../../http/patch-fields";
import { LikePattern, MAX_SEARCH_BYTES, stringIdListFields } from "../../http/search";
import { SyncFilterFields, SyncStampFields } from "../../http/sync";
import { CompanyRefSchema } from "../references";

/** Longest work order name accepted (after trimming). */
export const MAX_WORK_ORDER_NAME = 200;

const Name = z.string().trim().regex(/\S/, "Must not be blank").max(MAX_WORK_ORDER_NAME);

export const SimpleWorkOrderSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    company: CompanyRefSchema,
    name: z.string().openapi({ example: "WO-2024-001" }),
    ...SyncStampFields,
  })
  .openapi("SimpleWorkOrder");

export const SimpleWorkOrderCreateSchema = z
  .object({
    name: Name.openapi({ description: "Trimmed; unique in the company (case-sensitive)." }),
  })
  .strict()
  .openapi("SimpleWorkOrderCreate");

export const SimpleWorkOrderPatchSchema = z
  .object({
    name: unchangedWhenNull(Name).openapi({
      description:
        "New name, trimmed; absent or null = unchanged. A name used by another work order of " +
        "the company, deleted ones included, is a 409.",
    }),
  })
  .strict()
  .openapi("SimpleWorkOrderPatch");

export const SimpleWorkOrderFiltersSchema = z
  .object({
    ...PageFields,
    simpleWorkOrders: z.object(stringIdListFields).strict().nullish(),
    names: z
      .object({
        search: LikePattern.nullish().openapi({
          description:
            "SQL LIKE pattern matched against the whole name: `%` matches any run of characters and is " +
            "the only wildcard (`_` and `\\` match themselves); ASCII letters match case-insensitively, " +
            "other characters exactly; no `%` = the whole name. At most " +
            `${MAX_SEARCH_BYTES} UTF-8 bytes, each \`_\` or \`\\\` counting twice; empty = no filter.`,
          example: "WO-2024%",
        }),
      })
      .strict()
      .nullish(),
    ...SyncFilterFields,
  })
  .strict()
  .openapi("SimpleWorkOrderFilters");

export type SimpleWorkOrderFilters = z.infer<typeof SimpleWorkOrderFiltersSchema>;
