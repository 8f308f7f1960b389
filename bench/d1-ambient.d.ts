/**
 * The D1 binding's type as src/db/client.ts names it, for benchmarks that run src/ code in
 * Node (bench/session-client.ts): the Workers types are not loaded beside Node's.
 */
declare abstract class D1Database {
  prepare(query: string): unknown;
  batch(statements: unknown[]): Promise<unknown[]>;
}
