/**
 * What a busy plant costs D1, counted by source, and the number of such machines one D1
 * database carries under Cloudflare's published model. In one run:
 *
 * 1. applies the migrations to a database of its own (emptied first) and starts the
 *    project's Worker and objects through `bench/workers/d1-counting.ts` (the same code,
 *    with every D1 binding wrapped to count; the shipped Worker counts nothing) on port
 *    BENCH_D1_PORT (8797), its state in memory (a tmpfs directory) where there is one;
 * 2. seeds a plant of BENCH_D1_MACHINES (50) machines on three 8-hour shifts, each with
 *    a `count` and a `power` signal, a SKU with a nominal speed, and a key for the scanner
 *    and the partner;
 * 3. runs it: each machine uploads both signals every 10 s (10 samples each, 1 Hz), a
 *    scanner sets each machine's SKU once every 5 minutes (spread evenly), a partner asks
 *    for the metrics report of the plant's shifts of the last 8 hours once a minute (one
 *    page of up to 100 rows, every machine), and one client follows the
 *    company's live stream; every machine starts with a SKU (busy from the start);
 * 4. after BENCH_D1_WARMUP (30) s resets the counts, and after BENCH_D1_SECONDS (120) s
 *    of steady state reads them: round trips, statements, write statements, rows read and
 *    written per source, per busy machine-minute;
 * 5. prints the table and the ceiling it implies, writes them to bench/d1-load-results.md,
 *    and judges the targets: at most 10 round trips, 3 write statements and 50 rows read
 *    per busy machine-minute, and at least 5,000 busy machines per database.
 *
 * The model (https://developers.cloudflare.com/d1/platform/limits/, "How much work can a
 * D1 database do?"): one database runs its queries one at a time, so its throughput is the
 * inverse of their duration: about 1,000 queries a second at 1 ms each. Reads are taken at
 * 1 ms each and writes at 5 ms ("several milliseconds"); the ceiling for reads alone, for
 * writes alone and for both together is the number of machines whose statements fill one
 * second of the database per second.
 *
 * Run with `npx tsx bench/d1-load.ts`.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { operatorCall, publicCall } from "./lib/local-worker";
import { seedRealtimePlant } from "./lib/realtime-plant";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_D1_PORT", 8797);
const MACHINES = envNumber("BENCH_D1_MACHINES", 50);
const WARMUP_S = envNumber("BENCH_D1_WARMUP", 30);
const MEASURE_S = envNumber("BENCH_D1_SECONDS", 120);
const BASE = `http://127.0.0.1:${PORT}`;
const TOKEN = "bench-d1-token";
const STATE_DIR = existsSync("/dev/shm")
  ? `/dev/shm/production-monitoring-bench-d1-${process.pid}`
  : join(ROOT, ".wrangler/bench-d1");
const UPLOAD_EVERY_MS = 10_000;
const SCANNER_EVERY_MS = 5 * 60_000;
const PARTNER_EVERY_MS = 60_000;

/** Targets per busy machine-minute, and for one database. */
export const MAX_ROUND_TRIPS = 10;
export const MAX_WRITES = 3;
export const MAX_ROWS_READ = 50;
export const MIN_MACHINES = 5_000;
/** The published model: ms of the database per read and per write statement. */
const READ_MS = 1;
const WRITE_MS = 5;

