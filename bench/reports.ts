/**
 * Benchmark of the reports on the real plant data: `npx tsx bench/reports.ts`.
 *
 * 1. starts from an empty database of its own (`.wrangler/bench-reports-state`, deleted
 *    first; never the demo database), applies the migrations and runs `wrangler dev` on
 *    it (port 8789, or BENCH_REPORTS_PORT);
 * 2. loads Demo Plant A through the demo seed itself (scripts/lib/demo-seed.ts: machines,
 *    samples, SKUs, nominal speeds, shifts, production logs, stops), then issues a
 *    `reports.read` key with a limit high enough never to throttle the runs;
 * 3. times, after 3 warm-ups, BENCH_RUNS (default 30) sequential calls of each request:
 *    the metrics report over every shift instance of the data set (189 rows: 3 machines x
 *    63 instances, 2022-09-01 00:00 to 2022-09-21 22:00 Europe/Rome) at `limit=100`,
 *    page 1 and page 2, both pages one after the other, and the first page of the stops
 *    report (`limit=100`, of 186 stops);
 * 4. prints a markdown table (median and p99, client-side: request sent to the last body
 *    byte over local HTTP) and whether the median target (< 100 ms) is met;
 * 5. stops wrangler, also on error or Ctrl-C.
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { DEMO_PLANT_A } from "../scripts/lib/demo-data";
import {
  PLANT_A_SHIFTS,
  PLANT_A_TIMEZONE,
  wallClockInstants,
} from "../scripts/lib/demo-operations";
import { seedDemo } from "../scripts/lib/demo-seed";
import { ok } from "../scripts/lib/http";
import { connectOperator } from "../scripts/lib/operator-api";
import { envNumber, ROOT } from "./lib/bench-env";
import { issueBenchKey } from "./lib/bench-key";
import { percentile } from "./lib/local-worker";
import {
  applyMigrations,
  spawnDevServer,
  stopWhenThisProcessEnds,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_REPORTS_PORT", 8789);
const BASE = `http://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-reports-state";
const TOKEN = "bench-reports-token";
const RUNS = envNumber("BENCH_RUNS", 30);
const WARMUPS = 3;
const TARGET_MEDIAN_MS = 100;
const LIMIT = 100;

/**
 * The instance starts of the data set: from the night shift holding the first row
 * (2022-08-31 22:00 Rome = 20:00 UTC) to the afternoon shift holding the last one
 * (2022-09-21 14:00 Rome = 12:00 UTC), both included.
 */
const FIRST_START = "2022-08-31T20:00:00Z";
const LAST_START = "2022-09-21T12:00:00Z";
const MACHINES = 3;

/** The report body of one metrics page over the whole data set. */
const metricsBody = (page: number) => ({
  startDate: { between: { start: FIRST_START, end: LAST_START } },
  limit: LIMIT,
  page,
});

/** Starts the dev server on the bench port and database, in its own process group. */
function startWrangler(): ChildProcess {
  // wrangler's dev server with the DevTools inspector and file watching off (see
  // bench/lib/dev-server.ts).
  return spawnDevServer({ port: PORT, persistTo: PERSIST_DIR, vars: [`OPERATOR_TOKEN:${TOKEN}`] });
}

