/**
 * The columns of an export file: a row schema's fields flattened with dots, as the CSV
 * answers name them (`productionMetrics.oee`, src/http/csv.ts), each with the type a typed
 * file (Parquet) gives it, read from the schema: so that an export has the columns and
 * types of the JSON rows it copies, never a hand-kept list (docs/exports.md).
 */
import { getOpenApiMetadata } from "@asteasolutions/zod-to-openapi";
import { z } from "@hono/zod-openapi";

/**
 * A column's type in a typed file: `timestamp` for the schema's `date-time` strings (an
 * instant, UTC, millisecond precision), `int` for integers, `double` for other numbers.
 */
export type ColumnType = "string" | "int" | "double" | "boolean" | "timestamp";

/** One column of an export file. */
export interface Column {
  /** The dotted name (`machine.id`), as the CSV header and the Parquet schema give it. */
  readonly name: string;
  /** The path of the value in a row (`["machine", "id"]`). */
  readonly path: readonly string[];
  readonly type: ColumnType;
}

/** The type a schema leaf gives its column. */
function leafType(schema: z.ZodType): ColumnType {
  if (schema instanceof z.ZodBoolean) return "boolean";
  if (schema instanceof z.ZodNumber) return schema.format === "safeint" ? "int" : "double";
  if (schema instanceof z.ZodString) {
    return getOpenApiMetadata(schema)?.format === "date-time" ? "timestamp" : "string";
  }
  if (schema instanceof z.ZodEnum || schema instanceof z.ZodLiteral) return "string";
  throw new Error(`export columns: no column type for a ${schema.constructor.name}`);
}

/**
 * The columns of a row schema: an object's fields in order, nested objects (also optional,
 * nullable or `X | null`) flattened with dots, the same walk as `csvColumns`.
 *
 * @param schema a zod object schema.
 * @param keep optional filter on the top-level field names (the KPI rows keep the keys of
 *   their `groupBy` only).
 * @throws Error for a leaf with no column type (an array, a record): a programming error
 *   caught by the exports' tests, which build every dataset's columns.
 */
export function flatColumns(schema: z.ZodType, keep?: (field: string) => boolean): Column[] {
  const walk = (s: z.ZodType, path: string[]): Column[] => {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable) {
      return walk(s.unwrap() as z.ZodType, path);
    }
    if (s instanceof z.ZodUnion) {
      const objects = (s.options as z.ZodType[]).filter((o) => !(o instanceof z.ZodNull));
      if (objects.length === 1 && objects[0]) return walk(objects[0], path);
    }
    if (s instanceof z.ZodObject) {
      return Object.entries(s.shape as Record<string, z.ZodType>).flatMap(([field, inner]) =>
        path.length === 0 && keep && !keep(field) ? [] : walk(inner, [...path, field]),
      );
    }
    return [{ name: path.join("."), path, type: leafType(s) }];
  };
  return walk(schema, []);
}

/**
 * The value of a column in a row: undefined when a step of its path is null or absent (an
 * unclassified stop's causes), which both formats write as empty (CSV) or null (Parquet).
 */
export function valueAt(row: unknown, path: readonly string[]): unknown {
  let v: unknown = row;
  for (const step of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}
