/**
 * `npm run bench`: latency of the signal-data route on 14 days of 1 Hz samples.
 *
 * 1. applies the migrations to a database of its own (`.wrangler/bench-state`, never the
 *    demo database) and starts `wrangler dev` on it (port 8788, or BENCH_PORT);
 * 2. seeds one signal with 1,209,600 samples (14 days at 1 Hz: a sine plus deterministic
 *    noise) in operator calls of 10,000, four at a time; a later run reuses the seeded
 *    signal when its marker file and its sample count agree;
 * 3. times each query (3 warm-ups, then BENCH_RUNS = 30 sequential runs) on the public
 *    route, which uses the rollups, and on the operator diagnostics route with
 *    `strategy=raw`, which decodes every raw sample of the window (the naive design);
 *    both answers are compared point by point first;
 * 4. prints a markdown table and writes it to bench/results.md;
 * 5. stops wrangler, also on error or Ctrl-C.
 *
 * Times are measured by the client: request sent to the whole body read, over local HTTP,
 * with `Accept-Encoding: identity` (see `IDENTITY`); the public route is also timed with
 * `Accept-Encoding: gzip, deflate` (Node's `fetch` default) for the column beside it.
 * BENCH_SCRIPT runs another Worker entry than wrangler.toml's `main` (for example one that
 * mounts the diagnostics route while it is not mounted in src/operator/index.ts).
 */
import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { percentile } from "./lib/local-worker";
import {
  applyMigrations,
  spawnDevServer,
  stopWhenThisProcessEnds,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_PORT", 8788);
const BASE = `http://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-state";
const MARKER = join(ROOT, PERSIST_DIR, "bench-seed.json");
const RESULTS = join(ROOT, "bench", "results.md");
const TOKEN = "bench-token";
const RUNS = envNumber("BENCH_RUNS", 30);
const WARMUPS = 3;

/** The seeded series: 14 days at 1 Hz from 2024-01-01T00:00:00Z. */
const SERIES_START = Date.UTC(2024, 0, 1);
const SERIES_SECONDS = 14 * 86_400;
const CHUNK = 10_000;
const CONCURRENCY = 4;
const SEED_VERSION = 1;

const BIOME_BIN = createRequire(join(ROOT, "package.json")).resolve("@biomejs/biome/bin/biome");

interface Seed {
  version: number;
  companyId: number;
  key: string;
  machineUuid: string;
  publicId: string;
  samples: number;
}

interface Point {
  timestamp: string;
  value: number;
}

/** The value of the seeded series at second `i`: a 1-hour sine, a daily drift and noise. */
function valueAt(i: number): number {
  // A multiplicative hash of i gives the same noise on every run (no Math.random).
  const noise = (((i * 2_654_435_761) >>> 0) % 10_000) / 10_000 - 0.5;
  return (
    50 + 20 * Math.sin((2 * Math.PI * i) / 3600) + 5 * Math.sin((2 * Math.PI * i) / 86_400) + noise
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

async function http(
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${BASE}${path}`, {
    method,
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json" }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
}

/** Calls the operator API; throws with the body on a non-2XX answer. */
async function op<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await http(method, `/operator/v1${path}`, {
    body,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /operator/v1${path} -> ${res.status}: ${text}`);
  return (text === "" ? null : JSON.parse(text)) as T;
}

function startWrangler(): ChildProcess {
  // wrangler's dev server with the DevTools inspector and file watching off (see
  // bench/lib/dev-server.ts); BENCH_SCRIPT runs another entry point.
  return spawnDevServer({
    port: PORT,
    persistTo: PERSIST_DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`],
    script: process.env.BENCH_SCRIPT,
  });
}

/** Reads the public route and returns its body. */
async function publicData(seed: Seed, query: string): Promise<{ data: Point[] }> {
  const res = await http(
    "GET",
    `/v1/machines/${seed.machineUuid}/signals/${seed.publicId}?${query}`,
    { headers: { "x-api-key": seed.key } },
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`public route -> ${res.status}: ${text}`);
  return JSON.parse(text) as { data: Point[] };
}

/** Total samples stored in the seeded window, read through the public route. */
async function storedSamples(seed: Seed): Promise<number> {
  const body = await publicData(
    seed,
    `start_time=${iso(SERIES_START)}&end_time=${iso(SERIES_START + SERIES_SECONDS * 1000)}&agg_unit=d&agg_function=count`,
  );
  return body.data.reduce((a, p) => a + p.value, 0);
}

