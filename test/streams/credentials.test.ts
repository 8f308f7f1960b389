/**
 * Streams end with their credential, over real connections: revoking an API key closes its
 * open SSE and WebSocket connections within 5 s and refuses a ticket issued before; a stream
 * opened with an access token closes at the token's `exp` plus the 60 s leeway, SSE and
 * WebSocket at the same instant; a ticket of an expired token opens nothing.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { afterEach, describe, expect, it } from "vitest";
import { CLOCK_TOLERANCE_SECONDS } from "../../src/auth/access-tokens";
import { EXPIRY_RESTART_REASON } from "../../src/streams/stream-rpc";
import privateKeys from "../fixtures/jwt-private-keys.test-only.json";
import { plant } from "../fixtures/plant";
import { streamKey } from "../fixtures/stream-clients";
import { SseSubscriber, WsSubscriber } from "../fixtures/subscriber";
import { api, call, operator } from "../harness";

const open: { close(): Promise<void> }[] = [];

/** A stream object's instance, marked by the test to tell it from a later one. */
type Marked = { beforeExpiry?: boolean };

/**
 * How long after the token's `exp` plus the leeway a stream may close: its object's alarm
 * fires at that instant; the margin is for a loaded machine.
 */
const CLOSE_MARGIN_MS = 3_000;

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

/**
 * The test's mark on the instance a stream object runs now, asked again (with a new stub)
 * while an instance that is ending answers with its restart's reason.
 */
async function markOf(stub: () => DurableObjectStub): Promise<boolean | undefined> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await runInDurableObject(stub(), (instance) => (instance as Marked).beforeExpiry);
    } catch (error) {
      if (!String(error).includes(EXPIRY_RESTART_REASON) || attempt >= 50) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
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
  it("closes at the token's exp plus the leeway, SSE and WebSocket at the same instant; its ticket then opens nothing", async () => {
    const p = await plant(2);
    const [m, m2] = p.machines;
    if (!m || !m2) throw new Error("no machines");
    // The instances that will hold the connections, marked before any opens, so that the
    // restart the expiry makes is seen whenever it comes.
    const streams = (): DurableObjectStub[] => [
      env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(`m:${p.co.id}:${m.id}`)),
      env.COMPANY_STREAM.get(env.COMPANY_STREAM.idFromName(`c:${p.co.id}`)),
    ];
    for (const stream of streams()) {
      await runInDurableObject(stream, (instance) => {
        (instance as Marked).beforeExpiry = true;
      });
    }
    const now = Math.floor(Date.now() / 1000);
    // Expired 52 s ago: still inside the 60 s leeway, so accepted for about 8 s more (the
    // connections below open within that, on a loaded machine too).
    const exp = now - (CLOCK_TOLERANCE_SECONDS - 8);
    const token = await sign({
      sub: "board",
      company_id: p.co.id,
      scope: "realtime.read",
      iat: now - 120,
      exp,
    });
    const header = { authorization: `Bearer ${token}` };
    const path = `/v1/realtime/${m.id}/events`;
    const sse = await sseWith(path, header);
    const ws = await wsWith(path, header);
    const companyWs = await wsWith("/v1/realtime/events", header);
    const ticket = await ticketOf(header);
    // A token valid for long: its WebSocket on the same stream is asked to reconnect (the
    // stream restarts to let the expired sockets' connections go, as on a revocation); its
    // SSE stream on another machine's stream is left alone.
    const longToken = await sign({
      sub: "wall",
      company_id: p.co.id,
      scope: "realtime.read",
      iat: now,
      exp: now + 600,
    });
    const longHeader = { authorization: `Bearer ${longToken}` };
    const neighbour = await wsWith(path, longHeader);
    const lasting = await sseWith(`/v1/realtime/${m2.id}/events`, longHeader);
    const closesAt = (exp + CLOCK_TOLERANCE_SECONDS) * 1000;
    expect(Date.now(), "every connection opened before the token expired").toBeLessThan(closesAt);

    await closedWithin(() => sse.closed && ws.closed && companyWs.closed, 15_000);
    // Each closed once the leeway ran out, and promptly after: SSE and WebSocket alike, on
    // the machine's and the company's stream.
    for (const sub of [sse, ws, companyWs]) {
      expect(sub.closedAt).toBeGreaterThanOrEqual(closesAt);
      expect((sub.closedAt ?? Infinity) - closesAt).toBeLessThan(CLOSE_MARGIN_MS);
    }
    expect(sse.comments).toContain("credential expired");
    for (const sub of [ws, companyWs]) {
      expect(sub.closeCode).toBe(1008);
      expect(sub.closeReason).toBe("credential expired");
    }
    // The instances holding the expired WebSockets ended: inside workerd a client is told at
    // the close frame, but a real client's TCP connection goes only with the instance
    // (bench/expiry.ts measures that with TCP clients).
    for (const index of [0, 1]) {
      expect(await markOf(() => streams()[index] as DurableObjectStub)).toBeUndefined();
    }
    await neighbour.waitClosed();
    expect(neighbour.closeCode).toBe(1012);
    expect((await call(`${path}?ticket=${ticket}`)).status).toBe(401);
    expect((await call(path, { headers: header })).status).toBe(401);
    expect(lasting.closed).toBe(false);
    // The restarted stream serves the long token again.
    const back = await wsWith(path, longHeader);
    expect(back.closed).toBe(false);
  }, 30_000);
});
