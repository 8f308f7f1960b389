/**
 * Benchmark of work bounded by the page (issue 19, docs/bounded-work.md):
 * `npx tsx bench/bounded.ts`.
 *
 * 1. starts from an empty database of its own (`.wrangler/bench-bounded-state`, deleted
 *    first), applies the migrations and runs `wrangler dev` on it (port 8790, or
 *    BENCH_BOUNDED_PORT);
 * 2. builds one company (UTC) with three 8-hour shifts a day on every machine and:
 *    - three machines whose 2025-06-02 08:00-16:00 shift holds 1,000, 5,000 and 15,000
 *      production logs and 500 stops each;
 *    - twenty machines with 100,000 production logs over 2025 (5,000 each), written by
 *      100 public creates of 1,000 items (their times are the 1,000-item create figure);
 * 3. times, after warm-ups, BENCH_RUNS (default 10) sequential calls of: the report row
 *    of each heavy shift; page 1 and the last page of the year-long metrics report of
 *    the twenty machines (21,900 rows, limit 100; the first, materializing call is
 *    reported apart); production-log searches over the 100,000 logs;
 * 4. prints a markdown table (median and p99, client-side, and CPU per request) and
 *    whether each target is met: report row of 15,000 logs < 100 ms; year pages
 *    < 150 ms; searches < 100 ms; and writes it to bench/bounded-results.md.
 */
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { ok } from "../scripts/lib/http";
import { connectOperator, type StopInput } from "../scripts/lib/operator-api";
import { envNumber, ROOT } from "./lib/bench-env";
import { groupCpuMs } from "./lib/cpu";
import { percentile } from "./lib/local-worker";
import { startFreshDevServer, stopDevServer } from "./lib/spawn-dev-server";
import { THREE_SHIFTS } from "./lib/three-shift-plant";

const PORT = envNumber("BENCH_BOUNDED_PORT", 8790);
const BASE = `http://127.0.0.1:${PORT}`;
const PERSIST_DIR = ".wrangler/bench-bounded-state";
const RESULTS = join(ROOT, "bench", "bounded-results.md");
const TOKEN = "bench-bounded-token";
const RUNS = envNumber("BENCH_RUNS", 10);
const WARMUPS = 2;
const HOUR = 3_600_000;
const YEAR_START = Date.UTC(2025, 0, 1);
const YEAR_END = Date.UTC(2026, 0, 1);
const YEAR_MACHINES = 20;
const SEARCH_LOGS = 100_000;
const HEAVY_SHIFT_START = Date.UTC(2025, 5, 2, 8);
const HEAVY_SHIFT_MS = 8 * HOUR;
const HEAVY_SIZES = [1_000, 5_000, 15_000];
const HEAVY_STOPS = 500;
const CREATE_ITEMS = 1_000;

const iso = (ms: number) => new Date(ms).toISOString();

