/**
 * The Drizzle client over the D1 binding.
 */
import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = ReturnType<typeof createDb>;

/** Wraps a D1 binding in a typed Drizzle client (cheap: no connection is opened). */
export function createDb(d1: D1Database) {
  return drizzle(d1, { schema });
}
