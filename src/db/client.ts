/**
 * The Drizzle client over a D1 binding or a D1 session.
 */
import {
  createTableRelationsHelpers,
  type ExtractTablesWithRelations,
  extractTablesRelationalConfig,
  type RelationalSchemaConfig,
} from "drizzle-orm";
import { DrizzleD1Database, drizzle, SQLiteD1Session } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";

export type Database = ReturnType<typeof newClient>;

const newClient = (d1: D1Database) => drizzle(d1, { schema });

/**
 * Clients made so far, by binding. Building one with `drizzle()` is not free: Drizzle walks
 * the whole schema for its relational config (measured: docs/benchmarks.md, "Costs behind
 * choices in the code"), and the binding is the same object for every
 * request of an isolate. A client holds no connection and no per-request state, so sharing
 * it is safe.
 */
const clients = new WeakMap<D1Database, Database>();

/**
 * The typed Drizzle client of a D1 binding, made once per binding object. Its statements go
 * to the primary database (D1 sends every query made without a session there): for work
 * outside a request (Durable Objects, the queue consumer, the cron sweeper).
 *
 * @param d1 the D1 binding (`env.DB`).
 * @returns the client; the same one for the same binding.
 */
export function createDb(d1: D1Database): Database {
  let client = clients.get(d1);
  if (!client) {
    client = newClient(d1);
    clients.set(d1, client);
  }
  return client;
}

type Tables = ExtractTablesWithRelations<typeof schema>;

/** The schema's relational config, computed once per isolate (the costly part of `drizzle()`). */
let relational: RelationalSchemaConfig<Tables> | undefined;

function relationalConfig(): RelationalSchemaConfig<Tables> {
  const tables = extractTablesRelationalConfig<Tables>(schema, createTableRelationsHelpers);
  return { fullSchema: schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap };
}

/**
 * A typed Drizzle client over a D1 object made for one request (a session,
 * src/db/session.ts), built the way `drizzle()` builds one but over the relational config
 * computed once per isolate: a dialect, a Drizzle session and one query builder per table,
 * about a microsecond of CPU where `drizzle()` walks the schema again (bench/session-client.ts
 * measures both).
 *
 * @param d1 what the statements go to; only `prepare` and `batch` are called.
 * @returns a client equivalent to `drizzle(d1, { schema })`.
 */
export function createSessionDb(d1: D1Database): Database {
  relational ??= relationalConfig();
  const dialect = new SQLiteAsyncDialect();
  const session = new SQLiteD1Session<typeof schema, Tables>(d1, dialect, relational, {});
  const db = new DrizzleD1Database<typeof schema>("async", dialect, session, relational);
  // `drizzle()` sets `$client` too: statements written as SQL text reach the same session.
  return Object.assign(db, { $client: d1 });
}
