/**
 * Streams end with their credential, over real connections: revoking an API key closes its
 * open SSE and WebSocket connections within 5 s and refuses a ticket issued before; a stream
 * opened with an access token closes at the token's `exp` plus the 60 s leeway; a ticket of
 * an expired token opens nothing.
 */
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { CLOCK_TOLERANCE_SECONDS } from "../../src/auth/access-tokens";
import privateKeys from "../fixtures/jwt-private-keys.test-only.json";
import { streamKey } from "../fixtures/stream-clients";
import { SseSubscriber, WsSubscriber } from "../fixtures/subscriber";
import { api, call, operator } from "../harness";
import { plant } from "../realtime/plant";

const open: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function ticketOf(headers: Record<string, string>): Promise<string> {
  const res = await call("/v1/realtime/tickets", { method: "POST", headers });
  expect(res.status).toBe(201);
  return ((await res.json()) as { ticket: string }).ticket;
}

async function sseWith(path: string, headers: Record<string, string>): Promise<SseSubscriber> {
  const res = await call(path, { headers });
  expect(res.status).toBe(200);
  const sub = new SseSubscriber(res);
  open.push(sub);
  return sub;
}

async function wsWith(path: string, headers: Record<string, string>): Promise<WsSubscriber> {
  const res = await call(path, { headers: { upgrade: "websocket", ...headers } });
  expect(res.status).toBe(101);
  const sub = new WsSubscriber(res);
  open.push(sub);
  return sub;
}

/** Waits until `closed()` holds, failing after `ms`; returns how long it took. */
async function closedWithin(closed: () => boolean, ms: number): Promise<number> {
  const from = Date.now();
  while (!closed()) {
    if (Date.now() - from > ms) throw new Error(`still open after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - from;
}

async function sign(claims: JWTPayload): Promise<string> {
  const jwk = privateKeys.rsa;
  const key = await importJWK(jwk, "RS256");
  return new SignJWT({ iss: "https://idp.test/", aud: "https://api.test/v1", ...claims })
    .setProtectedHeader({ alg: "RS256", kid: jwk.kid, typ: "JWT" })
    .sign(key);
}

describe("revoking an API key", () => {
  it("closes its open SSE and WebSocket connections within 5 s and refuses its tickets", async () => {
    const p = await plant(2);
    const [m, m2] = p.machines;
    if (!m || !m2) throw new Error("no machines");
    const revoked = await streamKey(p.co.id);
    const kept = await streamKey(p.co.id);
    const header = { "x-api-key": revoked.key };
    const machineSse = await sseWith(`/v1/realtime/${m.id}/events`, header);
    const companySse = await sseWith("/v1/realtime/events", header);
    const ws = await wsWith(`/v1/realtime/${m.id}/events`, header);
    const ticketWs = await wsWith(`/v1/realtime/events?ticket=${await ticketOf(header)}`, {});
    const unused = await ticketOf(header);
    // Another key's stream of a machine whose stream held none of the revoked key's
    // WebSockets (those that did restart: test/streams/revocation-websockets.test.ts).
    const other = await sseWith(`/v1/realtime/${m2.id}/events`, { "x-api-key": kept.key });

    expect((await operator("DELETE", `/api-keys/${revoked.id}`)).status).toBe(204);
    for (const sub of [machineSse, companySse, ws, ticketWs]) {
      expect(await closedWithin(() => sub.closed, 5_000)).toBeLessThan(5_000);
    }
    expect(machineSse.comments).toContain("credential revoked");
    // A ticket issued before the revocation opens nothing now; the key itself neither.
    expect((await call(`/v1/realtime/${m.id}/events?ticket=${unused}`)).status).toBe(401);
    expect((await call(`/v1/realtime/${m.id}/events`, { headers: header })).status).toBe(401);
    // Another key of the company keeps its stream.
    expect(other.closed).toBe(false);
    expect(
      (
        await api(p.co.key, `/v1/realtime/${m2.id}/sku`, {
          method: "POST",
          json: { sku: "Apple juice" },
        })
      ).status,
    ).toBe(204);
    await other.waitFor((e) => e.type === "segment.changed");
  });
});

describe("a stream opened with an access token", () => {
  it("closes at the token's exp plus the leeway, over SSE and WebSocket; its ticket then opens nothing", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const now = Math.floor(Date.now() / 1000);
    // Expired 57 s ago: still inside the 60 s leeway, so accepted for about 3 s more.
    const exp = now - (CLOCK_TOLERANCE_SECONDS - 3);
    const token = await sign({
      sub: "board",
      company_id: p.co.id,
      scope: "realtime.read",
      iat: now - 120,
      exp,
    });
    const header = { authorization: `Bearer ${token}` };
    const sse = await sseWith(`/v1/realtime/${m.id}/events`, header);
    const ws = await wsWith("/v1/realtime/events", header);
    const ticket = await ticketOf(header);
    // A token valid for long keeps its stream.
    const longToken = await sign({
      sub: "wall",
      company_id: p.co.id,
      scope: "realtime.read",
      iat: now,
      exp: now + 600,
    });
    const lasting = await sseWith(`/v1/realtime/${m.id}/events`, {
      authorization: `Bearer ${longToken}`,
    });

    const closesAt = (exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    await closedWithin(() => sse.closed && ws.closed, 10_000);
    // Not before the leeway ran out, and promptly after.
    expect(Date.now()).toBeGreaterThanOrEqual(closesAt);
    expect(Date.now() - closesAt).toBeLessThan(3_000);
    expect(sse.comments).toContain("credential expired");
    expect((await call(`/v1/realtime/${m.id}/events?ticket=${ticket}`)).status).toBe(401);
    expect(lasting.closed).toBe(false);
  }, 20_000);
});
