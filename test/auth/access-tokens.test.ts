/**
 * Bearer access tokens, signed by a test identity provider whose public JWKS
 * (test/fixtures/jwks.json) is the Worker's `JWT_JWKS` in vitest.config.ts.
 */
import {
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWTPayload,
  SignJWT,
  UnsecuredJWT,
} from "jose";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keySource, verifyAccessToken } from "../../src/auth/access-tokens";
import type { JwtSettings } from "../../src/env";
import privateKeys from "../fixtures/jwt-private-keys.test-only.json";
import { api, call, createCompany, createMachines } from "../harness";

const ISSUER = "https://idp.test/";
const AUDIENCE = "https://api.test/v1";

type KeyName = "rsa" | "ec";
const ALG: Record<KeyName, "RS256" | "ES256"> = { rsa: "RS256", ec: "ES256" };

/** Signs claims with a test provider key; `now` claims (iat, exp in 10 min) unless overridden. */
async function sign(
  claims: JWTPayload,
  options: { key?: KeyName; header?: Record<string, unknown> } = {},
): Promise<string> {
  const name = options.key ?? "rsa";
  const jwk = privateKeys[name];
  const key = await importJWK(jwk, ALG[name]);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: ALG[name], kid: jwk.kid, typ: "JWT", ...options.header })
    .sign(key);
}

function bearer(token: string, path = "/v1/machines"): Promise<Response> {
  return call(path, { headers: { authorization: `Bearer ${token}` } });
}

async function expect401(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(await res.json()).toEqual({ detail: "Not authenticated" });
  expect(res.headers.get("www-authenticate")).toContain("Bearer");
}

const now = () => Math.floor(Date.now() / 1000);