/** Reuses the seeded signal when the marker and the stored count agree; seeds otherwise. */
async function ensureSeed(): Promise<{ seed: Seed; seededNow: boolean; seconds: number }> {
  if (existsSync(MARKER)) {
    const seed = JSON.parse(readFileSync(MARKER, "utf8")) as Seed;
    if (seed.version === SEED_VERSION) {
      try {
        if ((await storedSamples(seed)) === SERIES_SECONDS) {
          return { seed, seededNow: false, seconds: 0 };
        }
      } catch {
        // The marker points at data that is gone: seed again.
      }
    }
  }
  const started = performance.now();
  const [company] = await op<{ id: number }[]>("POST", "/companies", [
    { name: `Bench Co ${new Date().toISOString()}`, timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  // The 2024 series must stay in the store: this bench times the hot path (the archive's
  // reads are bench/archive.ts's).
  await op("PUT", `/companies/${company.id}/signal-hot-window`, { days: 36_500 });
  const [key] = await op<{ key: string }[]>("POST", `/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: ["signals.read"],
      // The bench must measure the query, not wait on the rate limiter.
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  const [machine] = await op<{ id: number; uuid: string }[]>(
    "POST",
    `/companies/${company.id}/machines`,
    [{ name: "Bench press" }],
  );
  if (!key || !machine) throw new Error("no key or machine");
  const [signal] = await op<{ publicId: string }[]>("POST", `/machines/${machine.id}/signals`, [
    { name: "power", displayName: "Power (bench)", kind: "analog" },
  ]);
  if (!signal) throw new Error("no signal");
  const seed: Seed = {
    version: SEED_VERSION,
    companyId: company.id,
    key: key.key,
    machineUuid: machine.uuid,
    publicId: signal.publicId,
    samples: SERIES_SECONDS,
  };

  const chunks = Math.ceil(SERIES_SECONDS / CHUNK);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < chunks) {
      const c = next;
      next += 1;
      const first = c * CHUNK;
      const count = Math.min(CHUNK, SERIES_SECONDS - first);
      const timestamps: string[] = [];
      const values: number[] = [];
      for (let i = first; i < first + count; i += 1) {
        timestamps.push(iso(SERIES_START + i * 1000));
        values.push(valueAt(i));
      }
      const { accepted } = await op<{ accepted: number }>(
        "POST",
        `/signals/${seed.publicId}/samples`,
        { timestamps, values },
      );
      if (accepted !== count) throw new Error(`chunk ${c}: accepted ${accepted} of ${count}`);
      done += 1;
      if (done % 10 === 0 || done === chunks) {
        const elapsed = (performance.now() - started) / 1000;
        process.stdout.write(`  ingested ${done}/${chunks} calls (${elapsed.toFixed(0)} s)\n`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const stored = await storedSamples(seed);
  if (stored !== SERIES_SECONDS)
    throw new Error(`stored ${stored} samples, expected ${SERIES_SECONDS}`);
  mkdirSync(dirname(MARKER), { recursive: true });
  writeFileSync(MARKER, `${JSON.stringify(seed, null, 2)}\n`);
  return { seed, seededNow: true, seconds: (performance.now() - started) / 1000 };
}

interface Case {
  label: string;
  points: number;
  query: string;
}

function cases(): Case[] {
  const end = SERIES_START + SERIES_SECONDS * 1000;
  const fourteen = `start_time=${iso(SERIES_START)}&end_time=${iso(end)}`;
  // Two hours in the middle of the series, at 1 s.
  const twoFrom = SERIES_START + 7 * 86_400_000 + 12 * 3_600_000;
  const two = `start_time=${iso(twoFrom)}&end_time=${iso(twoFrom + 2 * 3_600_000)}`;
  const out: Case[] = [];
  for (const fn of ["avg", "max"]) {
    out.push(
      {
        label: `14 d, 3 min, ${fn}`,
        points: 6720,
        query: `${fourteen}&agg_unit=m&agg_period=3&agg_function=${fn}`,
      },
      {
        label: `14 d, 1 h, ${fn}`,
        points: 336,
        query: `${fourteen}&agg_unit=h&agg_function=${fn}`,
      },
      { label: `2 h, 1 s, ${fn}`, points: 7200, query: `${two}&agg_unit=s&agg_function=${fn}` },
    );
  }
  return out;
}

/**
 * The judged timings ask for an uncompressed answer. Response compression is the work of
 * Cloudflare's front line (FL), the proxy in front of every Worker, not of the Worker: a
 * Worker's answer leaves it uncompressed and FL gzips it for a client that accepts gzip.
 * Locally, Miniflare's entry worker emulates FL (`ensureAcceptableEncoding` in its
 * `entry.worker.js`), so a gzip client also times the compression of the answer (about 5 ms
 * for 441 KiB here) and its own inflation (about 5 ms more in Node): about 10 ms that no
 * design of this API changes. The gzip time is still measured and printed beside.
 */
const IDENTITY = { "accept-encoding": "identity" };
const GZIP = { "accept-encoding": "gzip, deflate" };

/**
 * Times one GET: request sent to body fully read (inflated when it came compressed).
 *
 * @returns ms, the body size in bytes, and `queryMs` when the body carries it (diagnostics).
 */
async function timeGet(path: string, headers: Record<string, string>) {
  const started = performance.now();
  const res = await fetch(`${BASE}${path}`, { headers });
  const text = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`GET ${path} -> ${res.status}: ${text}`);
  const queryMs = (JSON.parse(text) as { queryMs?: number }).queryMs;
  return { ms, bytes: new TextEncoder().encode(text).byteLength, queryMs };
}

async function measure(path: string, headers: Record<string, string>) {
  for (let i = 0; i < WARMUPS; i += 1) await timeGet(path, headers);
  const times: number[] = [];
  const queryTimes: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i += 1) {
    const r = await timeGet(path, headers);
    times.push(r.ms);
    if (r.queryMs !== undefined) queryTimes.push(r.queryMs);
    bytes = r.bytes;
  }
  times.sort((a, b) => a - b);
  queryTimes.sort((a, b) => a - b);
  return {
    median: percentile(times, 50),
    p99: percentile(times, 99),
    queryMedian: queryTimes.length > 0 ? percentile(queryTimes, 50) : Number.NaN,
    bytes,
  };
}

/** Fails when the rollup answer and the raw answer differ (timestamps exact, values 1e-9). */
function assertSame(label: string, a: Point[], b: Point[]): void {
  if (a.length !== b.length) throw new Error(`${label}: ${a.length} points vs ${b.length} raw`);
  a.forEach((p, i) => {
    const q = b[i];
    const tolerance = 1e-9 * Math.max(1, Math.abs(q?.value ?? 0));
    if (!q || p.timestamp !== q.timestamp || Math.abs(p.value - q.value) > tolerance) {
      throw new Error(`${label}: point ${i} differs: ${JSON.stringify(p)} vs ${JSON.stringify(q)}`);
    }
  });
}

const fmt = (ms: number) => ms.toFixed(1);

async function main(): Promise<void> {
  console.log(`Applying migrations to ${PERSIST_DIR} ...`);
  applyMigrations(PERSIST_DIR);
  console.log(`Starting wrangler dev on ${BASE} ...`);
  const child = startWrangler();
  const stop = stopWhenThisProcessEnds(child);
  try {
    await waitForHealthz(BASE, child);
    console.log("Seeding (or reusing) 14 days of 1 Hz samples ...");
    const { seed, seededNow, seconds } = await ensureSeed();
    console.log(
      seededNow
        ? `Seeded ${SERIES_SECONDS} samples in ${seconds.toFixed(0)} s.`
        : `Reusing the ${SERIES_SECONDS} samples seeded earlier.`,
    );
    const publicHeaders = { "x-api-key": seed.key };
    const operatorHeaders = { authorization: `Bearer ${TOKEN}` };
    const rows: string[] = [];
    const misses: string[] = [];
    for (const c of cases()) {
      const publicPath = `/v1/machines/${seed.machineUuid}/signals/${seed.publicId}?${c.query}`;
      const rawPath = `/operator/v1/signals/${seed.publicId}/aggregate?${c.query}&strategy=raw`;
      const rollupAnswer = await publicData(seed, c.query);
      const rawRes = await http("GET", rawPath, { headers: operatorHeaders });
      if (rawRes.status === 404) {
        throw new Error(
          "The operator diagnostics route is not mounted: add " +
            '`app.route("/", operatorDiagnosticsRoutes);` to src/operator/index.ts',
        );
      }
      const rawAnswer = (await rawRes.json()) as { data: Point[] };
      if (rollupAnswer.data.length !== c.points) {
        throw new Error(`${c.label}: ${rollupAnswer.data.length} points, expected ${c.points}`);
      }
      assertSame(c.label, rollupAnswer.data, rawAnswer.data);

      process.stdout.write(`  ${c.label}: public ... `);
      const rollups = await measure(publicPath, { ...publicHeaders, ...IDENTITY });
      process.stdout.write(`${fmt(rollups.median)} ms; gzip ... `);
      const gzipped = await measure(publicPath, { ...publicHeaders, ...GZIP });
      process.stdout.write(`${fmt(gzipped.median)} ms; diagnostics rollups ... `);
      const diag = await measure(rawPath.replace("strategy=raw", "strategy=rollups"), {
        ...operatorHeaders,
        ...IDENTITY,
      });
      process.stdout.write(`${fmt(diag.median)} ms; raw ... `);
      const raw = await measure(rawPath, { ...operatorHeaders, ...IDENTITY });
      process.stdout.write(`${fmt(raw.median)} ms\n`);
      const speedup = raw.median / rollups.median;
      rows.push(
        `| ${c.label} | ${c.points} | ${fmt(rollups.median)} | ${fmt(rollups.p99)} | ${fmt(gzipped.median)} | ${fmt(diag.median)} (${fmt(diag.queryMedian)}) | ${fmt(raw.median)} (${fmt(raw.queryMedian)}) | ${fmt(raw.p99)} | ${speedup.toFixed(1)}x | ${(rollups.bytes / 1024).toFixed(0)} KiB |`,
      );
      if (rollups.median >= 50)
        misses.push(`${c.label}: median ${fmt(rollups.median)} ms >= 50 ms`);
      if (speedup < 5) misses.push(`${c.label}: ${speedup.toFixed(1)}x faster than raw (< 5x)`);
    }
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const table = [
      "| Query | Points | Public median ms | Public p99 ms | Public median ms, gzip | Diagnostics rollups median ms (store ms) | Raw decode median ms (store ms) | Raw p99 ms | Speed-up (public vs raw, median) | Response |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows,
    ].join("\n");
    const report = [
      "# Signal-data benchmark",
      "",
      `Generated by \`npm run bench\` on ${new Date().toISOString()}: local wrangler dev server, inspector off` +
        ` (Node ${process.version}, ${cpu}, ${cpus().length} CPUs, ${(totalmem() / 2 ** 30).toFixed(0)} GiB).`,
      `One signal, ${SERIES_SECONDS.toLocaleString("en-US")} samples (14 days at 1 Hz). ` +
        `${RUNS} sequential runs per query after ${WARMUPS} warm-ups; times are client-side, ` +
        "request to last body byte over local HTTP, asking for an uncompressed answer " +
        "(`Accept-Encoding: identity`) except in the gzip column.",
      "",
      "- Median, p99: the public route (`GET /v1/machines/{machine_uuid}/signals/{public_id}`), " +
        "which reads the machine's `SignalStore`: hour or minute rollups of whole hours, samples at the edges.",
      "- Raw decode: the same query decoding every raw sample of the window " +
        "(`GET /operator/v1/signals/{public_id}/aggregate?strategy=raw`, the naive design). " +
        "Both answers are compared point by point before timing.",
      "- A 1 s bucket is finer than every rollup, so the 2 h at 1 s query is a raw scan of " +
        "7,200 samples in both columns: its speed-up is 1x by construction.",
      "- Public median, gzip: the same requests with `Accept-Encoding: gzip, deflate` (Node's " +
        "`fetch` default). On Cloudflare the front-line proxy compresses a Worker's answer after " +
        "the Worker; locally Miniflare emulates it in the same process, so this column adds " +
        "the compression and the client's inflation of the body. The targets are judged on " +
        "the uncompressed time, which is the API's own.",
      "- Diagnostics rollups: the rollup plan through `SignalStore.aggregate`, " +
        "on the operator route (no API-key lookup, no rate limiter). " +
        "In parentheses: median time of the store call, measured in the Worker.",
      "- Memory: the aggregation runs in the machine's `SignalStore` object; the Worker receives " +
        "only the result points (at most 10,000), never raw samples. Response is the JSON body size.",
      "",
      table,
      "",
      misses.length === 0
        ? "Targets (median < 50 ms, >= 5x faster than raw): all met."
        : `Targets missed:\n\n${misses.map((m) => `- ${m}`).join("\n")}`,
      "",
    ].join("\n");
    console.log(`\n${report}`);
    writeFileSync(RESULTS, report);
    // The project's formatter owns markdown too: keep `npm run lint` green after a run.
    spawnSync(process.execPath, [BIOME_BIN, "format", "--write", RESULTS], {
      cwd: ROOT,
      stdio: "ignore",
    });
    console.log(`Written to ${RESULTS}`);
    if (misses.length > 0) process.exitCode = 1;
  } finally {
    stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
