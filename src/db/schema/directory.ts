/**
 * The directory's own tables (the `DB` binding; src/db/shards.ts): the id ranges of the
 * shards, the keys that must be unique across shards, and the companies that left a shard.
 * Every database is migrated with the whole schema (one migration stream), so these tables
 * exist, empty, in every shard too. Part of the data model (src/db/schema.ts).
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt } from "./timestamps";

/**
 * The id ranges handed to shards: range `r` is the integer ids `[r * 2^40, (r + 1) * 2^40)`
 * of every AUTOINCREMENT table, allocated by exactly one shard. The counter is the largest
 * index plus one (rows are never deleted, the first is 0): a range index is never handed out
 * twice, and a later one is above every earlier one. A shard gets its first range when it is registered and a fresh one after a company
 * is moved into it (docs/scaling.md).
 */
export const shardRanges = sqliteTable(
  "shard_ranges",
  {
    rangeIndex: integer("range_index").primaryKey({ autoIncrement: true }),
    /** The shard's binding name. */
    shard: text("shard").notNull(),
    /** When the shard's sequences were set to the range (ms); null = not yet, not placeable. */
    readyAt: integer("ready_at"),
    createdAt: createdAt(),
  },
  (t) => [index("shard_ranges_shard_idx").on(t.shard, t.rangeIndex)],
);

/**
 * Keys unique across every shard and the company that holds each: machine uuids
 * (`machine`), signal public ids (`signal`), webhook registration ids (`webhook`). Written
 * before the row in the shard (a taken key is refused there), and how the operator API finds
 * the company of a signal or a registration by its id.
 */
export const directoryKeys = sqliteTable(
  "directory_keys",
  {
    kind: text("kind", { enum: ["machine", "signal", "webhook"] }).notNull(),
    value: text("value").notNull(),
    companyId: integer("company_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.value] })],
);

/**
 * Companies that left a shard (written by a move): the rows with ids from that shard's
 * ranges may now be in these companies' current shards, so a lookup by global id that
 * does not find a row in the shard of its range looks there too.
 */
export const companyDepartures = sqliteTable(
  "company_departures",
  {
    fromShard: text("from_shard").notNull(),
    companyId: integer("company_id").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.fromShard, t.companyId] })],
);
