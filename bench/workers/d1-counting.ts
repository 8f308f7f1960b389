/**
 * The Worker of `bench/d1-load.ts`: the project's Worker and Durable Objects, unchanged,
 * except that every D1 binding they get is wrapped to count what it sends, by source. It
 * exists only in the benchmark's build (started with the project's wrangler.toml and this
 * file as the entry point); the shipped Worker (`src/index.ts`) counts nothing.
 *
 * A source is who called (the route of a request, or the Durable Object class) and the
 * first table its SQL names. Per source: round trips (one `first`/`all`/`run`/`raw`/`exec`
 * call, or one `batch`), statements (one per statement of a batch), write statements
 * (INSERT, UPDATE, DELETE, REPLACE, a CTE before one included), and rows read and written
 * as D1 reports them in each result's `meta`. `raw()` results carry no `meta`: for a read,
 * the same statement is run once more with `all()` only to read its `meta` (not counted as
 * a round trip); for a write (an INSERT ... RETURNING), the rows it returned are its rows
 * written. A session a request opens on a binding (`withSession`, src/db/session.ts) counts
 * like the binding: without it a request's shard statements went uncounted.
 *
 * - `GET /__bench/d1`: the counts so far, `{source: {roundTrips, statements, writes,
 *   rowsRead, rowsWritten}}`;
 * - `POST /__bench/d1/reset`: starts counting again;
 * - `GET /__bench/detection/<companyId>/<machineId>`: waits for that machine's stop detector
 *   and answers what it read of its store since the object started (bench/detection.ts).
 *
 * Every class runs in this one isolate locally (workerd runs a script's objects with it),
 * so one module-level table sees them all.
 */

import { shardBindings } from "../../src/db/shards";
import type { Env } from "../../src/env";
import * as project from "../../src/index";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";
import * as observed from "../../test/fixtures/observed-signal-store";

interface Counts {
  roundTrips: number;
  statements: number;
  writes: number;
  rowsRead: number;
  rowsWritten: number;
}

let table = new Map<string, Counts>();

function countsOf(source: string): Counts {
  let counts = table.get(source);
  if (!counts) {
    counts = { roundTrips: 0, statements: 0, writes: 0, rowsRead: 0, rowsWritten: 0 };
    table.set(source, counts);
  }
  return counts;
}

const WRITE = /^\s*(insert|update|delete|replace)\b/i;
const CTE_WRITE = /^\s*with\b[\s\S]*?\)\s*(insert|update|delete|replace)\b/i;

function isWrite(sql: string): boolean {
  return WRITE.test(sql) || CTE_WRITE.test(sql);
}

/** The first table a statement names (`from`, `into`, `update`), for its source. */
function tableOf(sql: string): string {
  const match = /\b(?:from|into|update)\s+["`]?([a-z_]+)/i.exec(sql);
  return match?.[1] ?? "?";
}

interface Meta {
  rows_read?: number;
  rows_written?: number;
}

function record(caller: string, sql: string, meta: Meta | undefined, returned = 0): void {
  const counts = countsOf(`${caller} · ${tableOf(sql)}`);
  counts.statements += 1;
  if (isWrite(sql)) counts.writes += 1;
  counts.rowsRead += meta?.rows_read ?? 0;
  counts.rowsWritten += meta?.rows_written ?? (isWrite(sql) ? returned : 0);
}

/** A D1 binding (or one of its sessions) that counts what `caller` sends through it. */
function countingD1<T extends D1Database | D1DatabaseSession>(real: T, caller: string): T {
  const sqlOf = new WeakMap<object, string>();
  const unwrap = new WeakMap<object, D1PreparedStatement>();
  const wrap = (statement: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        if (prop === "bind") {
          return (...values: unknown[]) => wrap(target.bind(...values), sql);
        }
        if (prop === "all" || prop === "run") {
          return async () => {
            const result = await target.all();
            countsOf(`${caller} · ${tableOf(sql)}`).roundTrips += 1;
            record(caller, sql, result.meta as Meta);
            return result;
          };
        }
        if (prop === "first") {
          return async (column?: string) => {
            const result = await target.all<Record<string, unknown>>();
            countsOf(`${caller} · ${tableOf(sql)}`).roundTrips += 1;
            record(caller, sql, result.meta as Meta);
            const row = result.results[0];
            if (row === undefined) return null;
            return column === undefined ? row : (row[column] ?? null);
          };
        }
        if (prop === "raw") {
          return async (options?: { columnNames?: boolean }) => {
            const rows = await (options?.columnNames
              ? target.raw({ columnNames: true })
              : target.raw());
            countsOf(`${caller} · ${tableOf(sql)}`).roundTrips += 1;
            // No meta on raw(): a read is run again for its meta alone.
            const meta = isWrite(sql) ? undefined : ((await target.all()).meta as Meta);
            record(caller, sql, meta, rows.length);
            return rows;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    sqlOf.set(proxy, sql);
    unwrap.set(proxy, statement);
    return proxy;
  };
  return new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql), sql);
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements.map((s) => unwrap.get(s) ?? s));
          const first = sqlOf.get(statements[0] ?? {}) ?? "";
          countsOf(`${caller} · ${tableOf(first)}`).roundTrips += 1;
          statements.forEach((s, i) => {
            record(caller, sqlOf.get(s) ?? "", results[i]?.meta as Meta);
          });
          return results;
        };
      }
      if (prop === "exec" && "exec" in target) {
        return async (sql: string) => {
          const result = await target.exec(sql);
          countsOf(`${caller} · exec`).roundTrips += 1;
          for (const part of sql.split(";").filter((q) => q.trim() !== "")) {
            record(caller, part, undefined);
          }
          return result;
        };
      }
      if (prop === "withSession" && "withSession" in target) {
        // A request's reads go through a session (src/db/session.ts): it counts as the binding.
        return (constraintOrBookmark?: string) =>
          countingD1(target.withSession(constraintOrBookmark), caller);
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The bindings with every D1 database counting: the shards under the caller's name (what a
 * company's work costs its shard), the directory (`DB`) under `<caller> [directory]` (what
 * routing and credentials cost it).
 */
