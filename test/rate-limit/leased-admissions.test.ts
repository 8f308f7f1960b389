/**
 * Leased admissions through HTTP: a busy credential's requests are admitted
 * from the isolate's lease (src/rate-limit/leases.ts) without exceeding its
 * quota. Requests go through the Worker's handler directly (see
 * test/fixtures/direct-client.ts: hundreds of calls through `exports.default.fetch`
 * slow down).
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import * as limiter from "../../src/rate-limit/rate-limiter";
import { api, operatorJson } from "../fixtures/direct-client";
import { createCompany } from "../harness";

async function keyWithLimit(
  companyId: number,
  requests: number,
): Promise<{ id: number; key: string }> {
  const [created] = await operatorJson<{ id: number; key: string }[]>(
    "POST",
    `/companies/${companyId}/api-keys`,
    [{ name: "busy", scopes: ALL_SCOPES, rateLimit: { requests, periodSeconds: 60 } }],
  );
  if (!created) throw new Error("no key created");
  return created;
}

/** `r` of a `RateLimit` field (`"default";r=1;t=2`). */
const remainingOf = (res: Response) =>
  Number(/;r=(\d+)/.exec(res.headers.get("ratelimit") ?? "")?.[1] ?? Number.NaN);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("leased admissions (a busy credential)", () => {
  it("never admits more than the quota: limit 200, 250 requests in waves", async () => {
    const co = await createCompany();
    const { id, key } = await keyWithLimit(co.id, 200);
    const statuses: number[] = [];
    // Waves of 50 concurrent requests: the isolate is busy and leases 2 at a time (1 % of 200).
    for (let wave = 0; wave < 5; wave++) {
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => api(key, "/v1/machines")),
      );
      statuses.push(...responses.map((r) => r.status));
    }
    const admitted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s === 429)).toHaveLength(250 - admitted);
    const stub = env.RATE_LIMITER.get(
      env.RATE_LIMITER.idFromName(limiter.bucketName("credential", `key:${id}`)),
    );
    const counted = await runInDurableObject(
      stub,
      (_instance, state) =>
        state.storage.sql.exec<{ n: number }>("SELECT COALESCE(SUM(n), 0) AS n FROM hits").one().n,
    );
    // The object counted the whole quota and no more; a lease still held or expired
    // unused (1 admission each here) is the only difference.
    expect(counted).toBe(200);
    expect(admitted).toBeLessThanOrEqual(200);
    expect(admitted).toBeGreaterThanOrEqual(195);
  });

  it("asks the object once for several requests of a busy credential", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, 100_000);
    const spy = vi.spyOn(limiter, "consume");
    const shown: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await api(key, "/v1/machines");
      expect(res.status).toBe(200);
      shown.push(remainingOf(res));
    }
    expect(spy.mock.calls.length).toBeLessThan(50);
    expect(Math.max(...spy.mock.calls.map((args) => args[3] ?? 1))).toBeGreaterThan(1);
    // The remaining count shown goes down as requests are admitted, leased or not.
    expect(shown[99]).toBeLessThan(shown[0] ?? 0);
    expect(Math.max(...shown)).toBeLessThanOrEqual(99_999);
  });

  it("asks for one admission at a time for a credential sending one request at a time", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, 100_000);
    const spy = vi.spyOn(limiter, "consume");
    for (let i = 0; i < 3; i++) {
      expect((await api(key, "/v1/machines")).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 600));
    }
    expect(spy.mock.calls.map((args) => args[3] ?? 1)).toEqual([1, 1, 1]);
  });
});
