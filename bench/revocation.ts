/**
 * Streams end with their credential, checked with real TCP clients against wrangler's local
 * dev server: `npx tsx bench/revocation.ts`. Revocation closes stream-event connections before
 * the DELETE answers (issue 42); an access token's connections close at its `exp` plus the
 * leeway, WebSockets at the same instant as SSE (issue 48).
 *
 * 1. starts from an empty database of its own (`.wrangler/bench-revocation-state`, deleted
 *    first) on port 8798 (BENCH_REVOCATION_PORT);
 * 2. a company with a machine and two keys; on the company's stream, the first key opens a
 *    WebSocket with its header, another with a ticket, and an SSE stream; the second key a
 *    WebSocket (Node's `ws` client, which reports a close once the TCP connection is gone);
 * 3. `DELETE /operator/v1/api-keys/{id}` of the first key, then: when each of its three
 *    connections was closed, against when the DELETE's answer arrived (target: every one
 *    closed by then), and the second key's socket: told to reconnect (code 1012), it comes
 *    back with `?since=` its last event id and gets the next event;
 * 4. in another company, an access token (signed with the test-only key of test/fixtures,
 *    whose public half the server takes as `JWT_JWKS`) that expires, leeway included, a few
 *    seconds later: a WebSocket with it in the header, one with its ticket and an SSE stream,
 *    and a WebSocket of a token valid for long on the same stream; when each was seen closed
 *    against the token's `exp` plus the leeway (target: every one at or after it and within
 *    `EXPIRY_MARGIN_MS`), and the long token's socket told to reconnect (1012);
 * 5. prints the figures and writes `bench/revocation-results.md`; exits 1 on a miss.
 *
 * A WebSocket's close frame reached the client at once before; its TCP connection stayed
 * open until the stream object left memory (10 s idle, never while another connection kept
 * it busy), which a client sees as the socket still open: docs/stream-events.md.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { importJWK, SignJWT } from "jose";
import WebSocket from "ws";
import { ok } from "../scripts/lib/http";
import { connectOperator } from "../scripts/lib/operator-api";
import { envNumber, ROOT } from "./lib/bench-env";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_REVOCATION_PORT", 8798);
const BASE = `http://127.0.0.1:${PORT}`;
const WS_BASE = `ws://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-revocation-state";
const RESULTS = join(ROOT, "bench", "revocation-results.md");
const TOKEN = "bench-revocation-token";
/**
 * How much later than the DELETE's answer a close may reach the client and still count as
 * closed by then: the server ends the connections before it answers, but the answer and a
 * socket's end travel on two TCP connections, which the client may read in either order.
 */
const ORDER_MARGIN_MS = 50;
/** The access tokens' verification leeway (src/auth/access-tokens.ts, CLOCK_TOLERANCE_SECONDS). */
const LEEWAY_S = 60;
/** How long after `exp` plus the leeway an expired token's connection may close. */
const EXPIRY_MARGIN_MS = 1_000;
/** The issuer and audience the server checks, as the tests' (vitest.config.ts). */
const ISSUER = "https://idp.test/";
const AUDIENCE = "https://api.test/v1";

interface Connection {
  label: string;
  /** When the client saw the connection closed (performance.now()), or null. */
  closedAt: number | null;
  /** The same instant on the wall clock (ms since the epoch), or null. */
  closedWall: number | null;
  code: number | null;
}

/** A WebSocket of Node's `ws` client: open, with its close recorded. */
function openSocket(label: string, url: string, headers: Record<string, string> = {}) {
  return new Promise<{ ws: WebSocket; state: Connection; lastId: () => number }>(
    (resolve, reject) => {
      const ws = new WebSocket(url, { headers });
      const state: Connection = { label, closedAt: null, closedWall: null, code: null };
      let lastId = 0;
      ws.on("message", (data) => {
        const event = JSON.parse(String(data)) as { id?: number };
        if (typeof event.id === "number") lastId = event.id;
      });
      ws.on("close", (code) => {
        state.closedAt = performance.now();
        state.closedWall = Date.now();
        state.code = code;
      });
      ws.on("open", () => resolve({ ws, state, lastId: () => lastId }));
      ws.on("error", reject);
    },
  );
}

/** An SSE stream read by `fetch`: its end recorded. */
async function openSse(label: string, headers: Record<string, string>): Promise<Connection> {
  const state: Connection = { label, closedAt: null, closedWall: null, code: null };
  const res = await fetch(`${BASE}/v1/realtime/events`, { headers });
  if (res.status !== 200 || !res.body) throw new Error(`SSE -> ${res.status}`);
  const reader = res.body.getReader();
  void (async () => {
    try {
      for (;;) if ((await reader.read()).done) break;
    } catch {
      // ended
    }
    state.closedAt = performance.now();
    state.closedWall = Date.now();
  })();
  return state;
}

