/**
 * Request pieces shared by the public and the operator API: create bodies (JSON arrays of
 * 1 to 1,000 items), object bodies, and integer and uuid path ids.
 */
import { z } from "@hono/zod-openapi";

/** Most items in one create call (public and operator). */
export const MAX_CREATE_ITEMS = 1000;

/** A JSON array body of 1..MAX_CREATE_ITEMS items. */
export function arrayBody<T extends z.ZodType>(item: T) {
  return {
    required: true,
    content: { "application/json": { schema: z.array(item).min(1).max(MAX_CREATE_ITEMS) } },
  };
}

/** A JSON object body. */
export function objectBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

/** A positive integer path parameter `name` (given as text, read as a number). */
export const IntId = (name: string) =>
  z.coerce
    .number()
    .int()
    .positive()
    .openapi({ type: "integer", param: { name, in: "path" } });

/** A uuid path parameter `name` (any version, any case). */
export const UuidId = (name: string) =>
  z.guid().openapi({ format: "uuid", param: { name, in: "path" } });
