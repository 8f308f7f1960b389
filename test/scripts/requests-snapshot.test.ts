/**
 * `npm run requests` checks the demo with reads that go through `wrangler dev`'s proxy, which
 * may lose one and answer 503 "Your worker restarted mid-request" with `Retry-After`
 * (docs/demo-data.md): the reads send it again instead of failing the check.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { takeSnapshot } from "../../scripts/lib/requests-restore";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the demo snapshot of npm run requests", () => {
  it("sends a read the proxy lost again, and takes the snapshot", async () => {
    const seen: string[] = [];
    let lost = false;
    vi.stubGlobal("fetch", async (input: Request | string, init?: RequestInit) => {
      const request = new Request(input, init);
      const { pathname } = new URL(request.url);
      seen.push(`${request.method} ${pathname}`);
      if (request.method === "POST" && !lost) {
        lost = true;
        return new Response("Your worker restarted mid-request.", {
          status: 503,
          headers: { "Retry-After": "0" },
        });
      }
      if (pathname.startsWith("/v1/realtime/")) return new Response("{}", { status: 409 });
      return Response.json({ totalPages: 1 });
    });
    const snapshot = await takeSnapshot({ baseUrl: "http://demo.test", key: "pm_x" }, 1);
    expect(snapshot.realtime).toBeNull();
    const [first, second] = seen.filter((line) => line.startsWith("POST"));
    expect(second).toBe(first);
    expect(snapshot.records.size).toBeGreaterThan(0);
  });
});
