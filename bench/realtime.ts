/**
 * Throughput of the realtime SKU write, against the floor of this runtime on this
 * machine, in one run:
 *
 * 1. applies the migrations to a database of its own (`.wrangler/bench-realtime`,
 *    emptied first) and starts `wrangler dev` on port 8792 (BENCH_RT_PORT), with the
 *    rate limiter on (the real pipeline);
 * 2. seeds a company with 50 machines, a 24-hour shift (so one is always running),
 *    a SKU with a nominal speed on every machine, a `count` signal per machine, and
 *    a key holding `realtime.write`/`realtime.read` whose limit is never reached;
 * 3. measures with autocannon (BENCH_RT_CONNECTIONS = 32 connections, BENCH_RT_WARMUP
 *    = 3 s of warm-up, then BENCH_RT_DURATION = 10 s):
 *    - the floor: `GET /healthz`, a bare route of the same Worker that does no work;
 *    - `POST /v1/realtime/{machine_id}/sku` on one machine;
 *    - the same spread over 50 machines (each connection cycles through them);
 * 4. checks that no write was lost: the sum of the machines' `revision` (writes
 *    applied) equals the 204s counted by autocannon, warm-ups included;
 * 5. prints a markdown table; targets: one machine at least 40 % of the floor's
 *    throughput, 50 machines at least 60 %, zero errors. Stops wrangler (its own
 *    process group, by its id), also on error or Ctrl-C.
 *
 * Run with `npx tsx bench/realtime.ts`.
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CPU_COUNT, groupCpuMs } from "./lib/cpu";
import { applyMigrations, spawnDevServer } from "./lib/spawn-dev-server";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PERSIST_DIR = ".wrangler/bench-realtime";
const TOKEN = "bench-realtime-token";
const MACHINES = 50;
const READY_TIMEOUT_MS = 120_000;
/** Targets: share of the floor's throughput. */
export const ONE_MACHINE_TARGET = 0.4;
export const SPREAD_TARGET = 0.6;

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PORT = num("BENCH_RT_PORT", 8792);
const CONNECTIONS = num("BENCH_RT_CONNECTIONS", 32);
const DURATION = num("BENCH_RT_DURATION", 10);
const WARMUP = num("BENCH_RT_WARMUP", 3);
const BASE = `http://127.0.0.1:${PORT}`;
/** BENCH_RT_LIMITER=false measures without the per-credential rate limiter (diagnosis only). */
const LIMITER = process.env.BENCH_RT_LIMITER === "false" ? "false" : "true";

// The subset of autocannon's programmatic API used here (it ships no types).
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: AutocannonRequest[];
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  "2xx": number;
}
type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

/** One measured scenario. */
interface Measure {
  name: string;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** 2XX answers in warm-up and measurement together. */
  ok: number;
  /** CPU time of wrangler's process group and of this process per request, ms. */
  cpuMsPerRequest: number;
}

async function loadAutocannon(): Promise<Autocannon> {
  const module = (await import("autocannon")) as { default: Autocannon };
  return module.default;
}

function startWrangler(): ChildProcess {
  // wrangler's dev server with the DevTools inspector and file watching off (see
  // bench/lib/dev-server.ts).
  return spawnDevServer({
    port: PORT,
    persistTo: PERSIST_DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, `RATE_LIMIT_ENABLED:${LIMITER}`],
  });
}

async function stopWrangler(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  try {
    process.kill(-child.pid, "SIGTERM");
  } catch {
    return;
  }
  await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
}

async function waitUntilReady(child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited ${child.exitCode}`);
    try {
      const res = await fetch(`${BASE}/healthz`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 204) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`wrangler dev did not answer on ${BASE} within ${READY_TIMEOUT_MS / 1000} s`);
}

async function send<T>(
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> },
): Promise<T> {
  const res = await fetch(`${BASE}${path}`, {
    method: init.method ?? "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? "POST"} ${path} -> ${res.status}: ${text}`);
  return (text === "" ? null : JSON.parse(text)) as T;
}

const op = <T>(path: string, body: unknown) =>
  send<T>(`/operator/v1${path}`, { body, headers: { authorization: `Bearer ${TOKEN}` } });

interface Seed {
  key: string;
  machineIds: number[];
  skuId: string;
}

