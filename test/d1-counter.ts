/**
 * A D1 binding that counts the statements the Worker sends through it: one per
 * statement run on its own (`first`, `all`, `run`, `raw`) and one per statement
 * of a `batch`, which is how D1 counts queries against its per-invocation limit.
 * Requests go through the real app with this binding in place of `env.DB`.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { createApp } from "../src/app";
import type { Env } from "../src/env";

export interface CountingD1 {
  binding: D1Database;
  /** Statements sent so far. */
  count(): number;
  /** The SQL of every statement sent so far, in order. */
  sent(): string[];
}

/** Wraps a D1 binding; statements and batches go to the real one, counted. */
export function countingD1(real: D1Database): CountingD1 {
  let sent = 0;
  const texts: string[] = [];
  const unwrap = new WeakMap<object, D1PreparedStatement>();
  const sqlOf = new WeakMap<object, string>();
  const wrapStatement = (statement: D1PreparedStatement, query: string): D1PreparedStatement => {
    const proxy = new Proxy(statement, {
      get(target, prop) {
        if (prop === "bind") {
          return (...values: unknown[]) => wrapStatement(target.bind(...values), query);
        }
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") {
          sent += 1;
          texts.push(query);
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    unwrap.set(proxy, statement);
    sqlOf.set(proxy, query);
    return proxy;
  };
  const binding = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") {
        return (query: string) => wrapStatement(target.prepare(query), query);
      }
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) => {
          sent += statements.length;
          for (const s of statements) texts.push(sqlOf.get(s) ?? "");
          return target.batch(statements.map((s) => unwrap.get(s) ?? s));
        };
      }
      if (prop === "exec") {
        return (query: string) => {
          const parts = query.split(";").filter((q) => q.trim() !== "");
          sent += parts.length;
          texts.push(...parts);
          return target.exec(query);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { binding, count: () => sent, sent: () => [...texts] };
}

const app = createApp();

/**
 * Sends one request to a fresh app whose `DB` binding counts statements.
 *
 * @returns the response and the number of D1 statements the request sent.
 */
export async function countStatements(
  request: Request,
): Promise<{ response: Response; statements: number }> {
  const counter = countingD1(env.DB);
  const ctx = createExecutionContext();
  const response = await app.fetch(
    request,
    { ...(env as unknown as Env), DB: counter.binding },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return { response, statements: counter.count() };
}
