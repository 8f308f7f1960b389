/**
 * `npm run load`: mixed traffic at a fixed rate against a local Worker.
 *
 * 1. builds a frozen bundle of the Worker, applies the migrations to a database
 *    of its own (`.wrangler/load`, emptied first) and starts `wrangler dev` on
 *    port LOAD_PORT (8795), with the per-credential rate limiter on (the real
 *    pipeline); wrangler's output goes to `.wrangler/load/wrangler.log`;
 * 2. seeds LOAD_COMPANIES (3) companies through the operator and public APIs
 *    (bench/lib/plant.ts): 4 machines each with `count` and `power` signals
 *    sampled every minute since yesterday 00:00 UTC, 3 SKUs with nominal speeds,
 *    a 24-hour shift (so realtime writes are accepted), stops and production
 *    logs on the previous days, and one key per company holding every scope and
 *    a limit of 1,000,000 requests a minute (the limiter runs, never refuses);
 * 3. runs one autocannon instance per route, all at once for LOAD_DURATION
 *    (60) seconds, at LOAD_RATE (50) requests per second in total, split by the
 *    weights below; each request goes to the next company (key) and machine in
 *    turn, and creates carry unique bodies. autocannon's rate is a quota per
 *    second and connection, so the instances start spread over the first second
 *    to keep their bursts apart;
 * 4. prints a markdown table (target and measured throughput, p50/p99/max of the
 *    2XX latencies, status counts, connection errors and time-outs per route),
 *    checks that every acknowledged SKU and production-log create is stored (the
 *    companies' totals through the search routes), and writes it all to
 *    bench/load-results.md. Exits 1 when any request failed, timed out, got an
 *    unexpected status or a 5XX, or an acknowledged create is missing.
 *
 * Latencies: autocannon corrects for coordinated omission with an expected
 * interval of `ceil(1 / rate)`, which is 1 ms at any rate >= 1/s, so it would
 * add synthetic samples from 1 ms up to every measured value; the correction is
 * switched off (`ignoreCoordinatedOmission`) and the table shows measured times.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus } from "node:os";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import {
  type LocalWorker,
  prepareWorker,
  publicCall,
  sleep,
  startWorker,
  stopWorker,
} from "./lib/local-worker";
import { DAY_MS, type SeededCompany, seedCompany, todayStart } from "./lib/plant";

const num = (name: string, fallback: number) => envNumber(name, fallback, { positive: true });
const RATE = num("LOAD_RATE", 50);
const DURATION = num("LOAD_DURATION", 60);
const PORT = num("LOAD_PORT", 8795);
const COMPANIES = num("LOAD_COMPANIES", 3);
const MACHINES = 4;
const TOKEN = "load-operator-token";
const RESULTS = join(ROOT, "bench", "load-results.md");
const PATHS = {
  buildDir: ".wrangler/load-build",
  persistDir: ".wrangler/load",
  logFile: join(ROOT, ".wrangler", "load-wrangler.log"),
};

// The subset of autocannon's programmatic API used here (it ships no types).
interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  onResponse?: (status: number, body: string) => void;
}
interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  overallRate: number;
  ignoreCoordinatedOmission: boolean;
  timeout: number;
  requests: AutocannonRequest[];
}
interface AutocannonResult {
  duration: number;
  requests: { total: number };
  latency: { p50: number; p99: number; max: number };
  statusCodeStats: Record<string, { count: number }>;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

/** One request to send: what a route's generator returns. */
interface Call {
  method: "GET" | "POST";
  path: string;
  key: string;
  body?: unknown;
}

/** A route of the mix. */
interface Route {
  /** Method and path template, as the table shows it. */
  name: string;
  kind: "read" | "search" | "signal query" | "realtime write" | "create" | "report";
  /** Share of LOAD_RATE, in twentieths. */
  weight: number;
  /** The one status a success has. */
  expected: number;
  /** The n-th request (n from 0). */
  next: (n: number) => Call;
}

