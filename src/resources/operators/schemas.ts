/**
 * Request and response schemas of the operator endpoints.
 */
import { z } from "@hono/zod-openapi";
import { PageFields } from "../../http/pagination";
import { FuzzySearchFilter } from "../../http/search";
import { SyncFilterFields, SyncStampFields } from "../../http/sync";
import { CompanyRefSchema } from "../references";

/** Longest first or last name accepted. */
export const MAX_OPERATOR_NAME = 100;

const NameField = z.string().trim().max(MAX_OPERATOR_NAME).nullish();

export const OperatorSchema = z
  .object({
    id: z.number().int(),
    company: CompanyRefSchema,
    firstName: z
      .string()
      .nullable()
      .openapi({ description: "Null until completed by a PATCH.", example: "José" }),
    lastName: z.string().nullable().openapi({ example: "Muñoz" }),
    ...SyncStampFields,
  })
  .openapi("Operator");

export const OperatorCreateSchema = z
  .object({
    firstName: NameField.openapi({ description: "Trimmed; optional, nullable." }),
    lastName: NameField.openapi({ description: "Trimmed; optional, nullable." }),
  })
  .strict()
  .openapi("OperatorCreate");

export const OperatorPatchSchema = z
  .object({
    firstName: NameField.openapi({ description: "Trimmed; null clears it." }),
    lastName: NameField.openapi({ description: "Trimmed; null clears it." }),
  })
  .strict()
  .openapi("OperatorPatch");

export const OperatorFiltersSchema = z
  .object({
    ...PageFields,
    firstName: FuzzySearchFilter,
    lastName: FuzzySearchFilter,
    ...SyncFilterFields,
  })
  .strict()
  .openapi("OperatorFilters");

export type OperatorFilters = z.infer<typeof OperatorFiltersSchema>;
