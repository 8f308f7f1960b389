/**
 * The Drizzle client over the D1 binding.
 */
import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = ReturnType<typeof newClient>;

const newClient = (d1: D1Database) => drizzle(d1, { schema });

/**
 * Clients made so far, by binding. Building one is not free: Drizzle walks the
 * whole schema for its relational config (about 1-2 ms of CPU per request in
 * workerd, measured with the DevTools profiler), and the binding is the same
 * object for every request of an isolate. A client holds no connection and no
 * per-request state, so sharing it is safe.
 */
const clients = new WeakMap<D1Database, Database>();

/**
 * The typed Drizzle client of a D1 binding, made once per binding object.
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