/** What was measured for one route. */
interface RouteResult {
  route: Route;
  rate: number;
  result: AutocannonResult;
  /** Answers whose status was not `route.expected`, by status. */
  unexpected: Map<number, number>;
  /** First bodies of unexpected answers, for the report. */
  samples: string[];
}

/** autocannon, loaded with `require` (a CommonJS package without types). */
function loadAutocannon(): Autocannon {
  return createRequire(import.meta.url)("autocannon") as Autocannon;
}

/** The traffic mix over the seeded companies (rotating key, then machine). */
function routes(companies: readonly SeededCompany[], runId: string): Route[] {
  const today = todayStart();
  const iso = (ms: number) => new Date(ms).toISOString();
  const pick = (n: number) => {
    const company = companies[n % companies.length] as SeededCompany;
    const round = Math.floor(n / companies.length);
    const machine = company.machines[round % company.machines.length];
    if (!machine) throw new Error(`company ${company.id} has no machines`);
    return { company, machine, round };
  };
  const week = { between: { start: iso(today - 7 * DAY_MS), end: iso(today + DAY_MS) } };
  // Creates go on days before today: the running shift instance is today's (00:00 UTC).
  const logBase = today - 20 * DAY_MS;
  return [
    {
      name: "GET /v1/machines",
      kind: "read",
      weight: 2,
      expected: 200,
      next: (n) => ({ method: "GET", path: "/v1/machines", key: pick(n).company.key }),
    },
    {
      name: "GET /v1/machines/{machine_uuid}/signals",
      kind: "read",
      weight: 2,
      expected: 200,
      next: (n) => {
        const { company, machine } = pick(n);
        const language = n % 2 === 0 ? "en" : "es";
        return {
          method: "GET",
          path: `/v1/machines/${machine.uuid}/signals?language=${language}`,
          key: company.key,
        };
      },
    },
    {
      name: "POST /v1/skus/filters",
      kind: "search",
      weight: 2,
      expected: 200,
      next: (n) => ({
        method: "POST",
        path: "/v1/skus/filters",
        key: pick(n).company.key,
        body:
          n % 2 === 0
            ? { names: { search: "juice" }, limit: 20 }
            : { skus: { search: "JU" }, unit: { search: "bott" }, page: 1, limit: 50 },
      }),
    },
    {
      name: "POST /v1/production-logs/filters",
      kind: "search",
      weight: 2,
      expected: 200,
      next: (n) => {
        const { company, machine } = pick(n);
        return {
          method: "POST",
          path: "/v1/production-logs/filters",
          key: company.key,
          body: { machines: { include: [machine.id] }, start: { before: iso(today) }, limit: 20 },
        };
      },
    },
    {
      name: "GET /v1/machines/{machine_uuid}/signals/{public_id}",
      kind: "signal query",
      weight: 4,
      expected: 200,
      next: (n) => {
        const { company, machine, round } = pick(n);
        const signal = machine.signals[round % machine.signals.length];
        // Yesterday by the hour, or the last six hours by 5 minutes, transposed.
        const query =
          n % 2 === 0
            ? `start_time=${iso(today - DAY_MS)}&end_time=${iso(today)}&agg_unit=h&agg_function=avg`
            : `start_time=${iso(Date.now() - 6 * 3_600_000)}&end_time=${iso(Date.now())}` +
              "&agg_unit=m&agg_period=5&agg_function=max&transpose=true";
        return {
          method: "GET",
          path: `/v1/machines/${machine.uuid}/signals/${signal}?${query}`,
          key: company.key,
        };
      },
    },
    {
      name: "POST /v1/realtime/{machine_id}/sku",
      kind: "realtime write",
      weight: 2,
      expected: 204,
      next: (n) => {
        const { company, machine, round } = pick(n);
        const sku = company.skus[round % company.skus.length];
        return {
          method: "POST",
          path: `/v1/realtime/${machine.id}/sku`,
          key: company.key,
          body: { skuId: sku?.id, simpleWorkOrderName: `WO-${round % 5}`, quantity: 100 + n },
        };
      },
    },
    {
      name: "POST /v1/skus",
      kind: "create",
      weight: 1,
      expected: 200,
      next: (n) => ({
        method: "POST",
        path: "/v1/skus",
        key: pick(n).company.key,
        body: [{ sku: `LOAD-${runId}-${n}`, name: `Load SKU ${n}`, description: "load run" }],
      }),
    },
    {
      name: "POST /v1/production-logs",
      kind: "create",
      weight: 1,
      expected: 200,
      next: (n) => {
        const { company, machine, round } = pick(n);
        const start = logBase + n * 120_000;
        return {
          method: "POST",
          path: "/v1/production-logs",
          key: company.key,
          body: [
            {
              machine: { id: machine.id },
              sku: { id: company.skus[round % company.skus.length]?.id },
              start: iso(start),
              end: iso(start + 60_000),
              count: 25 + (n % 10),
            },
          ],
        };
      },
    },
    {
      name: "POST /v1/reports/metrics",
      kind: "report",
      weight: 2,
      expected: 200,
      next: (n) => {
        const { company, machine } = pick(n);
        return {
          method: "POST",
          path: "/v1/reports/metrics",
          key: company.key,
          body:
            n % 2 === 0
              ? { startDate: week, limit: 20 }
              : { machines: { include: [machine.id] }, startDate: week, limit: 10 },
        };
      },
    },
    {
      name: "POST /v1/reports/stops",
      kind: "report",
      weight: 2,
      expected: 200,
      next: (n) => {
        const { company, machine } = pick(n);
        return {
          method: "POST",
          path: "/v1/reports/stops",
          key: company.key,
          body: { machines: { include: [machine.id] }, startDate: week, limit: 50 },
        };
      },
    },
  ];
}

