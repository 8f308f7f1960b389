/**
 * Cost of the rate limiter: throughput of `GET /v1/machines` with the limiter on,
 * and switched off by its setting (`RATE_LIMIT_ENABLED=false`), in one run.
 *
 * 1. applies the migrations to a database of its own (`.wrangler/bench-rate-limit`,
 *    emptied first) and starts `wrangler dev` on port 8791 (BENCH_RL_PORT) with
 *    `RATE_LIMIT_ENABLED=true`;
 * 2. seeds one company with 20 machines and one API key whose own limit
 *    (1,000,000 per 60 s) is never reached, so that every request goes through the
 *    whole limiter path (a Durable Object call per request) and is admitted;
 * 3. warms up (BENCH_RL_WARMUP seconds, default 3), then runs autocannon for
 *    BENCH_RL_DURATION seconds (default 10) with BENCH_RL_CONNECTIONS connections
 *    (default 10), checking that every answer is a 200;
 * 4. restarts wrangler on the same database with `RATE_LIMIT_ENABLED=false` and
 *    measures again with the same key;
 * 5. prints a markdown table; the target is a limiter costing at most 25 % of
 *    throughput. Stops wrangler, also on error or Ctrl-C.
 *
 * Run alone with `npx tsx bench/rate-limit.ts`, or from another script:
 * `const result = await runRateLimitBench(); console.log(formatRateLimitBench(result));`.
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { envNumber, ROOT } from "./lib/bench-env";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PERSIST_DIR = ".wrangler/bench-rate-limit";
const TOKEN = "bench-rate-limit-token";
/** Target: the limiter costs at most this fraction of throughput. */
export const MAX_OVERHEAD = 0.25;
const MACHINES = 20;

/** Options of one bench run; every field has a default (and an environment variable). */
export interface RateLimitBenchOptions {
  /** Port of its own `wrangler dev` (BENCH_RL_PORT, default 8791). */
  port?: number;
  /** Seconds measured per mode (BENCH_RL_DURATION, default 10). */
  durationSeconds?: number;
  /** Seconds of warm-up per mode, not measured (BENCH_RL_WARMUP, default 3). */
  warmupSeconds?: number;
  /** Concurrent connections (BENCH_RL_CONNECTIONS, default 10). */
  connections?: number;
}

/** What autocannon measured for one mode. */
export interface ModeResult {
  /** Mean requests per second. */
  requestsPerSecond: number;
  /** Latency percentiles in milliseconds. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Answers in the measured window; `non2xx` must be 0 for the run to count. */
  requests: number;
  non2xx: number;
  errors: number;
}

/** The result of `runRateLimitBench`. */
export interface RateLimitBenchResult {
  limiterOn: ModeResult;
  limiterOff: ModeResult;
  /** 1 - on/off throughput: the share of throughput the limiter costs (negative = noise). */
  overhead: number;
  /** True when `overhead` <= `MAX_OVERHEAD`. */
  targetMet: boolean;
  options: Required<RateLimitBenchOptions>;
}

// The subset of autocannon's programmatic API used here (it ships no types).
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}
interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  "2xx": number;
}
type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

async function loadAutocannon(): Promise<Autocannon> {
  const module = (await import("autocannon")) as { default: Autocannon };
  return module.default;
}

function withDefaults(options: RateLimitBenchOptions): Required<RateLimitBenchOptions> {
  return {
    port: options.port ?? envNumber("BENCH_RL_PORT", 8791),
    durationSeconds: options.durationSeconds ?? envNumber("BENCH_RL_DURATION", 10),
    warmupSeconds: options.warmupSeconds ?? envNumber("BENCH_RL_WARMUP", 3),
    connections: options.connections ?? envNumber("BENCH_RL_CONNECTIONS", 10),
  };
}

function startWrangler(port: number, limiterEnabled: boolean): ChildProcess {
  // wrangler's dev server with the DevTools inspector and file watching off (see
  // bench/lib/dev-server.ts).
  return spawnDevServer({
    port,
    persistTo: PERSIST_DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, `RATE_LIMIT_ENABLED:${limiterEnabled}`],
  });
}

