/**
 * Benchmark of the KPI and downtime reports and of CSV exports: `npx tsx bench/kpis.ts`.
 *
 * 1. starts from an empty database of its own (`.wrangler/bench-kpis-state`, deleted
 *    first), applies the migrations and runs the dev server on it (port 8831, or
 *    BENCH_KPIS_PORT);
 * 2. builds one company (UTC) with three 8-hour shifts a day on twenty machines and, over
 *    2025: 100,000 production logs of one hour (5,000 per machine) across four SKUs, and
 *    14,600 stops (two a day per machine, every third programmed), one in ten classified
 *    under one of five general causes;
 * 3. times, after warm-ups, BENCH_RUNS (default 10) sequential calls of: the KPI report of
 *    the year (21,900 shift instances) grouped by month, and by SKU; the downtime Pareto of
 *    the year; and a floor in the same run (`GET /v1/machines`, the cheapest authenticated
 *    call). The first KPI call, which computes and keeps every instance's figures, is
 *    reported apart;
 * 4. downloads the year's metrics report as CSV (21,900 rows) twice, sampling the resident
 *    memory of the server's workerd process every 25 ms, and reports its peak above the
 *    level before the download, the body's size and the time to the first byte;
 * 5. prints a markdown table and whether each target is met (grouped KPIs < 300 ms, Pareto
 *    < 200 ms, the CSV's peak memory growth below its body's size: a buffered answer
 *    holds at least the whole body), and writes it to
 *    bench/kpis-results.md.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { ok } from "../scripts/lib/http";
import { connectOperator, type StopInput } from "../scripts/lib/operator-api";
import { envNumber, ROOT } from "./lib/bench-env";
import { groupCpuMs, workerdRssKb } from "./lib/cpu";
import { percentile } from "./lib/local-worker";
import { startFreshDevServer, stopDevServer } from "./lib/spawn-dev-server";
import { createThreeShiftPlant, PLANT_MACHINES } from "./lib/three-shift-plant";

const PORT = envNumber("BENCH_KPIS_PORT", 8831);
const BASE = `http://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-kpis-state";
const RESULTS = join(ROOT, "bench", "kpis-results.md");
const TOKEN = "bench-kpis-token";
const RUNS = envNumber("BENCH_RUNS", 10);
const WARMUPS = 2;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const YEAR_START = Date.UTC(2025, 0, 1);
const YEAR_END = Date.UTC(2026, 0, 1);
const LOGS = 100_000;
const SKUS = 4;
const CAUSES = ["Jam", "Changeover", "Electrical", "Material", "Cleaning"];

const iso = (ms: number) => new Date(ms).toISOString();

async function call(path: string, key: string, init: RequestInit = {}) {
  const started = performance.now();
  const res = await fetch(`${BASE}${path}`, {
    ...init,
    headers: { "x-api-key": key, "content-type": "application/json", ...init.headers },
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text.slice(0, 500)}`);
  return { ms, text };
}
const post = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) =>
  call(path, key, { method: "POST", body: JSON.stringify(body), headers });

async function measure(run: () => Promise<number>, pgid: number) {
  for (let i = 0; i < WARMUPS; i += 1) await run();
  const times: number[] = [];
  const cpuBefore = groupCpuMs(pgid);
  for (let i = 0; i < RUNS; i += 1) times.push(await run());
  const cpu = (groupCpuMs(pgid) - cpuBefore) / RUNS;
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p99: percentile(times, 99), cpu };
}

/** Downloads a CSV answer while sampling workerd's memory. */
async function csvDownload(key: string, body: unknown, pgid: number) {
  const before = workerdRssKb(pgid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, workerdRssKb(pgid));
  }, 25);
  const started = performance.now();
  const res = await fetch(`${BASE}/v1/reports/metrics`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", accept: "text/csv" },
    body: JSON.stringify(body),
  });
  if (!res.ok || !res.body) throw new Error(`CSV -> ${res.status}: ${await res.text()}`);
  let firstByte = 0;
  let bytes = 0;
  let lines = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (firstByte === 0) firstByte = performance.now() - started;
    bytes += value.length;
    for (const b of value) if (b === 10) lines += 1;
  }
  clearInterval(timer);
  peak = Math.max(peak, workerdRssKb(pgid));
  return { ms: performance.now() - started, firstByte, bytes, rows: lines - 1, before, peak };
}

