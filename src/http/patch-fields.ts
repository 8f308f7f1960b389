/**
 * Field schemas for PATCH bodies.
 */
import type { z } from "@hono/zod-openapi";

/**
 * A PATCH field whose stored value cannot be null, sent "optional nullable" as the
 * spec has it: absent or `null` both leave the stored value unchanged (the handler
 * sees `undefined`); any other value must pass `schema`. A nullable field keeps its
 * own `.nullish()`, where `null` clears the value.
 *
 * @param schema the field's schema for a real value.
 * @returns a schema whose input is `T | null | undefined` and whose output is `T | undefined`.
 */
export function unchangedWhenNull<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}
