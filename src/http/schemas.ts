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

/**
 * An integer written as text in a path or a query: decimal digits (a leading `-` for a
 * negative one), from `min` to `max`, read as a number. Exactly what the OpenAPI document
 * states (`type: integer` with both bounds): `z.coerce.number()` would also take `1e3`,
 * `0x10`, ` 7` or an empty value (as 0), none of which a schema of an integer allows.
 *
 * @param min smallest value accepted; `max` the largest (at most `Number.MAX_SAFE_INTEGER`).
 */
export function textInteger(min: number, max: number) {
  return z
    .union([
      // A JSON number where the same schema reads a tool's arguments (MCP: src/mcp/tool.ts).
      z.number(),
      z
        .string()
        .regex(/^-?\d{1,16}$/, "Input should be a valid integer")
        .transform(Number),
    ])
    .pipe(z.number().int().min(min).max(max))
    .openapi({ type: "integer", minimum: min, maximum: max });
}

/** Largest integer id: ids are JavaScript-safe integers (each shard's ranges are below 2^53). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** A positive integer path parameter `name` (decimal digits, 1 to {@link MAX_ID}). */
export const IntId = (name: string) =>
  textInteger(1, MAX_ID).openapi({ param: { name, in: "path" } });

/** A uuid path parameter `name` (any version, any case). */
export const UuidId = (name: string) =>
  z.guid().openapi({ format: "uuid", param: { name, in: "path" } });
