/**
 * Column helpers shared by the tables: creation and last-change instants, in ms since the
 * Unix epoch, set by SQLite when a row is written without them.
 */
import { sql } from "drizzle-orm";
import { integer } from "drizzle-orm/sqlite-core";

/** `created_at`, ms since the epoch, defaulting to the insert's instant. */
export const createdAt = () =>
  integer("created_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

/** `updated_at`, ms since the epoch; every write sets it (pull sync orders by it). */
export const updatedAt = () =>
  integer("updated_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