async function main(): Promise<void> {
  const child = await startFreshDevServer({ port: PORT, persistTo: PERSIST_DIR, token: TOKEN });
  const pgid = child.pid ?? 0;
  try {
    const { api: client } = connectOperator(BASE, TOKEN);
    const { key, machines } = await createThreeShiftPlant(BASE, TOKEN, {
      name: "Bench KPIs",
      keyName: "bench-kpis",
      scopes: ["production_logs.create", "reports.read", "skus.create", "machines.read"],
    });
    const skus = JSON.parse(
      (
        await post(
          "/v1/skus",
          key,
          Array.from({ length: SKUS }, (_, i) => ({ sku: `SKU-${i + 1}` })),
        )
      ).text,
    ) as { id: string }[];

    const seedStarted = performance.now();
    const perMachine = LOGS / PLANT_MACHINES;
    const step = (YEAR_END - YEAR_START - HOUR) / perMachine;
    const logs: unknown[] = [];
    for (let k = 0; k < perMachine; k += 1) {
      for (const [m, machine] of machines.entries()) {
        const start = Math.round(YEAR_START + k * step + m * 60_000);
        logs.push({
          start: iso(start),
          end: iso(start + HOUR),
          count: 100 + ((k + m) % 50),
          nominalSpeed: 2,
          machine: { id: machine.id },
          // A SKU runs about a week at a time.
          sku: { id: skus[Math.floor(k / 96 + m) % SKUS]?.id },
        });
      }
    }
    console.log(`Creating ${LOGS} logs ...`);
    for (let i = 0; i < logs.length; i += 1000)
      await post("/v1/production-logs", key, logs.slice(i, i + 1000));
    console.log("Creating stops and classifying one in ten ...");
    const toClassify: number[] = [];
    for (const machine of machines) {
      const stops: StopInput[] = [];
      for (let day = YEAR_START; day < YEAR_END; day += DAY) {
        for (const offset of [3, 13]) {
          const start = day + offset * HOUR + machine.id * 60_000;
          stops.push({
            startTime: iso(start),
            endTime: iso(start + (5 + ((day / DAY) % 40)) * 60_000),
            isProgrammed: (day / DAY + offset) % 3 === 0,
          });
        }
      }
      const created = ok(
        "POST",
        await client.POST("/machines/{machine_id}/stops", {
          params: { path: { machine_id: machine.id } },
          body: stops,
        }),
      );
      created.forEach((s, i) => {
        if (i % 10 === 0) toClassify.push(s.id);
      });
    }
    for (let i = 0; i < toClassify.length; i += 8) {
      await Promise.all(
        toClassify.slice(i, i + 8).map(async (id, j) => {
          const res = await fetch(`${BASE}/operator/v1/stops/${id}/classification`, {
            method: "PUT",
            headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
            body: JSON.stringify({ generalCause: { name: CAUSES[(i + j) % CAUSES.length] } }),
          });
          if (!res.ok) throw new Error(`classify ${id} -> ${res.status}`);
          await res.text();
        }),
      );
    }
    console.log(`Seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s.`);

    const year = {
      limit: 100,
      machines: { include: machines.map((m) => m.id) },
      startDate: { between: { start: iso(YEAR_START), end: iso(YEAR_END - 1) } },
    };
    const stopsYear = { startDate: year.startDate, machines: year.machines, limit: 100 };
    const cold = await post("/v1/reports/kpis", key, { ...year, groupBy: ["month"] });
    const months = JSON.parse(cold.text) as { totalCount: number; kpis: { instances: number }[] };
    const instances = months.kpis.reduce((s, r) => s + r.instances, 0);
    if (months.totalCount !== 12 || instances !== 365 * 3 * PLANT_MACHINES) {
      throw new Error(`KPIs by month: ${months.totalCount} rows, ${instances} instances`);
    }
    const cases: { label: string; target?: number; run: () => Promise<number> }[] = [
      { label: "Floor: GET /v1/machines", run: async () => (await call("/v1/machines", key)).ms },
      {
        label: "KPIs of the year (21,900 instances) by month",
        target: 300,
        run: async () => (await post("/v1/reports/kpis", key, { ...year, groupBy: ["month"] })).ms,
      },
      {
        label: "KPIs of the year by SKU",
        target: 300,
        run: async () => (await post("/v1/reports/kpis", key, { ...year, groupBy: ["sku"] })).ms,
      },
      {
        label: "Downtime Pareto of the year (14,600 stops) by general cause",
        target: 200,
        run: async () => (await post("/v1/reports/downtime", key, stopsYear)).ms,
      },
    ];
    const lines: string[] = [];
    const misses: string[] = [];
    for (const c of cases) {
      process.stdout.write(`  ${c.label} ... `);
      const { median, p99, cpu } = await measure(c.run, pgid);
      process.stdout.write(`${median.toFixed(1)} ms\n`);
      lines.push(
        `| ${c.label} | ${median.toFixed(1)} | ${p99.toFixed(1)} | ${cpu.toFixed(1)} | ${c.target ? `< ${c.target}` : ""} |`,
      );
      if (c.target !== undefined && median >= c.target)
        misses.push(`${c.label}: median ${median.toFixed(1)} ms`);
    }
    lines.push(
      `| KPIs by month, first call (computes and keeps 21,900 instances) | ${cold.ms.toFixed(1)} | | | |`,
    );

    const csvRuns = [await csvDownload(key, year, pgid), await csvDownload(key, year, pgid)];
    const csvLines = csvRuns.map(
      (r, i) =>
        `| CSV of the year's metrics report, run ${i + 1} | ${r.rows.toLocaleString("en")} | ` +
        `${(r.bytes / 1e6).toFixed(1)} MB | ${r.firstByte.toFixed(0)} | ${r.ms.toFixed(0)} | ` +
        `${(r.before / 1024).toFixed(0)} MB | +${((r.peak - r.before) / 1024).toFixed(1)} MB |`,
    );
    for (const r of csvRuns) {
      if (r.rows !== 21_900) misses.push(`CSV: ${r.rows} rows, expected 21,900`);
      // A buffered answer holds at least its whole body (and its rows as objects before that).
      if ((r.peak - r.before) * 1024 >= r.bytes) {
        misses.push(
          `CSV: memory grew ${((r.peak - r.before) / 1024).toFixed(1)} MB for a ${(r.bytes / 1e6).toFixed(1)} MB body`,
        );
      }
    }
    const report = [
      "",
      "# KPI, downtime and CSV benchmark",
      "",
      `Generated by \`npx tsx bench/kpis.ts\` (part of \`npm run bench\`) on ${new Date().toISOString()}.`,
      "",
      `Local dev server (Node ${process.version}, ${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} CPUs, ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")} at the end); ${RUNS} sequential runs per ` +
        `request after ${WARMUPS} warm-ups; client-side times; CPU: mean CPU time per request of ` +
        "the server's processes and this client.",
      "",
      "| Request | Median ms | p99 ms | CPU ms | Target ms |",
      "|---|---:|---:|---:|---:|",
      ...lines,
      "",
      "| Download | Rows | Body | First byte ms | Total ms | workerd RSS before | Peak above it |",
      "|---|---:|---:|---:|---:|---:|---:|",
      ...csvLines,
      "",
      misses.length === 0
        ? "Targets: met."
        : `Targets missed:\n\n${misses.map((m) => `- ${m}`).join("\n")}`,
      "",
    ].join("\n");
    console.log(report);
    writeFileSync(RESULTS, report.trimStart());
    if (misses.length > 0) process.exitCode = 1;
  } finally {
    await stopDevServer(child);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
