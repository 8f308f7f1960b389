/**
 * Per-credential rate limits (one RateLimiter object per credential), the
 * failed-authentication limit per client address, the header fields, and fail-open.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { importJWK, SignJWT } from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import * as limiter from "../../src/rate-limit/rate-limiter";
import privateKeys from "../fixtures/jwt-private-keys.test-only.json";
import { api, call, createCompany, operatorJson } from "../harness";

/** Issues a key with its own rate limit and returns the raw key and its id. */
async function keyWithLimit(
  companyId: number,
  rateLimit: { requests: number; periodSeconds: number } | undefined,
): Promise<{ id: number; key: string }> {
  const [created] = await operatorJson<{ id: number; key: string }[]>(
    "POST",
    `/companies/${companyId}/api-keys`,
    [{ name: "limited", scopes: ALL_SCOPES, ...(rateLimit ? { rateLimit } : {}) }],
  );
  if (!created) throw new Error("no key created");
  return created;
}

/** Parses `"name";r=1;t=2` into its parameters. */
function params(field: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (field ?? "").split(";").slice(1)) {
    const [k, v] = part.split("=");
    if (k && v) out[k] = v;
  }
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client address of this test alone (failed authentications are counted per address). */
const freshAddress = () =>
  `203.0.113.${Math.floor(Math.random() * 250) + 1}-${crypto.randomUUID()}`;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("per-credential rate limit", () => {
  it("admits exactly 10 of 30 concurrent requests with a limit of 10 per minute", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, { requests: 10, periodSeconds: 60 });
    const responses = await Promise.all(Array.from({ length: 30 }, () => api(key, "/v1/machines")));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(limited).toHaveLength(20);

    // Each admitted request saw a different remaining count: 9, 8, ..., 0.
    const remaining = ok.map((r) => Number(params(r.headers.get("ratelimit")).r));
    expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const r of [...ok, ...limited]) {
      expect(r.headers.get("ratelimit-policy")).toBe('"default";q=10;w=60');
      const t = Number(params(r.headers.get("ratelimit")).t);
      expect(t).toBeGreaterThanOrEqual(1);
      expect(t).toBeLessThanOrEqual(60);
    }
    for (const r of limited) {
      expect(await r.json()).toEqual({ detail: "Rate limit exceeded" });
      const retryAfter = r.headers.get("retry-after") ?? "";
      expect(retryAfter).toMatch(/^[1-9][0-9]*$/);
      expect(Number(retryAfter)).toBeLessThanOrEqual(60);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(55);
      expect(r.headers.get("ratelimit")).toBe(`"default";r=0;t=${retryAfter}`);
    }
  });

  it("admits the credential again after the window", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, { requests: 3, periodSeconds: 1 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await api(key, "/v1/machines")).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await api(key, "/v1/machines");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");

    await sleep(1_100);
    const again = await api(key, "/v1/machines");
    expect(again.status).toBe(200);
    expect(again.headers.get("ratelimit")).toBe('"default";r=2;t=1');
  });

  it("applies each key's own limit, the default to keys without one, and counts per key", async () => {
    const co = await createCompany();
    const small = await keyWithLimit(co.id, { requests: 2, periodSeconds: 60 });
    const sameLimit = await keyWithLimit(co.id, { requests: 2, periodSeconds: 60 });
    const plain = await keyWithLimit(co.id, undefined);

    const s = [];
    for (let i = 0; i < 3; i++) s.push((await api(small.key, "/v1/machines")).status);
    expect(s).toEqual([200, 200, 429]);

    // Another key with the same limit has its own counter.
    expect((await api(sameLimit.key, "/v1/machines")).status).toBe(200);

    // A key without a limit of its own gets the default of the settings (600 per 60 s).
    const res = await api(plain.key, "/v1/machines");
    expect(res.status).toBe(200);
    expect(res.headers.get("ratelimit-policy")).toBe('"default";q=600;w=60');
    expect(params(res.headers.get("ratelimit")).r).toBe("599");
  });

  it("counts a token's subject within its company, with the default limit", async () => {
    const co = await createCompany();
    const key = await importJWK(privateKeys.rsa, "RS256");
    const token = (sub: string) =>
      new SignJWT({
        sub,
        company_id: co.id,
        scope: "machines.read",
        iss: "https://idp.test/",
        aud: "https://api.test/v1",
        exp: Math.floor(Date.now() / 1000) + 600,
      })
        .setProtectedHeader({ alg: "RS256", kid: privateKeys.rsa.kid })
        .sign(key);
    const alice = await token("alice");
    const headers = { authorization: `Bearer ${alice}` };
    await call("/v1/machines", { headers });
    const second = await call("/v1/machines", { headers });
    expect(second.status).toBe(200);
    expect(second.headers.get("ratelimit-policy")).toBe('"default";q=600;w=60');
    expect(params(second.headers.get("ratelimit")).r).toBe("598");
    const bob = await call("/v1/machines", {
      headers: { authorization: `Bearer ${await token("bob")}` },
    });
    expect(params(bob.headers.get("ratelimit")).r).toBe("599");
  });

  it("puts the header fields on errors of a limited route too (403)", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, { requests: 5, periodSeconds: 60 });
    const [narrow] = await operatorJson<{ key: string }[]>("POST", `/companies/${co.id}/api-keys`, [
      { name: "narrow", scopes: ["signals.read"], rateLimit: { requests: 5, periodSeconds: 60 } },
    ]);
    const res = await api(narrow?.key ?? "", "/v1/machines");
    expect(res.status).toBe(403);
    expect(res.headers.get("ratelimit")).toMatch(/^"default";r=4;t=\d+$/);
    expect((await api(key, "/v1/machines")).headers.get("ratelimit")).toMatch(/;r=4;/);
  });

  it("skips the limiter object while this isolate knows the credential is over its limit", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, { requests: 1, periodSeconds: 60 });
    const consume = vi.spyOn(limiter, "consume");
    expect((await api(key, "/v1/machines")).status).toBe(200);
    expect((await api(key, "/v1/machines")).status).toBe(429);
    expect(consume).toHaveBeenCalledTimes(2);
    const third = await api(key, "/v1/machines");
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(consume).toHaveBeenCalledTimes(2);
  });

  it("does not limit /openapi.json and /docs, and documents the 429", async () => {
    for (const path of ["/openapi.json", "/docs"]) {
      const res = await call(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeNull();
      expect(res.headers.get("ratelimit-policy")).toBeNull();
    }
    const doc = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const list = doc.paths["/v1/machines"]?.get;
    expect(Object.keys(list?.responses["429"]?.headers ?? {})).toEqual([
      "Retry-After",
      "RateLimit-Policy",
      "RateLimit",
    ]);
    expect(Object.keys(list?.responses["200"]?.headers ?? {})).toContain("RateLimit");
  });
});

