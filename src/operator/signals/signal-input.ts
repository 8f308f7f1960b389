/**
 * The body item of `POST /operator/v1/machines/{machine_id}/signals`, in a module of its own
 * (zod only) so that the operator CLI (scripts/operator.ts) checks its options with the very
 * rules of the API, in Node, before it calls it.
 */
import { z } from "@hono/zod-openapi";

/** One signal to create: any non-empty kind of at most 50 characters, or null (not listed). */
export const SignalCreate = z
  .object({
    publicId: z
      .guid()
      .optional()
      .openapi({
        description:
          "Omitted = generated. A given id (any case, stored lower case) must be unused, " +
          "also by deleted signals: 409 otherwise.",
      }),
    name: z.string().trim().regex(/\S/, "Must not be blank").max(100),
    displayName: z.string().trim().regex(/\S/, "Must not be blank").max(200),
    kind: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(50)
      .nullable()
      .openapi({ description: "null = not listed publicly." }),
    description: z
      .object({
        en: z.string().max(2000).nullable().optional(),
        es: z.string().max(2000).nullable().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