async function operator<T>(base: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${base}/operator/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Seeds a company, its machines and a key that the bench never takes over its limit. */
async function seed(base: string): Promise<string> {
  const [company] = await operator<{ id: number }[]>(base, "/companies", [
    { name: "Rate-limit bench", timezone: "Europe/Rome" },
  ]);
  if (!company) throw new Error("no company created");
  await operator(
    base,
    `/companies/${company.id}/machines`,
    Array.from({ length: MACHINES }, (_, i) => ({ name: `Bench machine ${i + 1}` })),
  );
  const [key] = await operator<{ key: string }[]>(base, `/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: ["machines.read"],
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  if (!key) throw new Error("no key created");
  return key.key;
}

/** Checks the mode is the one asked for: the limiter's header is present only when on. */
async function checkMode(base: string, key: string, limiterEnabled: boolean): Promise<void> {
  const res = await fetch(`${base}/v1/machines`, { headers: { "x-api-key": key } });
  await res.body?.cancel();
  if (res.status !== 200) throw new Error(`GET /v1/machines -> ${res.status}`);
  const limited = res.headers.get("ratelimit") !== null;
  if (limited !== limiterEnabled) {
    throw new Error(
      `expected the limiter ${limiterEnabled ? "on" : "off"}; RateLimit header ${
        limited ? "present" : "absent"
      }`,
    );
  }
}

async function measureMode(
  limiterEnabled: boolean,
  options: Required<RateLimitBenchOptions>,
  keyHolder: { key?: string },
): Promise<ModeResult> {
  const base = `http://127.0.0.1:${options.port}`;
  const child = startWrangler(options.port, limiterEnabled);
  const stop = () => void stopDevServer(child);
  process.once("SIGINT", stop);
  try {
    await waitForHealthz(base, child);
    keyHolder.key ??= await seed(base);
    const key = keyHolder.key;
    await checkMode(base, key, limiterEnabled);
    const autocannon = await loadAutocannon();
    const target = {
      url: `${base}/v1/machines`,
      connections: options.connections,
      headers: { "x-api-key": key },
    };
    await autocannon({ ...target, duration: options.warmupSeconds });
    const result = await autocannon({ ...target, duration: options.durationSeconds });
    return {
      requestsPerSecond: result.requests.average,
      latencyP50Ms: result.latency.p50,
      latencyP99Ms: result.latency.p99,
      requests: result.requests.total,
      non2xx: result.non2xx,
      errors: result.errors,
    };
  } finally {
    process.removeListener("SIGINT", stop);
    await stopDevServer(child);
  }
}

/**
 * Runs the whole bench: limiter on, then off, on one fresh database.
 *
 * @param options port, durations and connections (defaults above).
 * @returns both measurements and the limiter's share of throughput.
 * @throws Error when wrangler does not start, seeding fails, or a mode is not the one asked for.
 */
export async function runRateLimitBench(
  options: RateLimitBenchOptions = {},
): Promise<RateLimitBenchResult> {
  const full = withDefaults(options);
  rmSync(resolve(ROOT, PERSIST_DIR), { recursive: true, force: true });
  applyMigrations(PERSIST_DIR);
  const keyHolder: { key?: string } = {};
  const limiterOn = await measureMode(true, full, keyHolder);
  const limiterOff = await measureMode(false, full, keyHolder);
  const overhead =
    limiterOff.requestsPerSecond > 0
      ? 1 - limiterOn.requestsPerSecond / limiterOff.requestsPerSecond
      : 0;
  return { limiterOn, limiterOff, overhead, targetMet: overhead <= MAX_OVERHEAD, options: full };
}

/** Formats a result as a markdown section (heading, table, verdict). */
export function formatRateLimitBench(result: RateLimitBenchResult): string {
  const row = (name: string, m: ModeResult) =>
    `| ${name} | ${m.requestsPerSecond.toFixed(0)} | ${m.latencyP50Ms} | ${m.latencyP99Ms} | ${
      m.requests
    } | ${m.non2xx} | ${m.errors} |`;
  const { options: o } = result;
  return [
    "## Rate limiter cost: GET /v1/machines",
    "",
    `autocannon, ${o.connections} connections, ${o.durationSeconds} s per mode after ${o.warmupSeconds} s of warm-up; local wrangler dev server, inspector off.`,
    "",
    "| Limiter | req/s | p50 ms | p99 ms | requests | non-2XX | errors |",
    "|---|---:|---:|---:|---:|---:|---:|",
    row("on (RATE_LIMIT_ENABLED=true)", result.limiterOn),
    row("off (RATE_LIMIT_ENABLED=false)", result.limiterOff),
    "",
    `Limiter cost: ${(result.overhead * 100).toFixed(1)} % of throughput (target: at most ${
      MAX_OVERHEAD * 100
    } %): ${result.targetMet ? "met" : "NOT met"}.`,
  ].join("\n");
}

const invokedDirectly =
  process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  runRateLimitBench()
    .then((result) => {
      console.log(`\n${formatRateLimitBench(result)}\n`);
      const bad = result.limiterOn.non2xx + result.limiterOff.non2xx;
      if (bad > 0) {
        console.error(`${bad} answers were not 2XX: the measurement is not valid.`);
        process.exitCode = 1;
      }
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