async function post<T>(path: string, key: string, body: unknown): Promise<{ ms: number; body: T }> {
  const started = performance.now();
  const res = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status}: ${text.slice(0, 500)}`);
  return { ms, body: JSON.parse(text) as T };
}

/**
 * Times `run` after the warm-ups: median and p99 in ms, and the mean CPU time per
 * call of the dev server's process group and this process (ms; 0 without `/proc`),
 * which moves far less than wall time when other work shares the machine.
 */
async function measure(run: () => Promise<number>, pgid: number) {
  for (let i = 0; i < WARMUPS; i += 1) await run();
  const times: number[] = [];
  const cpuBefore = groupCpuMs(pgid);
  for (let i = 0; i < RUNS; i += 1) times.push(await run());
  const cpu = (groupCpuMs(pgid) - cpuBefore) / RUNS;
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p99: percentile(times, 99), cpu };
}

interface LogItem {
  start: string;
  end: string;
  count: number;
  nominalSpeed: number;
  machine: { id: number };
  sku: { id: string };
  type?: "total" | "defects";
}

/** Creates logs 1,000 at a time; returns each call's time in ms. */
async function createLogs(key: string, items: readonly LogItem[]): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < items.length; i += CREATE_ITEMS) {
    const { ms, body } = await post<unknown[]>(
      "/v1/production-logs",
      key,
      items.slice(i, i + CREATE_ITEMS),
    );
    if (body.length !== Math.min(CREATE_ITEMS, items.length - i)) throw new Error("short create");
    times.push(ms);
  }
  return times;
}

/** `n` logs tiling the heavy shift (80 % covered), every tenth a defects log. */
function heavyShiftLogs(machineId: number, skuId: string, n: number): LogItem[] {
  const slot = HEAVY_SHIFT_MS / n;
  return Array.from({ length: n }, (_, i) => ({
    start: iso(Math.round(HEAVY_SHIFT_START + i * slot)),
    end: iso(Math.round(HEAVY_SHIFT_START + i * slot + slot * 0.8)),
    count: 10,
    nominalSpeed: 12,
    machine: { id: machineId },
    sku: { id: skuId },
    type: i % 10 === 9 ? "defects" : "total",
  }));
}

/** 500 stops of 20 s spread over the heavy shift, of every class. */
function heavyShiftStops(): StopInput[] {
  const slot = HEAVY_SHIFT_MS / HEAVY_STOPS;
  return Array.from({ length: HEAVY_STOPS }, (_, i) => ({
    startTime: iso(Math.round(HEAVY_SHIFT_START + i * slot + slot / 3)),
    endTime: iso(Math.round(HEAVY_SHIFT_START + i * slot + slot / 3 + 20_000)),
    isProgrammed: i % 3 === 0,
    isIncludedInAvailability: i % 3 !== 2,
  }));
}

async function main(): Promise<void> {
  const child = await startFreshDevServer({ port: PORT, persistTo: PERSIST_DIR, token: TOKEN });
  try {
    const { api: client } = connectOperator(BASE, TOKEN);
    const [company] = ok(
      "POST",
      await client.POST("/companies", { body: [{ name: "Bench Bounded", timezone: "UTC" }] }),
    );
    if (!company) throw new Error("no company");
    const [apiKey] = ok(
      "POST",
      await client.POST("/companies/{company_id}/api-keys", {
        params: { path: { company_id: company.id } },
        body: [
          {
            name: "bench-bounded",
            scopes: [
              "production_logs.create",
              "production_logs.read",
              "reports.read",
              "skus.create",
            ],
            rateLimit: { requests: 1_000_000, periodSeconds: 60 },
          },
        ],
      }),
    );
    if (!apiKey) throw new Error("no key");
    const key = apiKey.key;
    const companyPath = { params: { path: { company_id: company.id } } };
    const yearMachines = ok(
      "POST",
      await client.POST("/companies/{company_id}/machines", {
        ...companyPath,
        body: Array.from({ length: YEAR_MACHINES }, (_, i) => ({ name: `Year ${i + 1}` })),
      }),
    );
    const heavyMachines = ok(
      "POST",
      await client.POST("/companies/{company_id}/machines", {
        ...companyPath,
        body: HEAVY_SIZES.map((n) => ({ name: `Heavy ${n}` })),
      }),
    );
    ok(
      "POST",
      await client.POST("/companies/{company_id}/shifts", {
        ...companyPath,
        body: THREE_SHIFTS,
      }),
    );
    const { body: skus } = await post<{ id: string }[]>("/v1/skus", key, [{ sku: "BENCH-1" }]);
    const skuId = skus[0]?.id;
    if (!skuId) throw new Error("no sku");

    const seedStarted = performance.now();
    for (const [i, n] of HEAVY_SIZES.entries()) {
      console.log(`Heavy shift: ${n} logs, ${HEAVY_STOPS} stops`);
      const machine = heavyMachines[i];
      if (!machine) throw new Error("no machine");
      await createLogs(key, heavyShiftLogs(machine.id, skuId, n));
      ok(
        "POST",
        await client.POST("/machines/{machine_id}/stops", {
          params: { path: { machine_id: machine.id } },
          body: heavyShiftStops(),
        }),
      );
    }
    // 100,000 logs over the year: 5,000 per machine, one hour each, interleaved so that
    // every create call spans machines and months.
    const perMachine = SEARCH_LOGS / YEAR_MACHINES;
    const step = (YEAR_END - YEAR_START - HOUR) / perMachine;
    const yearLogs: LogItem[] = [];
    for (let k = 0; k < perMachine; k += 1) {
      for (const [m, machine] of yearMachines.entries()) {
        const start = Math.round(YEAR_START + k * step + m * 60_000);
        yearLogs.push({
          start: iso(start),
          end: iso(start + HOUR),
          count: 100 + ((k + m) % 50),
          nominalSpeed: 2,
          machine: { id: machine.id },
          sku: { id: skuId },
        });
      }
    }
    console.log(`Creating ${SEARCH_LOGS} logs, ${CREATE_ITEMS} per call ...`);
    const createTimes = (await createLogs(key, yearLogs)).sort((a, b) => a - b);
    console.log(`Seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s.`);

    const cases: { label: string; target?: number; run: () => Promise<number> }[] = [];
    for (const [i, n] of HEAVY_SIZES.entries()) {
      const machine = heavyMachines[i];
      if (!machine) continue;
      const body = {
        machines: { include: [machine.id] },
        startDate: { equal: iso(HEAVY_SHIFT_START) },
      };
      const { body: check } = await post<{ totalCount: number }>("/v1/reports/metrics", key, body);
      if (check.totalCount !== 1) throw new Error(`heavy shift ${n}: ${check.totalCount} rows`);
      cases.push({
        label: `Metrics report row of a shift with ${n.toLocaleString("en")} logs, ${HEAVY_STOPS} stops`,
        target: n === 15_000 ? 100 : undefined,
        run: async () => (await post("/v1/reports/metrics", key, body)).ms,
      });
    }
    const yearBody = (page: number) => ({
      machines: { include: yearMachines.map((m) => m.id) },
      startDate: { between: { start: iso(YEAR_START), end: iso(YEAR_END) } },
      limit: 100,
      page,
    });
    const cold = await post<{ totalCount: number; totalPages: number }>(
      "/v1/reports/metrics",
      key,
      yearBody(1),
    );
    const expectedRows = 365 * 3 * YEAR_MACHINES;
    if (cold.body.totalCount !== expectedRows) {
      throw new Error(`year report: ${cold.body.totalCount} rows, expected ${expectedRows}`);
    }
    const lastPage = cold.body.totalPages;
    cases.push(
      {
        label: `Year report (${expectedRows.toLocaleString("en")} rows), page 1 of ${lastPage}`,
        target: 150,
        run: async () => (await post("/v1/reports/metrics", key, yearBody(1))).ms,
      },
      {
        label: `Year report, last page (${lastPage})`,
        target: 150,
        run: async () => (await post("/v1/reports/metrics", key, yearBody(lastPage))).ms,
      },
      {
        label: "Log search over 100,000 logs: page 1, no filter",
        target: 100,
        run: async () => (await post("/v1/production-logs/filters", key, { limit: 100 })).ms,
      },
      {
        label: "Log search: one machine, one month (start between)",
        target: 100,
        run: async () =>
          (
            await post("/v1/production-logs/filters", key, {
              machines: { include: [yearMachines[3]?.id] },
              start: {
                between: { start: iso(Date.UTC(2025, 6, 1)), end: iso(Date.UTC(2025, 7, 1)) },
              },
              limit: 100,
            })
          ).ms,
      },
      {
        label: "Log search: count from 120 to 125, page 2",
        target: 100,
        run: async () =>
          (
            await post("/v1/production-logs/filters", key, {
              count: { greaterThanOrEqual: 120, lessThanOrEqual: 125 },
              limit: 100,
              page: 2,
            })
          ).ms,
      },
    );

    const lines: string[] = [];
    const misses: string[] = [];
    for (const c of cases) {
      process.stdout.write(`  ${c.label} ... `);
      const { median, p99, cpu } = await measure(c.run, child.pid ?? 0);
      process.stdout.write(`${median.toFixed(1)} ms\n`);
      lines.push(
        `| ${c.label} | ${median.toFixed(1)} | ${p99.toFixed(1)} | ${cpu.toFixed(1)} | ${c.target ? `< ${c.target}` : ""} |`,
      );
      if (c.target !== undefined && median >= c.target) {
        misses.push(`${c.label}: median ${median.toFixed(1)} ms >= ${c.target} ms`);
      }
    }
    const createMedian = percentile(createTimes, 50);
    const createP99 = percentile(createTimes, 99);
    lines.push(
      `| Create of ${CREATE_ITEMS.toLocaleString("en")} production logs (${createTimes.length} calls) | ${createMedian.toFixed(1)} | ${createP99.toFixed(1)} | | |`,
      `| Year report, page 1, first call (materializes ${expectedRows.toLocaleString("en")} instances) | ${cold.ms.toFixed(1)} | | | |`,
    );
    const cpu = cpus()[0]?.model ?? "unknown CPU";
    const report = [
      "",
      "# Bounded-work benchmark",
      "",
      `Generated by \`npx tsx bench/bounded.ts\` (part of \`npm run bench\`) on ${new Date().toISOString()}.`,
      "",
      `Local \`wrangler dev\` (Node ${process.version}, ${cpu}); ${RUNS} sequential runs per ` +
        `request after ${WARMUPS} warm-ups; client-side times, request sent to last body byte; ` +
        "CPU: mean CPU time per request of the local server (workerd, local D1, wrangler) and " +
        "of this client.",
      "",
      "| Request | Median ms | p99 ms | CPU ms | Target ms |",
      "|---|---:|---:|---:|---:|",
      ...lines,
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