/** Requests per second of each route: LOAD_RATE split by weight, at least 1. */
function rates(list: readonly Route[]): number[] {
  const total = list.reduce((sum, r) => sum + r.weight, 0);
  return list.map((r) => Math.max(1, Math.round((RATE * r.weight) / total)));
}

/** Runs every route at once; returns what each measured. */
async function runMix(base: string, list: readonly Route[]): Promise<RouteResult[]> {
  const autocannon = loadAutocannon();
  const perRoute = rates(list);
  const spacing = 1000 / list.length;
  return Promise.all(
    list.map(async (route, i) => {
      const rate = perRoute[i] ?? 1;
      const unexpected = new Map<number, number>();
      const samples: string[] = [];
      let n = 0;
      await sleep(i * spacing);
      const result = await autocannon({
        url: base,
        // Enough connections that a slow answer does not eat the route's quota.
        connections: Math.max(1, Math.ceil(rate / 3)),
        duration: DURATION,
        overallRate: rate,
        ignoreCoordinatedOmission: true,
        timeout: 10,
        requests: [
          {
            setupRequest: (request) => {
              const call = route.next(n);
              n += 1;
              const headers: Record<string, string> = { "x-api-key": call.key };
              if (call.body !== undefined) headers["content-type"] = "application/json";
              return {
                ...request,
                method: call.method,
                path: call.path,
                headers,
                body: call.body === undefined ? "" : JSON.stringify(call.body),
              };
            },
            onResponse: (status, body) => {
              if (status === route.expected) return;
              unexpected.set(status, (unexpected.get(status) ?? 0) + 1);
              if (samples.length < 3) samples.push(`${status} ${body.slice(0, 300)}`);
            },
          },
        ],
      });
      return { route, rate, result, unexpected, samples };
    }),
  );
}

/** Counts a status class (2, 4, 5) in autocannon's per-status counts. */
function statusClass(result: AutocannonResult, hundreds: number): number {
  return Object.entries(result.statusCodeStats)
    .filter(([code]) => Math.floor(Number(code) / 100) === hundreds)
    .reduce((sum, [, stats]) => sum + stats.count, 0);
}

