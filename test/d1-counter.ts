/**
 * A D1 binding that counts the statements the Worker sends through it: one per
 * statement run on its own (`first`, `all`, `run`, `raw`) and one per statement
 * of a `batch`, which is how D1 counts queries against its per-invocation limit.
 * It also adds up the rows each statement read as D1 reports them (`meta.rows_read`,
 * what D1 bills and what scans show in); a `raw()` read carries no `meta`, so it
 * is run once more with `all()` for its meta alone (not counted as a statement).
 * Requests go through the real app with this binding in place of `env.DB`.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../src/app";
import { shardBindings } from "../src/db/shards";
import type { Env } from "../src/env";

/** One statement sent: its SQL, bound values and the rows D1 says it read. */
export interface SentStatement {
  sql: string;
  params: unknown[];
  rowsRead: number;
  /** The D1 call (round trip) that sent it, counted from 1: a batch's statements share one. */
  call: number;
}

/** D1 round trips: every call (a statement alone or a batch), and those waited for in turn. */
export interface RoundTrips {
  /** Calls to D1. */
  calls: number;
  /** Calls that began while no other was under way: the round trips waited for one after another. */
  sequential: number;
}

export interface CountingD1 {
  binding: D1Database;
  /** Round trips so far. */
  trips(): RoundTrips;
  /** Statements sent so far. */
  count(): number;
  /** The SQL of every statement sent so far, in order. */
  sent(): string[];
  /** Every statement sent so far with its parameters and rows read, in order. */
  statements(): SentStatement[];
  /** Rows read by every statement sent so far (`meta.rows_read` summed). */
  rowsRead(): number;
}

const WRITE = /^\s*(insert|update|delete|replace)\b/i;

interface Meta {
  rows_read?: number;
}

/**
 * Wraps a D1 binding; statements and batches go to the real one, counted.
 *
 * @param log where statements are recorded: pass one log to several bindings (the
 *   directory and the shards) to count a request's statements over all of them, in order.
 */
export function countingD1(
  real: D1Database,
  log: SentStatement[] = [],
  trips: RoundTrips & { inFlight: number } = { calls: 0, sequential: 0, inFlight: 0 },
): CountingD1 {
  /** Runs one D1 call; its number is in `current` until the call's statements are recorded. */
  let current = 0;
  const trip = async <T>(run: () => Promise<T>): Promise<[T, number]> => {
    trips.calls += 1;
    const call = trips.calls;
    if (trips.inFlight === 0) trips.sequential += 1;
    trips.inFlight += 1;
    try {
      return [await run(), call];
    } finally {
      trips.inFlight -= 1;
    }
  };
  const unwrap = new WeakMap<object, D1PreparedStatement>();
  const sqlOf = new WeakMap<object, { sql: string; params: unknown[] }>();
  const record = (entry: { sql: string; params: unknown[] }, meta: Meta | undefined) => {
    log.push({ ...entry, rowsRead: meta?.rows_read ?? 0, call: current });
  };
  const wrapStatement = (
    statement: D1PreparedStatement,
    query: string,
    params: unknown[],
  ): D1PreparedStatement => {
    const entry = { sql: query, params };
    const proxy = new Proxy(statement, {
      get(target, prop) {
        if (prop === "bind") {
          return (...values: unknown[]) => wrapStatement(target.bind(...values), query, values);
        }
        if (prop === "all" || prop === "run") {
          return async () => {
            const [result, call] = await trip(() => target.all());
            current = call;
            record(entry, result.meta as Meta);
            return result;
          };
        }
        if (prop === "first") {
          return async (column?: string) => {
            const [result, call] = await trip(() => target.all<Record<string, unknown>>());
            current = call;
            record(entry, result.meta as Meta);
            const row = result.results[0];
            if (row === undefined) return null;
            return column === undefined ? row : (row[column] ?? null);
          };
        }
        if (prop === "raw") {
          return async (options?: { columnNames?: boolean }) => {
            const [rows, call] = await trip(() =>
              options?.columnNames ? target.raw({ columnNames: true }) : target.raw(),
            );
            const meta = WRITE.test(query) ? undefined : ((await target.all()).meta as Meta);
            current = call;
            record(entry, meta);
            return rows;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    unwrap.set(proxy, statement);
    sqlOf.set(proxy, entry);
    return proxy;
  };
  // A binding's statements and a session's (the app opens one per request) are counted alike.
  const wrapSource = <T extends D1Database | D1DatabaseSession>(source: T): T =>
    new Proxy(source, {
      get(target, prop) {
        if (prop === "prepare") {
          return (query: string) => wrapStatement(target.prepare(query), query, []);
        }
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            const [results, call] = await trip(() =>
              target.batch(statements.map((s) => unwrap.get(s) ?? s)),
            );
            current = call;
            statements.forEach((s, i) => {
              record(sqlOf.get(s) ?? { sql: "", params: [] }, results[i]?.meta as Meta);
            });
            return results;
          };
        }
        if (prop === "withSession" && "withSession" in target) {
          return (anchor?: string) => wrapSource(target.withSession(anchor));
        }
        if (prop === "exec" && "exec" in target) {
          return (query: string) => {
            for (const part of query.split(";").filter((q) => q.trim() !== "")) {
              record({ sql: part, params: [] }, undefined);
            }
            return target.exec(query);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const binding = wrapSource(real);
  return {
    binding,
    trips: () => ({ calls: trips.calls, sequential: trips.sequential }),
    count: () => log.length,
    sent: () => log.map((s) => s.sql),
    statements: () => log.map((s) => ({ ...s })),
    rowsRead: () => log.reduce((sum, s) => sum + s.rowsRead, 0),
  };
}

const app = createApp();

/**
 * The Worker's bindings with the directory (`DB`) and every shard counting statements into
 * one log.
 *
 * @returns the bindings and the counter of all of them (its `binding` is the directory's).
 */
export function countingEnv(): { env: Env; counter: CountingD1 } {
  const log: SentStatement[] = [];
  const trips = { calls: 0, sequential: 0, inFlight: 0 };
  const counter = countingD1(env.DB, log, trips);
  const counted: Record<string, unknown> = { ...(env as unknown as Env), DB: counter.binding };
  for (const [name, shard] of shardBindings(env)) {
    counted[name] = countingD1(shard, log, trips).binding;
  }
  return { env: counted as unknown as Env, counter };
}

/**
 * Sends one request to a fresh app whose D1 bindings (directory and shards) count statements.
 *
 * @returns the response, the number of D1 statements the request sent (its work after the
 *   answer included) and what it sent, and the D1 statements and round trips made before
 *   the answer (`answered`).
 */
export async function countStatements(request: Request): Promise<{
  response: Response;
  statements: number;
  counter: CountingD1;
  answered: RoundTrips & { statements: number };
}> {
  const { env: counted, counter } = countingEnv();
  const ctx = createExecutionContext();
  const response = await app.fetch(request, counted, ctx);
  const answered = { ...counter.trips(), statements: counter.count() };
  await waitOnExecutionContext(ctx);
  return { response, statements: counter.count(), counter, answered };
}