/** An access token for `companyId`, signed with the test-only RSA key of test/fixtures. */
async function signToken(claims: Record<string, unknown>): Promise<string> {
  const keys = JSON.parse(
    readFileSync(join(ROOT, "test", "fixtures", "jwt-private-keys.test-only.json"), "utf8"),
  ) as { rsa: { kid: string } & Record<string, unknown> };
  return new SignJWT({ iss: ISSUER, aud: AUDIENCE, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: keys.rsa.kid, typ: "JWT" })
    .sign(await importJWK(keys.rsa, "RS256"));
}

/** A one-use ticket for a browser's stream, asked with `headers`. */
async function ticketOf(headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${BASE}/v1/realtime/tickets`, { method: "POST", headers });
  return ((await res.json()) as { ticket: string }).ticket;
}

/**
 * Step 4: an access token's connections at its expiry, in a company of their own.
 *
 * @returns the report's lines and what missed the target.
 */
async function expiryScenario(
  api: ReturnType<typeof connectOperator>["api"],
): Promise<{ lines: string[]; misses: string[] }> {
  const [company] = ok(
    "POST",
    await api.POST("/companies", { body: [{ name: "Expiry", timezone: "UTC" }] }),
  );
  if (!company) throw new Error("no company");
  const now = Math.floor(Date.now() / 1000);
  // Expired already, inside the leeway: accepted for EXPIRES_IN_S more seconds.
  const EXPIRES_IN_S = 6;
  const exp = now - (LEEWAY_S - EXPIRES_IN_S);
  const closesAt = (exp + LEEWAY_S) * 1000;
  const claims = { company_id: company.id, scope: "realtime.read" };
  const token = await signToken({ ...claims, sub: "board", iat: now - 120, exp });
  const longToken = await signToken({ ...claims, sub: "wall", iat: now, exp: now + 600 });
  const header = { authorization: `Bearer ${token}` };
  const path = `${WS_BASE}/v1/realtime/events`;
  const expired = [
    (await openSocket("WebSocket, token in the header", path, header)).state,
    (await openSocket("WebSocket, the token's ticket", `${path}?ticket=${await ticketOf(header)}`))
      .state,
    await openSse("SSE, token in the header", header),
  ];
  const other = await openSocket("WebSocket of a token valid for long", path, {
    authorization: `Bearer ${longToken}`,
  });
  const deadline = closesAt + 30_000;
  while (Date.now() < deadline && expired.some((c) => c.closedWall === null)) await sleep(50);
  for (let i = 0; i < 50 && other.state.closedWall === null; i++) await sleep(100);
  other.ws.terminate();
  const after = (c: Connection) =>
    c.closedWall === null ? "still open" : `${c.closedWall - closesAt} ms`;
  const misses = expired
    .filter(
      (c) =>
        c.closedWall === null ||
        c.closedWall < closesAt ||
        c.closedWall > closesAt + EXPIRY_MARGIN_MS,
    )
    .map((c) => `${c.label}: closed ${after(c)} after exp plus the leeway`);
  if (other.state.code !== 1012) {
    misses.push(`the long token's socket closed with ${other.state.code}, not 1012`);
  }
  const lines = [
    "## An access token's expiry",
    "",
    `A token that expired, the ${LEEWAY_S} s leeway included, ${EXPIRES_IN_S} s after the connections were opened.`,
    "",
    "| Connection | Closed after `exp` plus the leeway | Close code |",
    "|---|---:|---:|",
    ...[...expired, other.state].map((c) => `| ${c.label} | ${after(c)} | ${c.code ?? ""} |`),
    "",
    `Target: every connection of the expired token closed at \`exp\` plus the leeway, within ${EXPIRY_MARGIN_MS} ms, WebSocket as SSE; the long token's socket told to reconnect (1012). ${
      misses.length === 0 ? "Met." : `Missed:\n\n${misses.map((m) => `- ${m}`).join("\n")}`
    }`,
    "",
  ];
  return { lines, misses };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  rmSync(join(ROOT, PERSIST_DIR), { recursive: true, force: true });
  applyMigrations(PERSIST_DIR);
  const child = spawnDevServer({
    port: PORT,
    persistTo: PERSIST_DIR,
    vars: [
      `OPERATOR_TOKEN:${TOKEN}`,
      // The public half of the test-only key pair (test/fixtures), as the tests take it.
      `JWT_JWKS:${JSON.stringify(JSON.parse(readFileSync(join(ROOT, "test", "fixtures", "jwks.json"), "utf8")))}`,
      `JWT_ISSUER:${ISSUER}`,
      `JWT_AUDIENCE:${AUDIENCE}`,
    ],
  });
  const stop = () => void stopDevServer(child);
  process.on("exit", stop);
  try {
    await waitForHealthz(BASE, child);
    const { api } = connectOperator(BASE, TOKEN);
    const [company] = ok(
      "POST",
      await api.POST("/companies", { body: [{ name: "Revocation", timezone: "UTC" }] }),
    );
    if (!company) throw new Error("no company");
    const path = { params: { path: { company_id: company.id } } };
    const [revoked, kept] = ok(
      "POST",
      await api.POST("/companies/{company_id}/api-keys", {
        ...path,
        body: [
          { name: "revoked", scopes: ["realtime.read"] },
          { name: "kept", scopes: ["realtime.read", "realtime.write", "skus.create"] },
        ],
      }),
    );
    if (!revoked || !kept) throw new Error("no keys");
    const ticket = (
      (await (
        await fetch(`${BASE}/v1/realtime/tickets`, {
          method: "POST",
          headers: { "x-api-key": revoked.key },
        })
      ).json()) as { ticket: string }
    ).ticket;

    const byHeader = await openSocket(
      "WebSocket, key in the header",
      `${WS_BASE}/v1/realtime/events`,
      {
        "x-api-key": revoked.key,
      },
    );
    const byTicket = await openSocket(
      "WebSocket, ticket",
      `${WS_BASE}/v1/realtime/events?ticket=${ticket}`,
    );
    const sse = await openSse("SSE, key in the header", { "x-api-key": revoked.key });
    const other = await openSocket("WebSocket of another key", `${WS_BASE}/v1/realtime/events`, {
      "x-api-key": kept.key,
    });
    await sleep(1_000);

    const sent = performance.now();
    const res = await fetch(`${BASE}/operator/v1/api-keys/${revoked.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const answered = performance.now();
    if (res.status !== 204) throw new Error(`DELETE -> ${res.status}`);
    const revokedConnections = [byHeader.state, byTicket.state, sse];
    // How long after the answer the last one closed (waiting at most 40 s to report it).
    for (let i = 0; i < 400 && revokedConnections.some((c) => c.closedAt === null); i++) {
      await sleep(100);
    }
    for (let i = 0; i < 100 && other.state.closedAt === null; i++) await sleep(100);
    // The other key comes back after its last event and gets the next one.
    const since = other.lastId();
    const back = await openSocket(
      "WebSocket of another key, resumed",
      `${WS_BASE}/v1/realtime/events?since=${since}`,
      { "x-api-key": kept.key },
    );
    const resumed = new Promise<boolean>((resolve) => {
      back.ws.on("message", () => resolve(true));
      setTimeout(() => resolve(false), 10_000);
    });
    const [machine] = ok(
      "POST",
      await api.POST("/companies/{company_id}/machines", { ...path, body: [{ name: "Press" }] }),
    );
    await fetch(`${BASE}/v1/skus`, {
      method: "POST",
      headers: { "x-api-key": kept.key, "content-type": "application/json" },
      body: JSON.stringify([{ sku: "R-1" }]),
    });
    ok(
      "POST",
      await api.POST("/companies/{company_id}/shifts", {
        ...path,
        body: [{ name: "All day", startTime: "00:00", endTime: "00:00" }],
      }),
    );
    await fetch(`${BASE}/v1/realtime/${machine?.id}/sku`, {
      method: "POST",
      headers: { "x-api-key": kept.key, "content-type": "application/json" },
      body: JSON.stringify({ sku: "R-1" }),
    });
    const gotNext = await resumed;
    back.ws.close();

    const rel = (at: number | null) =>
      at === null ? "still open" : `${(at - sent).toFixed(0)} ms`;
    const misses = revokedConnections
      .filter((c) => c.closedAt === null || c.closedAt > answered + ORDER_MARGIN_MS)
      .map(
        (c) =>
          `${c.label}: closed ${rel(c.closedAt)} after the DELETE was sent, answered at ${(answered - sent).toFixed(0)} ms`,
      );
    if (other.state.code !== 1012)
      misses.push(`the other key's socket closed with ${other.state.code}, not 1012`);
    if (!gotNext) misses.push("the other key's socket, resumed with since, got no event");
    const revocationMisses = [...misses];
    const expiry = await expiryScenario(api);
    misses.push(...expiry.misses);
    const lines = [
      "# Streams end with their credential",
      "",
      `Generated by \`npx tsx bench/revocation.ts\` (part of \`npm run bench\`) on ${new Date().toISOString()}; local dev server, Node's \`ws\` client (a close is reported once the TCP connection is gone) and \`fetch\` for SSE; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(", ")}.`,
      "",
      "## Revocation",
      "",
      `DELETE of the key answered ${(answered - sent).toFixed(0)} ms after it was sent.`,
      "",
      "| Connection | Closed after the DELETE was sent | Close code |",
      "|---|---:|---:|",
      ...[...revokedConnections, other.state].map(
        (c) => `| ${c.label} | ${rel(c.closedAt)} | ${c.code ?? ""} |`,
      ),
      "",
      `The other key's socket, back with \`?since=${since}\`: ${gotNext ? "got the next event" : "got nothing"}.`,
      "",
      `Target: every connection of the revoked key closed by the time the DELETE's answer arrives (within ${ORDER_MARGIN_MS} ms: the answer and the close travel on two connections). ${
        revocationMisses.length === 0
          ? "Met."
          : `Missed:\n\n${revocationMisses.map((m) => `- ${m}`).join("\n")}`
      }`,
      "",
      ...expiry.lines,
    ].join("\n");
    console.log(lines);
    writeFileSync(RESULTS, lines);
    if (misses.length > 0) process.exitCode = 1;
  } finally {
    stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