/** True when something answers 200 on GET /openapi.json of the bench port. */
async function answers(): Promise<boolean> {
  try {
    const res = await fetch(`${BASE}/openapi.json`, { signal: AbortSignal.timeout(2_000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** A paged report answer (only what the bench checks). */
interface Page {
  totalCount: number;
  totalPages: number;
  metrics?: unknown[];
  stops?: unknown[];
}

/**
 * POSTs a report body and times it: request sent to body fully read.
 *
 * @returns the time in ms and the parsed page.
 * @throws Error on a non-2XX answer.
 */
async function timePost(path: string, key: string, body: unknown) {
  const started = performance.now();
  const res = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status}: ${text}`);
  return { ms, page: JSON.parse(text) as Page };
}

/** Times `run` after the warm-ups; returns median and p99 in ms. */
async function measure(run: () => Promise<number>) {
  for (let i = 0; i < WARMUPS; i += 1) await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) times.push(await run());
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p99: percentile(times, 99) };
}

/** The row count a page must have, and the total, or an error naming the request. */
function expectRows(
  label: string,
  rows: unknown[] | undefined,
  n: number,
  total: number,
  page: Page,
) {
  if ((rows?.length ?? -1) !== n || page.totalCount !== total) {
    throw new Error(
      `${label}: ${rows?.length} rows of ${page.totalCount}, expected ${n} of ${total}`,
    );
  }
}

async function main(): Promise<void> {
  if (await answers()) {
    throw new Error(`Something already answers on ${BASE}: set BENCH_REPORTS_PORT to a free port.`);
  }
  rmSync(join(ROOT, PERSIST_DIR), { recursive: true, force: true });
  console.log(`Applying migrations to ${PERSIST_DIR} ...`);
  applyMigrations(PERSIST_DIR);
  console.log(`Starting wrangler dev on ${BASE} ...`);
  const child = startWrangler();
  const stop = stopWhenThisProcessEnds(child);
  try {
    await waitForHealthz(BASE, child);
    const client = connectOperator(BASE, TOKEN);
    const seedStarted = performance.now();
    await seedDemo(client, (line) => console.log(line), {
      companies: [DEMO_PLANT_A],
      saveKeys: false,
    });
    console.log(
      `Seeded Demo Plant A in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s.`,
    );
    const company = ok("GET", await client.api.GET("/companies")).find(
      (c) => c.name === DEMO_PLANT_A,
    );
    if (!company) throw new Error(`No company "${DEMO_PLANT_A}" after the seed`);
    const key = await issueBenchKey(client, company.id, ["reports.read"], {
      name: "bench-reports",
    });

    // Every instance start from FIRST_START to LAST_START, both included, per machine.
    const from = Date.parse(FIRST_START);
    const to = Date.parse(LAST_START);
    const starts = wallClockInstants(
      PLANT_A_SHIFTS.map((shift) => shift.startTime),
      PLANT_A_TIMEZONE,
      from - 1,
      to + 1,
    );
    const total = starts.length * MACHINES;
    const page1 = await timePost("/v1/reports/metrics", key, metricsBody(1));
    expectRows("metrics page 1", page1.page.metrics, Math.min(LIMIT, total), total, page1.page);
    const page2 = await timePost("/v1/reports/metrics", key, metricsBody(2));
    expectRows("metrics page 2", page2.page.metrics, total - LIMIT, total, page2.page);
    const stops = await timePost("/v1/reports/stops", key, { limit: LIMIT });
    const stopsTotal = stops.page.totalCount;
    expectRows(
      "stops page 1",
      stops.page.stops,
      Math.min(LIMIT, stopsTotal),
      stopsTotal,
      stops.page,
    );

    const cases: { label: string; rows: number; run: () => Promise<number> }[] = [
      {
        label: `Metrics report, page 1 of ${page1.page.totalPages} (limit ${LIMIT})`,
        rows: LIMIT,
        run: async () => (await timePost("/v1/reports/metrics", key, metricsBody(1))).ms,
      },
      {
        label: `Metrics report, page 2 of ${page1.page.totalPages} (limit ${LIMIT})`,
        rows: total - LIMIT,
        run: async () => (await timePost("/v1/reports/metrics", key, metricsBody(2))).ms,
      },
      {
        label: "Metrics report, all instances (pages 1 and 2 in a row)",
        rows: total,
        run: async () =>
          (await timePost("/v1/reports/metrics", key, metricsBody(1))).ms +
          (await timePost("/v1/reports/metrics", key, metricsBody(2))).ms,
      },
      {
        label: `Stops report, page 1 (limit ${LIMIT}, of ${stopsTotal} stops)`,
        rows: Math.min(LIMIT, stopsTotal),
        run: async () => (await timePost("/v1/reports/stops", key, { limit: LIMIT })).ms,
      },
    ];
    const lines: string[] = [];
    const misses: string[] = [];
    for (const c of cases) {
      process.stdout.write(`  ${c.label} ... `);
      const { median, p99 } = await measure(c.run);
      process.stdout.write(`${median.toFixed(1)} ms\n`);
      lines.push(`| ${c.label} | ${c.rows} | ${median.toFixed(1)} | ${p99.toFixed(1)} |`);
      // The target is per request; the two-page line is for information.
      if (!c.label.includes("all instances") && median >= TARGET_MEDIAN_MS) {
        misses.push(`${c.label}: median ${median.toFixed(1)} ms >= ${TARGET_MEDIAN_MS} ms`);
      }
    }
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    console.log(
      [
        "",
        "# Reports benchmark",
        "",
        `Demo Plant A (SME data set: ${MACHINES} machines, ${starts.length} shift instances each, ` +
          `${stopsTotal} stops) on local \`wrangler dev\` (Node ${process.version}, ${cpu}). ` +
          `${RUNS} sequential runs per request after ${WARMUPS} warm-ups; client-side times, ` +
          "request sent to last body byte.",
        "",
        "| Request | Rows | Median ms | p99 ms |",
        "|---|---:|---:|---:|",
        ...lines,
        "",
        misses.length === 0
          ? `Target (median < ${TARGET_MEDIAN_MS} ms per request): met.`
          : `Target missed:\n\n${misses.map((m) => `- ${m}`).join("\n")}`,
        "",
      ].join("\n"),
    );
    if (misses.length > 0) process.exitCode = 1;
  } finally {
    stop();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