interface Counts {
  roundTrips: number;
  statements: number;
  writes: number;
  rowsRead: number;
  rowsWritten: number;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
let finish: () => void = () => undefined;
/** Settles when the run ends: the plant's loops stop waiting then. */
const finished = new Promise<void>((done) => {
  finish = done;
});
/** Sleeps `ms`, or less when the run ends meanwhile. */
const pause = (ms: number) => Promise.race([sleep(ms), finished]);

/** Calls the plant made, by kind (those done during the steady state are reported). */
const calls = new Map<string, number>();

/** Runs `task` every `everyMs`, first after `offsetMs`, until `until()`; errors counted. */
async function every(
  kind: string,
  offsetMs: number,
  everyMs: number,
  until: () => boolean,
  task: () => Promise<void>,
  errors: string[],
): Promise<void> {
  await pause(offsetMs);
  while (!until()) {
    const began = Date.now();
    try {
      await task();
      calls.set(kind, (calls.get(kind) ?? 0) + 1);
    } catch (error) {
      errors.push(String(error));
    }
    await pause(Math.max(0, everyMs - (Date.now() - began)));
  }
}

/** Follows the company stream until `signal` aborts; returns how many events it read. */
async function subscribe(key: string, signal: AbortSignal): Promise<() => number> {
  let events = 0;
  const res = await fetch(`${BASE}/v1/realtime/events`, { headers: { "x-api-key": key }, signal });
  if (res.status !== 200 || !res.body) throw new Error(`subscribe -> ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        events += (decoder.decode(value).match(/^event: /gm) ?? []).length;
      }
    } catch {
      // aborted at the end
    }
  })();
  return () => events;
}

function fmt(n: number, digits = 2): string {
  return n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

async function main(): Promise<void> {
  rmSync(STATE_DIR, { recursive: true, force: true });
  applyMigrations(STATE_DIR);
  const child = spawnDevServer({
    port: PORT,
    persistTo: STATE_DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`],
    script: "bench/workers/d1-counting.ts",
  });
  const stop = new AbortController();
  try {
    await waitForHealthz(BASE, child);
    const plant = await seedRealtimePlant(BASE, TOKEN, {
      name: "D1 load plant",
      machines: MACHINES,
      extraScopes: ["reports.read"],
      // Three 8-hour shifts a day, as most plants run.
      shifts: [
        { name: "Morning", startTime: "06:00", endTime: "14:00" },
        { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
        { name: "Night", startTime: "22:00", endTime: "06:00" },
      ],
    });
    const signals: { count: string; power: string }[] = [];
    for (const machineId of plant.machineIds) {
      const created = await operatorCall<{ publicId: string }[]>(
        BASE,
        TOKEN,
        "POST",
        `/machines/${machineId}/signals`,
        [
          { name: "count", displayName: "count", kind: "counter" },
          { name: "power", displayName: "power", kind: "gauge" },
        ],
      );
      const [count, power] = created.map((s) => s.publicId);
      if (!count || !power) throw new Error("no signals");
      signals.push({ count, power });
    }
    const scan = (machineId: number) =>
      publicCall(BASE, plant.key, "POST", `/v1/realtime/${machineId}/sku`, { skuId: plant.skuId });
    for (const machineId of plant.machineIds) await scan(machineId);
    const events = await subscribe(plant.key, stop.signal);

    const errors: string[] = [];
    let done = false;
    const until = () => done;
    const upload = async (publicId: string, value: (t: number) => number) => {
      const end = Math.floor(Date.now() / 1_000) * 1_000;
      const ts = Array.from({ length: 10 }, (_, i) => end - (9 - i) * 1_000);
      await operatorCall(BASE, TOKEN, "POST", `/signals/${publicId}/samples`, {
        timestamps: ts.map((t) => new Date(t).toISOString()),
        values: ts.map(value),
      });
    };
    const loops: Promise<void>[] = [];
    plant.machineIds.forEach((machineId, i) => {
      const s = signals[i];
      if (!s) return;
      loops.push(
        every(
          "uploads (both signals)",
          (i * UPLOAD_EVERY_MS) / MACHINES,
          UPLOAD_EVERY_MS,
          until,
          async () => {
            await upload(s.count, () => 1);
            await upload(s.power, (t) => 20 + Math.sin(t / 60_000));
          },
          errors,
        ),
        every(
          "scanner writes",
          ((i + 1) * SCANNER_EVERY_MS) / MACHINES,
          SCANNER_EVERY_MS,
          until,
          () => scan(machineId).then(() => undefined),
          errors,
        ),
      );
    });
    loops.push(
      every(
        "partner reports",
        // Mid-minute of the steady state: exactly one report in each of its minutes.
        WARMUP_S * 1_000 + PARTNER_EVERY_MS / 2,
        PARTNER_EVERY_MS,
        until,
        async () => {
          await publicCall(BASE, plant.key, "POST", "/v1/reports/metrics", {
            // The shifts of the last 8 hours: the running one and the one before.
            startDate: { after: new Date(Date.now() - 8 * 3_600_000).toISOString() },
            limit: 100,
          });
        },
        errors,
      ),
    );

    console.log(`Warm-up ${WARMUP_S} s, then ${MEASURE_S} s of steady state...`);
    await sleep(WARMUP_S * 1_000);
    await fetch(`${BASE}/__bench/d1/reset`, { method: "POST" });
    calls.clear();
    const began = Date.now();
    const loadBefore = loadavg()[0] ?? 0;
    await sleep(MEASURE_S * 1_000);
    const table = (await (await fetch(`${BASE}/__bench/d1`)).json()) as Record<string, Counts>;
    const made = [...calls].map(([kind, n]) => `${n} ${kind}`).join(", ");
    const seconds = (Date.now() - began) / 1_000;
    const loadAfter = loadavg()[0] ?? 0;
    done = true;
    finish();
    await Promise.all(loops);

    const machineMinutes = (MACHINES * seconds) / 60;
    const per = (n: number) => n / machineMinutes;
    const rows = Object.entries(table).sort(([, a], [, b]) => b.roundTrips - a.roundTrips);
    const total: Counts = { roundTrips: 0, statements: 0, writes: 0, rowsRead: 0, rowsWritten: 0 };
    for (const [, c] of rows) {
      total.roundTrips += c.roundTrips;
      total.statements += c.statements;
      total.writes += c.writes;
      total.rowsRead += c.rowsRead;
      total.rowsWritten += c.rowsWritten;
    }
    const line = (name: string, c: Counts) =>
      `| ${name} | ${fmt(per(c.roundTrips))} | ${fmt(per(c.statements))} | ${fmt(per(c.writes))} | ${fmt(per(c.rowsRead), 1)} | ${fmt(per(c.rowsWritten), 1)} |`;
    const reads = per(total.statements - total.writes) / 60;
    const writes = per(total.writes) / 60;
    const ceiling = {
      reads: reads === 0 ? Number.POSITIVE_INFINITY : 1_000 / (reads * READ_MS),
      writes: writes === 0 ? Number.POSITIVE_INFINITY : 1_000 / (writes * WRITE_MS),
      both: 1_000 / (reads * READ_MS + writes * WRITE_MS),
    };
    const checks = [
      {
        what: "round trips per busy machine-minute",
        got: per(total.roundTrips),
        ok: per(total.roundTrips) <= MAX_ROUND_TRIPS,
        target: `<= ${MAX_ROUND_TRIPS}`,
      },
      {
        what: "write statements per busy machine-minute",
        got: per(total.writes),
        ok: per(total.writes) <= MAX_WRITES,
        target: `<= ${MAX_WRITES}`,
      },
      {
        what: "rows read per busy machine-minute",
        got: per(total.rowsRead),
        ok: per(total.rowsRead) <= MAX_ROWS_READ,
        target: `<= ${MAX_ROWS_READ}`,
      },
      {
        what: "busy machines per database (reads and writes)",
        got: ceiling.both,
        ok: ceiling.both >= MIN_MACHINES,
        target: `>= ${fmt(MIN_MACHINES, 0)}`,
      },
      { what: "errors", got: errors.length, ok: errors.length === 0, target: "0" },
    ];
    const report = [
      `D1 load of a busy plant (${MACHINES} machines, ${fmt(seconds, 0)} s of steady state after ${WARMUP_S} s, ${new Date().toISOString().slice(0, 10)}; load average ${fmt(loadBefore)} -> ${fmt(loadAfter)} on ${fmt((await import("node:os")).cpus().length, 0)} cores; ${events()} stream events read; calls answered: ${made}):`,
      "",
      "Per busy machine-minute, by source (caller · first table of the SQL):",
      "",
      "| source | round trips | statements | write statements | rows read | rows written |",
      "|---|---|---|---|---|---|",
      ...rows.map(([name, c]) => line(name, c)),
      line("**total**", total),
      "",
      `Ceiling of one database (reads ${READ_MS} ms, writes ${WRITE_MS} ms each): reads alone ${fmt(ceiling.reads, 0)} busy machines, writes alone ${fmt(ceiling.writes, 0)}, both ${fmt(ceiling.both, 0)}.`,
      "",
      "| target | measured | target | met |",
      "|---|---|---|---|",
      ...checks.map(
        (c) => `| ${c.what} | ${fmt(c.got, 1)} | ${c.target} | ${c.ok ? "yes" : "**no**"} |`,
      ),
    ].join("\n");
    console.log(`\n${report}\n`);
    if (errors.length > 0) console.log(`First errors: ${errors.slice(0, 3).join(" | ")}`);
    writeFileSync(join(ROOT, "bench", "d1-load-results.md"), `${report}\n`);
    process.exitCode = checks.every((c) => c.ok) ? 0 : 1;
  } finally {
    stop.abort();
    await stopDevServer(child);
    // BENCH_D1_KEEP_STATE=1 keeps the databases, for measuring what the plant stored
    // (docs/scaling.md, "Capacity on paper").
    if (process.env.BENCH_D1_KEEP_STATE === "1") console.log(`Databases kept in ${STATE_DIR}.`);
    else rmSync(STATE_DIR, { recursive: true, force: true });
  }
}

process.on("SIGINT", () => process.exit(130));
await main();
