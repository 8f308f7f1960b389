/**
 * D1 sessions (src/db/session.ts, src/http/d1-session.ts): where each request's session
 * starts, the `x-d1-bookmark` header on answers, and a bookmark sent back anchoring the next
 * request's session, which is on the company's shard. Locally there is one copy of each
 * database (no replica lags), so the anchors are observed on shard bindings that record every
 * `withSession` call.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { parseBookmark, sessionStartOf } from "../../src/db/session";
import { shardBindings } from "../../src/db/shards";
import type { Env } from "../../src/env";
import {
  api,
  createCompany,
  createMachines,
  recordingSessions,
  type TestCompany,
} from "../harness";

const app = createApp();

/** A bookmark as answers carry it: the company's shard, then D1's bookmark. */
const BOOKMARK = /^SHARD_\d+:[0-9a-f-]+$/;

/** The `withSession` anchors requests sent through {@link spied} opened, in order. */
interface Spy {
  anchors: (string | undefined)[];
  fetch(request: Request): Promise<Response>;
}

/** Sends requests to the app with shard bindings that record their sessions' anchors. */
function spied(): Spy {
  const anchors: (string | undefined)[] = [];
  const spy = (real: D1Database) => recordingSessions(real, anchors);
  const bindings = { ...(env as unknown as Env) } as Env & Record<string, unknown>;
  for (const [name, binding] of shardBindings(env)) bindings[name] = spy(binding);
  return {
    anchors,
    async fetch(request) {
      const ctx = createExecutionContext();
      const response = await app.fetch(request, bindings, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    },
  };
}

function request(
  co: TestCompany,
  path: string,
  init: { method?: string; json?: unknown; bookmark?: string } = {},
): Request {
  const headers = new Headers({ "x-api-key": co.key });
  if (init.json !== undefined) headers.set("content-type", "application/json");
  if (init.bookmark !== undefined) headers.set("x-d1-bookmark", init.bookmark);
  return new Request(`http://api.test${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
}

/** D1's part of a bookmark header (`SHARD_<n>:<D1 bookmark>`). */
function d1Part(header: string | null): string {
  const parsed = parseBookmark(header ?? undefined);
  if (parsed === null || parsed === "malformed") throw new Error(`not a bookmark: ${header}`);
  return parsed.bookmark;
}

describe("the session a request starts", () => {
  it("is unconstrained for reads, searches and reports, at the primary for writes", () => {
    expect(sessionStartOf("GET", "/v1/machines")).toBe("first-unconstrained");
    expect(sessionStartOf("GET", "/v1/realtime/7")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/v1/skus/filters")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/v1/production-logs/filters")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/v1/reports/metrics")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/v1/reports/kpis")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/mcp")).toBe("first-unconstrained");
    expect(sessionStartOf("POST", "/v1/skus")).toBe("first-primary");
    expect(sessionStartOf("PATCH", "/v1/skus/abc")).toBe("first-primary");
    expect(sessionStartOf("DELETE", "/v1/skus/abc")).toBe("first-primary");
    expect(sessionStartOf("POST", "/v1/production-logs")).toBe("first-primary");
    expect(sessionStartOf("POST", "/v1/realtime/7/sku")).toBe("first-primary");
    expect(sessionStartOf("GET", "/operator/v1/companies")).toBe("first-primary");
  });

  it("report pages and searches read through an unconstrained session", async () => {
    const co = await createCompany();
    await createMachines(co.id, [{ name: "Press 1" }]);
    const spy = spied();
    for (const [path, json] of [
      ["/v1/reports/metrics", { limit: 5 }],
      ["/v1/reports/stops", { limit: 5 }],
      ["/v1/skus/filters", {}],
      ["/v1/production-logs/filters", {}],
    ] as const) {
      spy.anchors.length = 0;
      const res = await spy.fetch(request(co, path, { method: "POST", json }));
      expect(res.status, await res.clone().text()).toBe(200);
      expect(spy.anchors[0], path).toBe("first-unconstrained");
      expect(res.headers.get("x-d1-bookmark"), path).toMatch(BOOKMARK);
    }
    spy.anchors.length = 0;
    const machines = await spy.fetch(request(co, "/v1/machines"));
    expect(machines.status).toBe(200);
    expect(spy.anchors[0]).toBe("first-unconstrained");
    expect(machines.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });

  it("a write starts at the primary and answers with its bookmark", async () => {
    const co = await createCompany();
    const spy = spied();
    const res = await spy.fetch(
      request(co, "/v1/skus", { method: "POST", json: [{ sku: "B-1" }] }),
    );
    expect(res.status).toBe(200);
    expect(spy.anchors[0]).toBe("first-primary");
    expect(res.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });
});

describe("x-d1-bookmark sent back", () => {
  it("anchors the next read at the write's bookmark, which then sees the write", async () => {
    const co = await createCompany();
    const spy = spied();
    const created = await spy.fetch(
      request(co, "/v1/skus", { method: "POST", json: [{ sku: "RYW-1", name: "Mine" }] }),
    );
    expect(created.status).toBe(200);
    const [sku] = (await created.json()) as { id: string }[];
    const bookmark = created.headers.get("x-d1-bookmark");
    expect(bookmark).not.toBeNull();

    spy.anchors.length = 0;
    const read = await spy.fetch(request(co, `/v1/skus/${sku?.id}`, { bookmark: bookmark ?? "" }));
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: sku?.id, sku: "RYW-1", name: "Mine" });
    // The session started at the write's bookmark, not unconstrained.
    expect(spy.anchors[0]).toBe(d1Part(bookmark));
    // And its own bookmark is at least as late as the one sent.
    expect(d1Part(read.headers.get("x-d1-bookmark")) >= d1Part(bookmark)).toBe(true);

    spy.anchors.length = 0;
    const search = await spy.fetch(
      request(co, "/v1/skus/filters", {
        method: "POST",
        json: { names: { search: "Mine" } },
        bookmark: bookmark ?? "",
      }),
    );
    expect(search.status, await search.clone().text()).toBe(200);
    expect(((await search.json()) as { totalCount: number }).totalCount).toBe(1);
    expect(spy.anchors[0]).toBe(d1Part(bookmark));
  });

  it("a bookmark of another database starts the session at the primary", async () => {
    const co = await createCompany();
    const spy = spied();
    const res = await spy.fetch(
      request(co, "/v1/machines", {
        bookmark: "SHARD_9:00000000-0000000e-00000000-00000000000000000000000000000000",
      }),
    );
    expect(res.status).toBe(200);
    expect(spy.anchors[0]).toBe("first-primary");
  });

  it("an empty header is no bookmark", async () => {
    const co = await createCompany();
    const spy = spied();
    const res = await spy.fetch(request(co, "/v1/machines", { bookmark: "" }));
    expect(res.status).toBe(200);
    expect(spy.anchors[0]).toBe("first-unconstrained");
  });

  it.each([
    ["not a bookmark"],
    ["00000000-0000000e-00000000-00000000000000000000000000000000"],
    ["DB:zzzz"],
    [`DB:${"0".repeat(300)}`],
  ])("a malformed one (%s) is refused with 422 at the header, before any query", async (value) => {
    const co = await createCompany();
    const spy = spied();
    const res = await spy.fetch(request(co, "/v1/machines", { bookmark: value }));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [
        {
          loc: ["header", "x-d1-bookmark"],
          msg: expect.stringContaining("bookmark"),
          type: "value_error",
        },
      ],
    });
    expect(spy.anchors).toEqual([]);
  });

  it("works through the public harness too (the header on a real answer)", async () => {
    const co = await createCompany();
    const res = await api(co.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "Ada" }],
    });
    expect(res.status).toBe(200);
    const bookmark = res.headers.get("x-d1-bookmark") ?? "";
    const [created] = (await res.json()) as { id: number }[];
    const read = await api(co.key, `/v1/operators/${created?.id}`, {
      headers: { "x-d1-bookmark": bookmark },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get("x-d1-bookmark")).toMatch(BOOKMARK);
  });
});
