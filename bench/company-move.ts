/**
 * `npm run bench` (bench/all.ts): a company moved between shards while it writes 50 times a
 * second (docs/scaling.md, "Moving a company to another shard"), against wrangler's local
 * dev server (its own database folder, port 8802 or BENCH_MOVE_PORT), from this Node process,
 * whose clock runs whatever the Worker does (inside the test pool, one isolate runs both the
 * writer and the Worker, and reaches about 45 a second on a loaded machine).
 *
 * 1. a company on SHARD_0 with two machines running a 24-hour shift, SKUs and nominal speeds,
 *    and 2,000 production logs;
 * 2. a writer on a fixed schedule of 50 writes a second: four production logs through
 *    `POST /v1/production-logs` for each realtime SKU change (`POST /v1/realtime/{id}/sku`),
 *    not waiting for answers; a 503 with `Retry-After` is retried after it;
 * 3. 2 s in, `POST /operator/v1/companies/{id}/move` to SHARD_1; the writer goes on 2 s after
 *    the answer;
 * 4. checked: every acknowledged log is counted by a search after the move, the realtime
 *    revision equals the acknowledged SKU changes, the directory names SHARD_1.
 *
 * Targets: at least 49 writes a second sent, no write lost, no 5XX but the fence's 503 (each
 * retried). Prints a markdown table with the load average, writes it to
 * bench/company-move-results.md, exits 1 when a target is missed.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { startFreshDevServer, stopDevServer } from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_MOVE_PORT", 8802);
const BASE = `http://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-move-state";
const TOKEN = "bench-move-token";
const RATE = 50;
const SEEDED = 2_000;
/** The writer key's scopes, and a limit far above 50 a second. */
const ALL = [
  "production_logs.create",
  "production_logs.read",
  "realtime.write",
  "realtime.read",
  "skus.create",
  "nominal_speeds.create",
];
const LIMIT = { requests: 1_000_000, periodSeconds: 60 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function call(
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Response> {
  return fetch(`${BASE}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function json<T>(res: Response, what: string): Promise<T> {
  if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const operator = <T>(method: string, path: string, body?: unknown) =>
  call(method, `/operator/v1${path}`, body, { authorization: `Bearer ${TOKEN}` }).then((res) =>
    json<T>(res, `${method} ${path}`),
  );

async function main(): Promise<void> {
  const child = await startFreshDevServer({ port: PORT, persistTo: PERSIST_DIR, token: TOKEN });
  try {
    const [company] = await operator<{ id: number }[]>("POST", "/companies", [
      { name: "Bench Move", timezone: "UTC", shard: "SHARD_0" },
    ]);
    if (!company) throw new Error("no company");
    const [key] = await operator<{ key: string }[]>("POST", `/companies/${company.id}/api-keys`, [
      { name: "writer", scopes: ALL, rateLimit: LIMIT },
    ]);
    const headers = { "x-api-key": key?.key ?? "" };
    const publicJson = <T>(method: string, path: string, body?: unknown) =>
      call(method, path, body, headers).then((res) => json<T>(res, `${method} ${path}`));
    const [m1, m2] = await operator<{ id: number }[]>("POST", `/companies/${company.id}/machines`, [
      { name: "M1" },
      { name: "M2" },
    ]);
    if (!m1 || !m2) throw new Error("no machines");
    await operator("POST", `/companies/${company.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);
    const [a, b] = await publicJson<{ id: string; sku: string }[]>("POST", "/v1/skus", [
      { sku: "A-1" },
      { sku: "B-2" },
    ]);
    if (!a || !b) throw new Error("no SKUs");
    await publicJson("POST", "/v1/nominal-speeds", [
      { machine: { id: m1.id }, sku: { id: a.id }, nominalSpeed: 10 },
      { machine: { id: m2.id }, sku: { id: a.id }, nominalSpeed: 10 },
      { machine: { id: m2.id }, sku: { id: b.id }, nominalSpeed: 20 },
    ]);
    const base = Date.UTC(2026, 0, 5);
    const log = (i: number) => ({
      start: new Date(base + i * 60_000).toISOString(),
      end: new Date(base + (i + 1) * 60_000).toISOString(),
      count: i,
      machine: { id: m1.id },
      sku: { id: a.id },
    });
    const acked = new Set<string>();
    for (let i = 0; i < SEEDED; i += 1_000) {
      const made = await publicJson<{ id: string }[]>(
        "POST",
        "/v1/production-logs",
        Array.from({ length: 1_000 }, (_, j) => log(i + j)),
      );
      for (const l of made) acked.add(l.id);
    }

    const statuses = new Map<number, number>();
    let retries = 0;
    let realtimeAcked = 0;
    let next = SEEDED;
    let sku = 0;
    const attempt = async (
      send: () => Promise<Response>,
      done: (res: Response) => Promise<void>,
    ) => {
      for (;;) {
        const res = await send();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.ok) return done(res);
        const text = await res.text();
        if (res.status !== 503 || res.headers.get("retry-after") === null) {
          throw new Error(`a write answered ${res.status}: ${text}`);
        }
        retries++;
        await sleep(Number(res.headers.get("retry-after")) * 1000);
      }
    };
    const writeLog = () => {
      const i = next++;
      return attempt(
        () => call("POST", "/v1/production-logs", [log(i)], headers),
        async (res) => {
          for (const l of (await res.json()) as { id: string }[]) acked.add(l.id);
        },
      );
    };
    const writeRealtime = () => {
      const body = { sku: (sku++ % 2 === 0 ? a : b).sku };
      return attempt(
        () => call("POST", `/v1/realtime/${m2.id}/sku`, body, headers),
        async () => {
          realtimeAcked++;
        },
      );
    };

    let writing = true;
    let sent = 0;
    const pending: Promise<void>[] = [];
    const started = Date.now();
    const writer = (async () => {
      while (writing) {
        const due = Math.floor(((Date.now() - started) * RATE) / 1000);
        while (sent < due) {
          pending.push(sent % 5 === 4 ? writeRealtime() : writeLog());
          sent++;
        }
        await sleep(5);
      }
    })();
    await sleep(2_000);
    const moveStart = Date.now();
    const report = await operator<{
      switchMs: number;
      statements: number;
      copied: Record<string, number>;
    }>("POST", `/companies/${company.id}/move`, { shard: "SHARD_1" });
    const moveMs = Date.now() - moveStart;
    await sleep(2_000);
    writing = false;
    await writer;
    const seconds = (Date.now() - started) / 1000;
    await Promise.all(pending);

    const companies = await operator<{ id: number; shard: string }[]>("GET", "/companies");
    const shard = companies.find((c) => c.id === company.id)?.shard;
    const search = await publicJson<{ totalCount: number }>("POST", "/v1/production-logs/filters", {
      machines: { include: [m1.id] },
      limit: 1,
    });
    const state = await publicJson<{ revision: number }>("GET", `/v1/realtime/${m2.id}`);
    const rate = sent / seconds;
    const other5xx = [...statuses].filter(([s]) => s >= 500 && s !== 503);
    const lost = acked.size - search.totalCount + (realtimeAcked - state.revision);
    const met = rate >= RATE - 1 && lost === 0 && other5xx.length === 0 && shard === "SHARD_1";
    const [load1] = loadavg();
    const table = [
      `| Move of a company during ${RATE} writes/s | Value |`,
      "|---|---:|",
      `| Writes sent (4 production logs : 1 realtime SKU change) | ${sent} in ${seconds.toFixed(1)} s = ${rate.toFixed(1)}/s |`,
      `| Rows copied in the bulk copy | ${Object.values(report.copied).reduce((x, y) => x + y, 0)} |`,
      `| Move request, start to answer | ${moveMs} ms |`,
      `| Switch (the company's requests waited) | ${report.switchMs} ms |`,
      `| D1 statements the move sent to the shards (1,000 per invocation allowed) | ${report.statements} |`,
      `| Answers by status | ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(", ")} |`,
      `| 503 retried | ${retries} |`,
      `| Acknowledged writes lost | ${lost} |`,
      `| Company's shard after the move | ${shard} |`,
      "",
      `Targets (>= ${RATE - 1} writes/s, none lost, no 5XX but a retried 503): ${met ? "met" : "MISSED"}. ` +
        `${cpus().length} cores, load ${load1?.toFixed(1) ?? "?"}.`,
    ].join("\n");
    console.log(table);
    writeFileSync(join(ROOT, "bench", "company-move-results.md"), `${table}\n`);
    if (!met) process.exitCode = 1;
  } finally {
    await stopDevServer(child);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