/** The companies' SKU and past production-log totals, through the search routes. */
async function storedTotals(
  base: string,
  companies: readonly SeededCompany[],
): Promise<{ skus: number; logs: number }> {
  const before = new Date(todayStart()).toISOString();
  let skus = 0;
  let logs = 0;
  for (const company of companies) {
    const s = await publicCall<{ totalCount: number }>(
      base,
      company.key,
      "POST",
      "/v1/skus/filters",
      { limit: 1 },
    );
    const l = await publicCall<{ totalCount: number }>(
      base,
      company.key,
      "POST",
      "/v1/production-logs/filters",
      { start: { before }, limit: 1 },
    );
    skus += s.totalCount;
    logs += l.totalCount;
  }
  return { skus, logs };
}

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT }).toString().trim();
  } catch {
    return "unknown";
  }
}

function formatTable(
  measured: readonly RouteResult[],
  check: { created: { skus: number; logs: number }; stored: { skus: number; logs: number } },
): { text: string; failed: boolean } {
  const fmt = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : "-");
  let failed = false;
  const rows = measured.map(({ route, rate, result, unexpected }) => {
    const seconds = result.duration || DURATION;
    const ok = statusClass(result, 2);
    const c4 = statusClass(result, 4);
    const c429 = result.statusCodeStats["429"]?.count ?? 0;
    const c5 = statusClass(result, 5);
    const wrong = [...unexpected.values()].reduce((a, b) => a + b, 0);
    if (c5 > 0 || wrong > 0 || result.errors > 0 || result.timeouts > 0) failed = true;
    const total = ok + c4 + c5;
    return (
      `| ${route.name} | ${route.kind} | ${rate} | ${(total / seconds).toFixed(1)} | ${total} | ` +
      `${fmt(result.latency.p50)} | ${fmt(result.latency.p99)} | ${fmt(result.latency.max)} | ` +
      `${ok} | ${c4 - c429} | ${c429} | ${c5} | ${result.errors} | ${result.timeouts} |`
    );
  });
  const sum = (f: (r: RouteResult) => number) => measured.reduce((a, r) => a + f(r), 0);
  const totalOk = sum((r) => statusClass(r.result, 2));
  const total = sum(
    (r) => statusClass(r.result, 2) + statusClass(r.result, 4) + statusClass(r.result, 5),
  );
  const c5 = sum((r) => statusClass(r.result, 5));
  const c429 = sum((r) => r.result.statusCodeStats["429"]?.count ?? 0);
  const errors = sum((r) => r.result.errors);
  const timeouts = sum((r) => r.result.timeouts);
  const wrong = sum((r) => [...r.unexpected.values()].reduce((a, b) => a + b, 0));
  // Stored may exceed acknowledged: autocannon does not count the answers still in
  // flight when the duration ends, though the Worker completes them.
  const lostSkus = Math.max(0, check.created.skus - check.stored.skus);
  const lostLogs = Math.max(0, check.created.logs - check.stored.logs);
  if (lostSkus > 0 || lostLogs > 0) failed = true;
  const problems = measured.filter((r) => r.samples.length > 0);
  const target = measured.reduce((a, r) => a + r.rate, 0);
  // autocannon's quota is per second: a run that keeps up lands within a few % of it.
  const sustained = total / DURATION >= 0.9 * target;
  const lines = [
    "# Load run",
    "",
    `${new Date().toISOString().slice(0, 16)}Z, commit ${commit()} (working tree as it was), ` +
      `${cpus().length} CPU cores; local \`wrangler dev\` (frozen bundle, rate limiter on). ` +
      `${COMPANIES} companies x ${MACHINES} machines, one key each; autocannon, one instance per ` +
      `route, ${DURATION} s at a fixed ${measured.reduce((a, r) => a + r.rate, 0)} requests/s in total ` +
      "(`LOAD_RATE`). Latencies are of 2XX answers, in ms, without coordinated-omission correction.",
    "",
    "| route | kind | target req/s | measured req/s | requests | p50 ms | p99 ms | max ms | 2XX | 4XX (not 429) | 429 | 5XX | errors | time-outs |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    `| **all** | | ${measured.reduce((a, r) => a + r.rate, 0)} | ` +
      `${(total / DURATION).toFixed(1)} | ${total} | | | | ${totalOk} | ` +
      `${sum((r) => statusClass(r.result, 4)) - c429} | ${c429} | ${c5} | ${errors} | ${timeouts} |`,
    "",
    `Unexpected statuses: ${wrong}. Creates acknowledged (200 counted by autocannon) / stored ` +
      `(new rows found through the search routes afterwards): SKUs ${check.created.skus} / ` +
      `${check.stored.skus}, production logs ${check.created.logs} / ${check.stored.logs}; ` +
      `missing: ${lostSkus + lostLogs} (stored can exceed acknowledged by the requests in ` +
      "flight when autocannon stopped counting).",
    "",
    `Result: ${failed ? "**FAILED**" : "passed"} (target: 0 errors, 0 time-outs, 0 5XX, every ` +
      "answer the route's success status, every acknowledged create stored).",
    "",
    sustained
      ? `Rate: sustained (${(total / DURATION).toFixed(1)} of ${target} requests/s).`
      : `Rate: **not sustained** (${(total / DURATION).toFixed(1)} of ${target} requests/s): the ` +
        "Worker (or the machine) is saturated, and the latencies include the wait of requests " +
        "queued behind slower ones. Lower `LOAD_RATE` to measure below saturation.",
    "",
  ];
  if (problems.length > 0) {
    lines.push("First unexpected answers:", "");
    for (const p of problems) {
      for (const s of p.samples) lines.push(`- ${p.route.name}: \`${s.replaceAll("`", "'")}\``);
    }
    lines.push("");
  }
  return { text: lines.join("\n"), failed };
}

