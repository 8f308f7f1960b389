/**
 * What a stop reason and an operator's classification cost besides D1 (issue 48, "Fast where
 * a person waits"): every Durable Object call and Queue message is runtime CPU, before the
 * answer a person waits for it, after it the next request waits behind it on a busy runtime
 * (bench/stop-reason.ts). A change calls, before its answer, the key's rate limit and the
 * machine's stream (the stream event); beside and after it, one Queue message per delivery
 * and one hand-over per registration, nothing else. The D1
 * statements are counted in ./stop-reason-work.test.ts.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { countingEnv } from "../fixtures/d1-counter";
import { fakeNetwork } from "../fixtures/fake-network";
import { stopReasonScene } from "../fixtures/stop-reason-scene";
import { settleDeliverers } from "../fixtures/webhook-harness";

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
});

const _MIN = 60_000;

/** The bindings whose calls are counted: every Durable Object namespace of the Worker. */
const NAMESPACES = [
  "REALTIME_MACHINE",
  "RATE_LIMITER",
  "SIGNAL_STORE",
  "MACHINE_STREAM",
  "COMPANY_STREAM",
  "WEBHOOK_ENDPOINT",
  "REALTIME_TICKETS",
] as const;

/**
 * The Worker's bindings with every Durable Object call (`<binding>.<method>`) and every Queue
 * message (`queue`) written to `calls`, in order.
 */
function countingCalls(base: Env, calls: string[]): Env {
  const env: Record<string, unknown> = { ...(base as unknown as Record<string, unknown>) };
  for (const name of NAMESPACES) {
    const ns = (base as unknown as Record<string, DurableObjectNamespace | undefined>)[name];
    if (!ns) continue;
    env[name] = new Proxy(ns, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== "get" || typeof value !== "function") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (...args: unknown[]) => {
          const stub = (value as (...a: unknown[]) => object).apply(target, args);
          return new Proxy(stub, {
            get(s, method) {
              const member: unknown = Reflect.get(s, method);
              if (typeof member !== "function" || typeof method !== "string") return member;
              return (...params: unknown[]) => {
                calls.push(`${name}.${method}`);
                return (member as (...p: unknown[]) => unknown).apply(s, params);
              };
            },
          });
        };
      },
    });
  }
  const queue = base.WEBHOOK_QUEUE;
  env.WEBHOOK_QUEUE = {
    send: (...args: Parameters<typeof queue.send>) => {
      calls.push("queue");
      return queue.send(...args);
    },
    sendBatch: (messages: Parameters<typeof queue.sendBatch>[0]) => {
      for (const _ of messages) calls.push("queue");
      return queue.sendBatch(messages);
    },
  };
  return env as unknown as Env;
}

const app = createApp();

/** Sends one request; the calls made before its answer, and those made after it. */
async function callsOf(request: Request): Promise<{
  response: Response;
  before: string[];
  after: string[];
}> {
  const calls: string[] = [];
  const env = countingCalls(countingEnv().env, calls);
  const ctx = createExecutionContext();
  const response = await app.fetch(request, env, ctx);
  const before = [...calls];
  await waitOnExecutionContext(ctx);
  return { response, before, after: calls.slice(before.length) };
}

describe("a stop reason and an operator's classification", () => {
  it("call the machine's stream before the answer, and hand the delivery over after it", async () => {
    const { scan, classify } = await stopReasonScene(fakeNetwork());
    // The first change stores the stop's shift instance; the ones measured find it stored.
    expect((await callsOf(scan("Setup"))).response.status).toBe(200);
    for (const [label, request] of [
      ["POST stop-reason", scan("Jam")],
      ["PUT classification", classify("Setup")],
      ["POST stop-reason without a stopId", scan("Jam")],
    ] as const) {
      const { response, before, after } = await callsOf(
        label.endsWith("without a stopId")
          ? new Request(request, {
              body: JSON.stringify({ generalCause: { name: "Jam" } }),
            })
          : request,
      );
      expect(response.status, `${label}: ${await response.clone().text()}`).toBe(200);
      // The key's rate limit (the operator's token has none) and the stream event are
      // awaited before the answer; the hand-over of the one delivery (the Updated
      // registration's: its Queue message, then its deliverer) starts once the stream event
      // is stored, beside the answer, and is not waited for.
      const awaited = label.startsWith("PUT")
        ? ["MACHINE_STREAM.append"]
        : ["RATE_LIMITER.hit", "MACHINE_STREAM.append"];
      expect(before.slice(0, awaited.length), label).toEqual(awaited);
      expect([...before, ...after], label).toEqual([
        ...awaited,
        "queue",
        "WEBHOOK_ENDPOINT.accept",
      ]);
    }
    // The same reason again changes nothing: no call but the key's rate limit.
    const same = await callsOf(scan("Jam"));
    expect(same.response.status).toBe(200);
    expect([...same.before, ...same.after]).toEqual(["RATE_LIMITER.hit"]);
  });
});