describe("Bearer access tokens", () => {
  it("accepts an RS256 token and acts for the company of its company_id claim", async () => {
    const co = await createCompany();
    await createMachines(co.id, [{ name: "Token press" }]);
    const token = await sign({ sub: "user-1", company_id: co.id, scope: "machines.read" });
    const res = await bearer(token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { name: string }[];
    expect(body.map((m) => m.name)).toEqual(["Token press"]);
  });

  it("accepts an ES256 token whose company claim is a string", async () => {
    const co = await createCompany();
    await createMachines(co.id, [{ name: "EC press" }]);
    const token = await sign(
      { sub: "user-ec", company_id: String(co.id), scope: "machines.read" },
      { key: "ec" },
    );
    const res = await bearer(token);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }[]).map((m) => m.name)).toEqual(["EC press"]);
  });

  it("takes scopes from the space-separated scope claim", async () => {
    const co = await createCompany();
    const token = await sign({ sub: "s", company_id: co.id, scope: "signals.read machines.read" });
    expect((await bearer(token)).status).toBe(200);
    const narrow = await sign({ sub: "s", company_id: co.id, scope: "signals.read" });
    const res = await bearer(narrow);
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      detail: "Not enough permissions. Missing scope: machines.read",
    });
  });

  it("takes scopes from a permissions array", async () => {
    const co = await createCompany();
    const token = await sign({ sub: "p", company_id: co.id, permissions: ["machines.read"] });
    expect((await bearer(token)).status).toBe(200);
    const none = await sign({ sub: "p", company_id: co.id, permissions: [] });
    expect((await bearer(none)).status).toBe(403);
  });

  it("accepts exp and nbf within 60 s of leeway, and refuses them beyond", async () => {
    const co = await createCompany();
    const base = { sub: "clock", company_id: co.id, scope: "machines.read" };
    expect((await bearer(await sign({ ...base, exp: now() - 30 }))).status).toBe(200);
    await expect401(await bearer(await sign({ ...base, exp: now() - 120 })));
    expect((await bearer(await sign({ ...base, nbf: now() + 30 }))).status).toBe(200);
    await expect401(await bearer(await sign({ ...base, nbf: now() + 300 })));
  });

  it("refuses a token without exp", async () => {
    const co = await createCompany();
    const key = await importJWK(privateKeys.rsa, "RS256");
    const token = await new SignJWT({ sub: "no-exp", company_id: co.id, scope: "machines.read" })
      .setProtectedHeader({ alg: "RS256", kid: privateKeys.rsa.kid })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .sign(key);
    await expect401(await bearer(token));
  });

  it("refuses a wrong issuer or a wrong audience", async () => {
    const co = await createCompany();
    const base = { sub: "x", company_id: co.id, scope: "machines.read" };
    await expect401(await bearer(await sign({ ...base, iss: "https://evil.test/" })));
    await expect401(await bearer(await sign({ ...base, aud: "https://other-api.test" })));
  });

  it("refuses HS256 (even keyed with the public key material), and alg none", async () => {
    const co = await createCompany();
    const claims = { sub: "alg", company_id: co.id, scope: "machines.read" };
    const hmacKey = new TextEncoder().encode(privateKeys.rsa.n);
    const hs = await new SignJWT({ ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })
      .setProtectedHeader({ alg: "HS256", kid: privateKeys.rsa.kid })
      .sign(hmacKey);
    await expect401(await bearer(hs));
    const unsecured = new UnsecuredJWT({ ...claims, exp: now() + 600 })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .encode();
    await expect401(await bearer(unsecured));
  });

  it("refuses a token signed by a key the provider does not publish (unknown kid)", async () => {
    const co = await createCompany();
    const stranger = await generateKeyPair("RS256");
    const token = await new SignJWT({
      sub: "kid",
      company_id: co.id,
      scope: "machines.read",
      iss: ISSUER,
      aud: AUDIENCE,
      exp: now() + 600,
    })
      .setProtectedHeader({ alg: "RS256", kid: "unknown-kid" })
      .sign(stranger.privateKey);
    await expect401(await bearer(token));
  });

  it("refuses a tampered token: claims changed after signing, or a forged signature", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const token = await sign({ sub: "t", company_id: a.id, scope: "machines.read" });
    expect((await bearer(token)).status).toBe(200);
    const [header, payload, signature] = token.split(".");
    const claims = JSON.parse(atob((payload ?? "").replaceAll("-", "+").replaceAll("_", "/")));
    const forgedPayload = btoa(JSON.stringify({ ...claims, company_id: b.id }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    await expect401(await bearer(`${header}.${forgedPayload}.${signature}`));
    // Signed by another key under the provider's kid.
    const stranger = await generateKeyPair("RS256");
    const forged = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: "RS256", kid: privateKeys.rsa.kid })
      .sign(stranger.privateKey);
    await expect401(await bearer(forged));
  });

  it("refuses a token without a company claim, with an unknown company, or without sub", async () => {
    const co = await createCompany();
    await expect401(await bearer(await sign({ sub: "nc", scope: "machines.read" })));
    await expect401(
      await bearer(await sign({ sub: "uc", company_id: 2_000_000_000, scope: "machines.read" })),
    );
    await expect401(
      await bearer(await sign({ sub: "bad", company_id: "12abc", scope: "machines.read" })),
    );
    await expect401(await bearer(await sign({ company_id: co.id, scope: "machines.read" })));
  });

  it("refuses a sub that is not a string of 1 to 255 characters", async () => {
    const co = await createCompany();
    const base = { company_id: co.id, scope: "machines.read" };
    for (const sub of [42, true, { id: "x" }, ["x"], "", "s".repeat(256)]) {
      // SignJWT types sub as a string; the provider could still send anything.
      await expect401(await bearer(await sign({ ...base, sub: sub as string })));
    }
    expect((await bearer(await sign({ ...base, sub: "s".repeat(255) }))).status).toBe(200);
  });

  it("refuses a token living longer than 24 h (exp - iat), or exp more than 24 h ahead without iat", async () => {
    const co = await createCompany();
    const base = { sub: "long", company_id: co.id, scope: "machines.read" };
    const day = 86_400;
    expect((await bearer(await sign({ ...base, iat: now(), exp: now() + day }))).status).toBe(200);
    await expect401(await bearer(await sign({ ...base, iat: now(), exp: now() + day + 1 })));
    // Issued long ago for a long time: still valid by exp, but beyond the lifetime bound.
    await expect401(await bearer(await sign({ ...base, iat: now() - 30 * day, exp: now() + 600 })));
    const key = await importJWK(privateKeys.rsa, "RS256");
    const withoutIat = (exp: number) =>
      new SignJWT({ ...base, iss: ISSUER, aud: AUDIENCE, exp })
        .setProtectedHeader({ alg: "RS256", kid: privateKeys.rsa.kid })
        .sign(key);
    expect((await bearer(await withoutIat(now() + 600))).status).toBe(200);
    await expect401(await bearer(await withoutIat(now() + 2 * day)));
  });

  it("never reaches another company's ids through a token (404)", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const [machine] = await createMachines(a.id, [{ name: "A's machine" }]);
    const token = await sign({ sub: "b-user", company_id: b.id, scope: "signals.read" });
    const mine = await sign({ sub: "a-user", company_id: a.id, scope: "signals.read" });
    const path = `/v1/machines/${machine?.uuid}/signals`;
    expect((await bearer(mine, path)).status).toBe(200);
    const res = await bearer(token, path);
    expect(res.status).toBe(404);
  });

  it("answers 401 when an API key and a Bearer token come together, even both valid", async () => {
    const co = await createCompany();
    const token = await sign({ sub: "both", company_id: co.id, scope: "machines.read" });
    await expect401(
      await api(co.key, "/v1/machines", { headers: { authorization: `Bearer ${token}` } }),
    );
  });
});

