/**
 * Every 5XX the Worker answers is logged with its cause and the request id the client got
 * (src/app.ts `renderError`), so that a 503 under load can be traced; a 4XX is the client's
 * and is not logged.
 */
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderError } from "../../src/app";
import type { AppEnv } from "../../src/app-env";
import { UnknownCompanyError } from "../../src/db/shards";
import { ApiError } from "../../src/http/errors";

/** An app whose routes throw what the Worker's routes throw, behind the same error path. */
function app() {
  const routes = new Hono<AppEnv>();
  routes.use("*", requestId());
  routes.get("/busy", () => {
    throw new ApiError(503, "The realtime writes did not reach D1 in time", { "Retry-After": "1" });
  });
  routes.get("/bug", () => {
    throw new TypeError("x is undefined");
  });
  routes.get("/unbound", () => {
    throw new UnknownCompanyError(7);
  });
  routes.get("/refused", () => {
    throw new ApiError(422, [{ loc: ["query", "x"], msg: "bad", type: "value_error" }]);
  });
  routes.onError(renderError);
  return routes;
}

/** The JSON lines logged with console.error while `run` runs. */
async function logged(run: () => unknown): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  vi.spyOn(console, "error").mockImplementation((line: unknown) => {
    lines.push(JSON.parse(String(line)) as Record<string, unknown>);
  });
  await run();
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a 5XX answer", () => {
  it("is logged with the request id the client got, the request, the status and the cause", async () => {
    let response: Response | undefined;
    const lines = await logged(async () => {
      response = await app().request("/busy?x=1");
    });
    expect(response?.status).toBe(503);
    expect(response?.headers.get("retry-after")).toBe("1");
    expect(lines).toEqual([
      {
        level: "error",
        event: "server_error",
        requestId: response?.headers.get("x-request-id"),
        method: "GET",
        path: "/busy",
        status: 503,
        error: "Error: The realtime writes did not reach D1 in time",
      },
    ]);
  });

  it("of an unexpected error is a 500 whose log has the stack, and whose body has neither", async () => {
    let response: Response | undefined;
    const lines = await logged(async () => {
      response = await app().request("/bug");
    });
    expect(response?.status).toBe(500);
    expect(await response?.json()).toEqual({ detail: "Internal Server Error" });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      requestId: response?.headers.get("x-request-id"),
      status: 500,
      error: "TypeError: x is undefined",
      stack: expect.stringContaining("x is undefined"),
    });
  });

  it("of a company on an unbound shard is logged too", async () => {
    const lines = await logged(() => app().request("/unbound"));
    expect(lines).toEqual([expect.objectContaining({ status: 503, path: "/unbound" })]);
  });
});

describe("a 4XX answer", () => {
  it("is not logged: the request was the client's to fix", async () => {
    let response: Response | undefined;
    const lines = await logged(async () => {
      response = await app().request("/refused");
    });
    expect(response?.status).toBe(422);
    expect(lines).toEqual([]);
  });
});