describe("failed authentications per client address", () => {
  it("answers 429 after 30 failures a minute, even to a valid key from that address", async () => {
    const co = await createCompany();
    const address = freshAddress();
    const headers = { "cf-connecting-ip": address, "x-api-key": "pm_guess" };
    for (let i = 0; i < 30; i++) {
      const res = await call("/v1/machines", { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get("ratelimit-policy")).toBe('"auth-failures";q=30;w=60');
      expect(params(res.headers.get("ratelimit")).r).toBe(String(29 - i));
    }
    const blocked = await call("/v1/machines", { headers });
    expect(blocked.status).toBe(429);
    expect(await blocked.json()).toEqual({ detail: "Rate limit exceeded" });
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(blocked.headers.get("www-authenticate")).toBeNull();
    expect(blocked.headers.get("x-request-id")).toBeTruthy();

    const valid = await api(co.key, "/v1/machines", { headers: { "cf-connecting-ip": address } });
    // Blocked: a request without any credential gets the 429 too.
    const bare = await call("/v1/machines", { headers: { "cf-connecting-ip": address } });
    expect(bare.status).toBe(429);
    expect(valid.status).toBe(429);
    // Another address is not affected.
    const other = await api(co.key, "/v1/machines", {
      headers: { "cf-connecting-ip": freshAddress() },
    });
    expect(other.status).toBe(200);
  });

  it("does not count requests that present no credential at all", async () => {
    const address = freshAddress();
    for (let i = 0; i < 40; i++) {
      const res = await call("/v1/machines", { headers: { "cf-connecting-ip": address } });
      expect(res.status).toBe(401);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
    const guess = await call("/v1/machines", {
      headers: { "cf-connecting-ip": address, authorization: "Bearer not-a-jwt" },
    });
    expect(guess.status).toBe(401);
    expect(guess.headers.get("ratelimit")).toBe('"auth-failures";r=29;t=60');
  });
});

describe("fail open", () => {
  it("serves the request and logs when the limiter object cannot be reached", async () => {
    const co = await createCompany();
    const { key } = await keyWithLimit(co.id, { requests: 1, periodSeconds: 60 });
    vi.spyOn(limiter, "consume").mockRejectedValue(new Error("Durable Object is overloaded"));
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    for (let i = 0; i < 3; i++) {
      const res = await api(key, "/v1/machines");
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeNull();
      expect(res.headers.get("ratelimit-policy")).toBe('"default";q=1;w=60');
    }
    const lines = logged.mock.calls.map((args) => String(args[0]));
    expect(lines.filter((l) => l.includes("rate_limiter_unreachable"))).toHaveLength(3);
    vi.restoreAllMocks();
    // Back to normal: the limit holds again.
    expect((await api(key, "/v1/machines")).status).toBe(200);
    expect((await api(key, "/v1/machines")).status).toBe(429);
  });
});

describe("RateLimiter object", () => {
  it("keeps its count in SQLite storage: a new instance (after eviction) continues it", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`test:${crypto.randomUUID()}`));
    expect((await stub.hit(3, 60)).remaining).toBe(2);
    expect((await stub.hit(3, 60)).remaining).toBe(1);
    const fresh = await runInDurableObject(stub, (_instance, state) => {
      const again = new limiter.RateLimiter(state, env);
      return [again.hit(3, 60), again.hit(3, 60)];
    });
    expect(fresh.map((d) => d.allowed)).toEqual([true, false]);
    expect(fresh[1]?.resetAfterMs).toBeGreaterThan(59_000);
  });

  it("deletes its storage by alarm once its window is empty", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`test:${crypto.randomUUID()}`));
    await stub.hit(5, 1);
    const tables = () =>
      runInDurableObject(stub, (_instance, state) =>
        state.storage.sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name IN ('hits', 'meta')")
          .toArray()
          .map((row) => row.name)
          .sort(),
      );
    expect(await tables()).toEqual(["hits", "meta"]);
    // Before the window is over the alarm keeps the data (and looks again later).
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await tables()).toEqual(["hits", "meta"]);
    expect((await stub.hit(5, 1)).remaining).toBe(3);
    // The rescheduled alarm fires by itself once both hits have left the window.
    let left = await tables();
    for (let i = 0; i < 30 && left.length > 0; i++) {
      await sleep(100);
      left = await tables();
    }
    expect(left).toEqual([]);
    expect((await stub.hit(5, 1)).remaining).toBe(4);
  });

  it("refuses an invalid policy", async () => {
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`test:${crypto.randomUUID()}`));
    const errors = await runInDurableObject(stub, (_instance, state) => {
      const instance = new limiter.RateLimiter(state, env);
      const policies: [number, number][] = [
        [0, 60],
        [1.5, 60],
        [1, 0],
        [1, 86_401],
      ];
      return policies.map(([requests, period]) => {
        try {
          instance.hit(requests, period);
          return "admitted";
        } catch (error) {
          return error instanceof RangeError ? "RangeError" : String(error);
        }
      });
    });
    expect(errors).toEqual(["RangeError", "RangeError", "RangeError", "RangeError"]);
  });
});