describe("remote JWKS (JWT_JWKS_URL)", () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it("fetches the JWKS once, and again on an unknown kid once the 30 s cooldown has passed", async () => {
    const first = await generateKeyPair("ES256");
    const second = await generateKeyPair("ES256");
    const publicJwk = async (key: CryptoKey, kid: string) => ({
      ...(await exportJWK(key)),
      kid,
      alg: "ES256",
    });
    let served = { keys: [await publicJwk(first.publicKey, "k1")] };
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      fetched.push(String(input instanceof Request ? input.url : input));
      return Response.json(served);
    });
    const jwt: JwtSettings = {
      issuer: ISSUER,
      audience: [AUDIENCE],
      jwksUrl: `https://idp.test/jwks-${crypto.randomUUID()}.json`,
      jwks: undefined,
      companyClaim: "company_id",
      scopeClaim: "scope",
      permissionsClaim: "permissions",
      maxLifetimeSeconds: 86_400,
    };
    const signWith = (key: CryptoKey, kid: string) =>
      new SignJWT({ sub: "r", company_id: 1, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })
        .setProtectedHeader({ alg: "ES256", kid })
        .sign(key);

    expect(await verifyAccessToken(await signWith(first.privateKey, "k1"), jwt)).not.toBeNull();
    expect(await verifyAccessToken(await signWith(first.privateKey, "k1"), jwt)).not.toBeNull();
    expect(fetched).toEqual([jwt.jwksUrl]);

    // The provider rotates keys; within the cooldown the new kid is not fetched.
    served = {
      keys: [await publicJwk(first.publicKey, "k1"), await publicJwk(second.publicKey, "k2")],
    };
    const rotated = await signWith(second.privateKey, "k2");
    expect(await verifyAccessToken(rotated, jwt)).toBeNull();
    expect(fetched).toHaveLength(1);

    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 31_000 });
    expect(await verifyAccessToken(rotated, jwt)).not.toBeNull();
    expect(fetched).toHaveLength(2);
    // The same key source is kept per JWKS URL.
    expect(keySource(jwt)).toBe(keySource({ ...jwt }));
  });
});