function counted(env: Env, caller: string): Env {
  // Made once per caller and bindings: the shipped Worker makes one Drizzle client per D1
  // binding and isolate (src/db/client.ts), and new wrappers for every request would have
  // cost each request a Drizzle client of its own, 1 to 2 ms of CPU the Worker never spends.
  let byCaller = countedEnvs.get(env);
  if (!byCaller) {
    byCaller = new Map();
    countedEnvs.set(env, byCaller);
  }
  const known = byCaller.get(caller);
  if (known) return known;
  const made = countedBindings(env, caller);
  byCaller.set(caller, made);
  return made;
}

/** The counting bindings made so far, by the runtime's bindings and caller. */
const countedEnvs = new WeakMap<Env, Map<string, Env>>();

function countedBindings(env: Env, caller: string): Env {
  const wrapped: Record<string, unknown> = {
    ...env,
    DB: countingD1(env.DB, `${caller} [directory]`),
  };
  for (const [name, shard] of shardBindings(env)) wrapped[name] = countingD1(shard, caller);
  return wrapped as unknown as Env;
}

/** The source of a request: what the benchmark's plant calls, by route. */
function routeOf(method: string, path: string): string {
  if (/^\/operator\/v1\/signals\/[^/]+\/samples$/.test(path)) return "samples upload";
  if (/^\/v1\/realtime\/\d+\/(sku|operator)$/.test(path)) return "scanner write";
  if (path === "/v1/reports/metrics") return "partner report";
  if (path.startsWith("/v1/realtime/") && path.endsWith("/events")) return "live subscriber";
  return `other ${method} ${path.replace(/\/\d+/g, "/{id}")}`;
}

export class RealtimeMachine extends project.RealtimeMachine {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "realtime object"));
  }
}

export class MachineStream extends project.MachineStream {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "live stream object"));
  }
}

export class CompanyStream extends project.CompanyStream {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "company stream object"));
  }
}

export { ConnectionLeases, RealtimeTickets } from "../../src/index";

/** The store observed as the tests observe it (its detector waited for, its reads counted). */
export class SignalStore extends observed.SignalStore {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "signal store"));
  }
}

export class RateLimiter extends project.RateLimiter {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "rate limiter"));
  }
}

export class WebhookEndpoint extends project.WebhookEndpoint {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "webhook deliverer"));
  }
}

export class CompanyExports extends project.CompanyExports {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, counted(env, "exports object"));
  }
}

const worker = project.default;

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/d1") {
      return Response.json(Object.fromEntries(table));
    }
    if (url.pathname === "/__bench/d1/reset" && request.method === "POST") {
      table = new Map();
      return new Response(null, { status: 204 });
    }
    // bench/detection.ts: a machine's detector, settled, and what it has read of its store.
    const store = /^\/__bench\/detection\/(\d+)\/(\d+)$/.exec(url.pathname);
    if (store) {
      const stub = observed.observedStore(env, Number(store[1]), Number(store[2]));
      await stub.settleDetection();
      return Response.json(await stub.detectionReads());
    }
    return worker.fetch(request, counted(env, routeOf(request.method, url.pathname)), ctx);
  },
  queue: (batch, env) => worker.queue(batch, counted(env, "webhook queue")),
  scheduled: (controller, env, ctx) => worker.scheduled(controller, counted(env, "cron"), ctx),
} satisfies ExportedHandler<Env, WebhookMessage>;