async function main(): Promise<void> {
  console.error("Building the Worker and applying the migrations...");
  prepareWorker(PATHS);
  let worker: LocalWorker | undefined;
  const stop = async () => {
    if (worker) await stopWorker(worker);
  };
  process.once("SIGINT", () => {
    void stop().then(() => process.exit(130));
  });
  try {
    worker = await startWorker({
      paths: PATHS,
      port: PORT,
      vars: { OPERATOR_TOKEN: TOKEN, RATE_LIMIT_ENABLED: "true" },
    });
    console.error(`Worker on ${worker.base}; seeding ${COMPANIES} companies...`);
    const companies: SeededCompany[] = [];
    for (let c = 0; c < COMPANIES; c += 1) {
      companies.push(
        await seedCompany(worker.base, TOKEN, {
          name: `Load plant ${c + 1}`,
          machines: MACHINES,
          pastDays: 7,
          stopsPerDay: 6,
          logsPerDay: 4,
          sampleDays: 1,
        }),
      );
    }
    const before = await storedTotals(worker.base, companies);
    const runId = Date.now().toString(36);
    const list = routes(companies, runId);
    console.error(`Running ${list.length} routes for ${DURATION} s at ${RATE} requests/s...`);
    const measured = await runMix(worker.base, list);
    const after = await storedTotals(worker.base, companies);
    const acknowledged = (name: string) =>
      measured.find((m) => m.route.name === name)?.result.statusCodeStats["200"]?.count ?? 0;
    const { text, failed } = formatTable(measured, {
      created: {
        skus: acknowledged("POST /v1/skus"),
        logs: acknowledged("POST /v1/production-logs"),
      },
      stored: { skus: after.skus - before.skus, logs: after.logs - before.logs },
    });
    console.log(text);
    writeFileSync(RESULTS, text);
    console.error(`Written to ${RESULTS}; wrangler's output is in ${PATHS.logFile}.`);
    if (failed) process.exitCode = 1;
  } finally {
    await stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