async function seed(): Promise<Seed> {
  const [company] = await op<{ id: number }[]>("/companies", [
    { name: "Realtime bench", timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  const machines = await op<{ id: number }[]>(
    `/companies/${company.id}/machines`,
    Array.from({ length: MACHINES }, (_, i) => ({ name: `Line ${i + 1}` })),
  );
  await op(`/companies/${company.id}/shifts`, [
    { name: "All day", startTime: "00:00", endTime: "00:00" },
  ]);
  const [created] = await op<{ key: string }[]>(`/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: [
        "realtime.write",
        "realtime.read",
        "skus.create",
        "nominal_speeds.create",
        "machines.read",
      ],
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  if (!created) throw new Error("no key");
  const headers = { "x-api-key": created.key };
  const [sku] = await send<{ id: string }[]>("/v1/skus", {
    body: [{ sku: "BENCH-1", name: "Bench bottle" }],
    headers,
  });
  if (!sku) throw new Error("no SKU");
  await send("/v1/nominal-speeds", {
    body: machines.map((m) => ({ machine: { id: m.id }, sku: { id: sku.id }, nominalSpeed: 60 })),
    headers,
  });
  for (const m of machines)
    await op(`/machines/${m.id}/signals`, [
      { name: "count", displayName: "count", kind: "counter" },
    ]);
  return { key: created.key, machineIds: machines.map((m) => m.id), skuId: sku.id };
}

async function measure(
  autocannon: Autocannon,
  pgid: number,
  name: string,
  options: Omit<AutocannonOptions, "duration" | "connections">,
): Promise<Measure> {
  const warm = await autocannon({ ...options, connections: CONNECTIONS, duration: WARMUP });
  const cpuBefore = groupCpuMs(pgid);

  const r = await autocannon({ ...options, connections: CONNECTIONS, duration: DURATION });
  const cpuMs = groupCpuMs(pgid) - cpuBefore;

  return {
    cpuMsPerRequest: cpuMs / Math.max(1, r.requests.total),
    name,
    requestsPerSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx + warm.non2xx,
    errors: r.errors + r.timeouts + warm.errors + warm.timeouts,
    ok: r["2xx"] + warm["2xx"],
  };
}

async function revisions(s: Seed, ids: readonly number[]): Promise<number> {
  let total = 0;
  for (const id of ids) {
    const state = await send<{ revision: number }>(`/v1/realtime/${id}`, {
      method: "GET",
      headers: { "x-api-key": s.key },
    });
    total += state.revision;
  }
  return total;
}

async function main(): Promise<void> {
  rmSync(resolve(ROOT, PERSIST_DIR), { recursive: true, force: true });
  applyMigrations(PERSIST_DIR);
  const child = startWrangler();
  const stop = () => void stopWrangler(child);
  process.once("SIGINT", stop);
  try {
    await waitUntilReady(child);
    const s = await seed();
    const autocannon = await loadAutocannon();
    const pgid = child.pid ?? 0;
    const headers = { "x-api-key": s.key, "content-type": "application/json" };
    const body = JSON.stringify({ skuId: s.skuId, quantity: 1000 });
    const [one, ...rest] = s.machineIds;
    if (one === undefined) throw new Error("no machines");

    const floor = await measure(autocannon, pgid, "floor: GET /healthz", {
      url: `${BASE}/healthz`,
    });
    // BENCH_RT_PROBE=1: where the time goes (auth + limiter + one D1 read; the object's read).
    const probes: Measure[] = [];
    if (process.env.BENCH_RT_PROBE === "1") {
      probes.push(
        await measure(autocannon, pgid, "probe: GET /v1/machines", {
          url: `${BASE}/v1/machines`,
          headers,
        }),
        await measure(autocannon, pgid, "probe: GET /v1/realtime/{id}", {
          url: `${BASE}/v1/realtime/${one}`,
          headers,
        }),
      );
    }
    const single = await measure(autocannon, pgid, "POST /v1/realtime/{id}/sku, 1 machine", {
      url: `${BASE}/v1/realtime/${one}/sku`,
      method: "POST",
      headers,
      body,
    });
    const spreadIds = [one, ...rest];
    const spread = await measure(
      autocannon,
      pgid,
      `POST /v1/realtime/{id}/sku, ${MACHINES} machines`,
      {
        url: BASE,
        requests: spreadIds.map((id) => ({
          method: "POST",
          path: `/v1/realtime/${id}/sku`,
          headers,
          body,
        })),
      },
    );

    const applied = await revisions(s, spreadIds);
    const answered = single.ok + spread.ok;
    // Requests in flight when autocannon stops a run are applied but not counted: at most
    // one per connection per run (warm-up and measurement of two scenarios).
    const cutOff = 4 * CONNECTIONS;
    const share = (m: Measure) => m.requestsPerSecond / floor.requestsPerSecond;
    const row = (m: Measure, target?: number) =>
      `| ${m.name} | ${m.requestsPerSecond.toFixed(0)} | ${target === undefined ? "100 %" : `${(share(m) * 100).toFixed(0)} % (target ${target * 100} %)`} | ${m.p50} | ${m.p99} | ${m.requests} | ${m.non2xx} | ${m.errors} | ${m.cpuMsPerRequest.toFixed(2)} |`;
    const verdict =
      share(single) >= ONE_MACHINE_TARGET &&
      share(spread) >= SPREAD_TARGET &&
      single.non2xx + single.errors + spread.non2xx + spread.errors === 0 &&
      applied >= answered &&
      applied - answered <= cutOff;
    console.log(
      [
        "## Realtime SKU writes vs the floor",
        "",
        `autocannon, ${CONNECTIONS} connections, ${DURATION} s per scenario after ${WARMUP} s of warm-up; local wrangler dev server, inspector off (rate limiter ${LIMITER === "true" ? "on" : "OFF"}), ${CPU_COUNT} CPUs.`,
        "",
        "| Scenario | req/s | of floor | p50 ms | p99 ms | requests | non-2XX | errors | CPU ms per request |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        row(floor),
        ...probes.map((m) => row(m, 0)),
        row(single, ONE_MACHINE_TARGET),
        row(spread, SPREAD_TARGET),
        "",
        `Writes answered 204: ${answered}; writes applied (sum of the machines' revision): ${applied}` +
          ` (${applied >= answered && applied - answered <= cutOff ? `none lost; the ${applied - answered} more were cut off in flight when autocannon stopped, at most ${cutOff}` : "MISMATCH"}).`,
        `Targets: ${verdict ? "met" : "NOT met"}.`,
      ].join("\n"),
    );
    if (!verdict) process.exitCode = 1;
  } finally {
    process.removeListener("SIGINT", stop);
    await stopWrangler(child);
  }
}

await main();
