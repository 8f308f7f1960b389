/**
 * Stop detection's cost (docs/machine-state.md; the targets of its issue), on the project's
 * Worker with every D1 binding counting (`bench/workers/d1-counting.ts`), on port
 * BENCH_DETECT_PORT (8870), its state in memory (a tmpfs directory) where there is one:
 *
 * 1. **Throughput**: 2 x BENCH_DETECT_MACHINES (20) machines with a `count` signal on a
 *    24-hour shift; detection switched off on half of them (the floor, in the same run) and
 *    left on for the others. A first day to every machine warms up (not counted); then in
 *    BENCH_DETECT_ROUNDS (5) rounds each group sends one day of 1 Hz counts per machine
 *    (86,400 samples, 10,000 a call, the machines at once), the group that goes first
 *    alternating: pieces every second but for 12 stops of 10 minutes and 48 pauses of 2
 *    minutes a day. A group's turn ends when every machine's detector has settled (its stops
 *    written) and the server is quiet again (`untilQuiet`: past the alarms its ingestion set,
 *    then until its CPU stops advancing), so that the work its
 *    ingestion set going is counted to it and not to the next group. Target: detection on
 *    >= 90 % of the samples per second of detection off, judged on the server's CPU (the
 *    machine is shared; wall clock reported beside it) as the **median of the rounds'
 *    shares** (one round can be lucky or unlucky by 30 points on a loaded machine).
 * 2. **D1 per detected stop and per upload**: one machine sent "live" (10 samples a call,
 *    a call every UPLOAD_EVERY_MS, faster than the clock, so its instants start 90 minutes
 *    back: a sample may not be more than 5 minutes ahead of the clock; with the machine's
 *    `maxSampleGapSeconds` at a day, its last sample is within the gap of now, so the run it
 *    ends reads as live, and a stop's zeros span longer than the detector's write spacing,
 *    so it is seen open before it closes), BENCH_DETECT_STOPS (5) stops of 10 minutes; the
 *    counts from the first upload on. Targets: write statements of
 *    the signal store on `stops` = 2 per stop (one when it opens, one when it closes); no D1
 *    read by the upload route, and none by the signal store after the first stop (the
 *    machine's plan and recorded stops are read once, when the first run is found).
 * 3. **A year of 1 Hz history** (BENCH_DETECT_YEAR_DAYS, 365) on one machine, down every
 *    weekend; then a late batch of pieces inside a weekend stop, and one inside a working
 *    day. Target: the detector reads only hour summaries around the touched hours (no block
 *    of samples besides the touched ones, which the ingestion merges anyway), a handful of
 *    summaries for the working day, the weekend's hours for the weekend.
 * 4. **Restart with a stop open**: the server stopped and started again on the same state
 *    while a detected stop is open (10 minutes of samples up to now, the gap at a day so that
 *    a slow restart does not end the stop by silence); pieces after the restart close that same stop, and the
 *    machine's stream holds its `stop.started` and `stop.ended`.
 *
 * BENCH_DETECT_PARTS (`1234`) names the parts to run (`1` for the throughput alone, as when
 * two builds are compared back to back). Writes `bench/detection-results.md` after a run of
 * every part (prints only, otherwise); exits 1 when a target is missed.
 */
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import {
  DAY,
  detectionBench,
  HOUR,
  MIN,
  S,
  serverCpuMs,
  untilQuiet,
  workingDay,
} from "./lib/detection-plant";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_DETECT_PORT", 8870);
const MACHINES = envNumber("BENCH_DETECT_MACHINES", 20);
const ROUNDS = envNumber("BENCH_DETECT_ROUNDS", 5);
const STOPS = envNumber("BENCH_DETECT_STOPS", 5);
const YEAR_DAYS = envNumber("BENCH_DETECT_YEAR_DAYS", 365);
const PARTS = process.env.BENCH_DETECT_PARTS ?? "1234";
const BASE = `http://127.0.0.1:${PORT}`;
const TOKEN = "bench-detection-token";
const STATE = existsSync("/dev/shm")
  ? `/dev/shm/production-monitoring-bench-detection-${process.pid}`
  : join(ROOT, ".wrangler/bench-detection");
const RESULTS = join(ROOT, "bench", "detection-results.md");
/**
 * A dev registry of this run's own: another helper's `wrangler dev` starting or stopping
 * updates the shared one, and that restarts this server's runtime mid-round (its CPU and
 * the dropped calls fell on whichever group was sending).
 */
const PRIVATE_REGISTRY = {
  WRANGLER_REGISTRY_PATH: join(STATE, "dev-registry"),
  WRANGLER_CI_DISABLE_CONFIG_WATCHING: "true",
};
/** Least time between two "live" uploads of part 2, ms. */
const UPLOAD_EVERY_MS = 50;

interface Counts {
  roundTrips: number;
  statements: number;
  writes: number;
  rowsRead: number;
  rowsWritten: number;
}

const bench = detectionBench(BASE, TOKEN);
const iso = (ms: number) => new Date(ms).toISOString();
const { op, send, settled, plant, stopsOf } = bench;

async function d1Counts(): Promise<Record<string, Counts>> {
  return (await (await fetch(`${BASE}/__bench/d1`)).json()) as Record<string, Counts>;
}

/** The middle value of `values` (the mean of the two middle ones for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/**
 * Part 1: samples per second with detection off (the floor) and on, rounds interleaved:
 * a first day to every machine warms up (the detectors' plan read, the isolate's code),
 * not counted; then each round sends a day to each group, the group that goes first
 * alternating (off-on, on-off, ...), each group's server CPU read once the server is
 * quiet again.
 */
async function throughput(pgid: number) {
  const p = await plant("Throughput", 2 * MACHINES);
  const off = p.machines.slice(0, MACHINES);
  const on = p.machines.slice(MACHINES);
  for (const m of off) {
    await op("PUT", `/machines/${m.id}/stop-detection`, { enabled: false });
  }
  // Days inside the company's hot window (35 days): no archive step runs after a group's
  // calls. An archive step's cost follows the calls' timing (how many hours each step
  // finds), not detection, and it fell unevenly on the two groups (docs/benchmarks.md).
  const first = Math.floor(Date.now() / DAY) * DAY - (ROUNDS + 2) * DAY;
  const runGroup = async (machines: typeof p.machines, day: [number, number][]) => {
    const began = performance.now();
    const restartsBefore = bench.restarts();
    const cpuBefore = serverCpuMs(pgid);
    await Promise.all(machines.map((m) => send(m.count, day)));
    // Both groups wait for their stores' detectors (detection off: nothing to wait for).
    await Promise.all(machines.map((m) => settled(p.companyId, m.id)));
    const ms = performance.now() - began;
    await untilQuiet(pgid, began);
    return {
      ms,
      cpuMs: serverCpuMs(pgid) - cpuBefore,
      restarts: bench.restarts() - restartsBefore,
    };
  };
  const warm = workingDay(first - DAY);
  await runGroup(off, warm);
  await runGroup(on, warm);
  await fetch(`${BASE}/__bench/d1/reset`, { method: "POST" });
  const busy = { off: 0, on: 0 };
  const cpu = { off: 0, on: 0 };
  /** Per round, detection on's share of off: samples per CPU-second (= CPU off / CPU on). */
  const shares: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const day = workingDay(first + round * DAY);
    const order = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
    const roundCpu = { off: 0, on: 0 };
    for (const group of order) {
      const r = await runGroup(group === "off" ? off : on, day);
      busy[group] += r.ms;
      cpu[group] += r.cpuMs;
      roundCpu[group] = r.cpuMs;
      console.log(
        `  round ${round + 1}, detection ${group}: ${(r.ms / 1000).toFixed(1)} s, server CPU ${(r.cpuMs / 1000).toFixed(1)} s, load ${(loadavg()[0] ?? 0).toFixed(1)}${r.restarts > 0 ? `, runtime restarted under ${r.restarts} call(s)` : ""}`,
      );
    }
    shares.push(roundCpu.off / roundCpu.on);
  }
  // Where the rounds' D1 statements went (both groups): what detection adds to ingestion.
  for (const [source, c] of Object.entries(await d1Counts())) {
    console.log(`  ${source}: ${c.statements - c.writes} reads, ${c.writes} writes`);
  }
  const samples = (MACHINES * ROUNDS * DAY) / S;
  const rateOff = samples / (busy.off / 1000);
  const rateOn = samples / (busy.on / 1000);
  const cpuRateOff = samples / (cpu.off / 1000);
  const cpuRateOn = samples / (cpu.on / 1000);
  const [oneOn] = on;
  const [oneOff] = off;
  const stopsOn = oneOn ? (await stopsOf(p.key, oneOn.id)).totalCount : -1;
  const stopsOff = oneOff ? (await stopsOf(p.key, oneOff.id)).totalCount : -1;
  return {
    rateOff,
    rateOn,
    cpuRateOff,
    cpuRateOn,
    shares,
    stopsOn,
    stopsOff,
  };
}

/** Part 2: D1 statements per detected stop and per upload, live. */
async function perStop() {
  const p = await plant("Live", 1);
  const m = p.machines[0];
  if (!m) throw new Error("no machine");
  await op("PUT", `/machines/${m.id}/stop-detection`, { maxSampleGapSeconds: 86_400 });
  // 10 s + 5 stops x 16 minutes of samples, sent faster than the clock: they end before now.
  const t0 = Math.floor(Date.now() / S) * S - (10 * S + STOPS * 16 * MIN) - 10 * MIN;
  let t = t0;
  let uploads = 0;
  const upload = async (value: number, seconds: number) => {
    for (let s = 0; s < seconds; s += 10) {
      const began = performance.now();
      await send(
        m.count,
        Array.from({ length: 10 }, (_, i) => [t + i * S, value] as [number, number]),
      );
      t += 10 * S;
      uploads += 1;
      const rest = UPLOAD_EVERY_MS - (performance.now() - began);
      if (rest > 0) await new Promise((done) => setTimeout(done, rest));
    }
  };
  // A first upload warms the caches (the signal's lookups); the counts start after it.
  await upload(1, 10);
  await settled(p.companyId, m.id);
  await fetch(`${BASE}/__bench/d1/reset`, { method: "POST" });
  uploads = 0;
  let storeStopWrites = 0;
  let uploadReads = 0;
  /** Store reads in the first stop's cycle, then in all the others. */
  let firstStopReads = 0;
  let laterReads = 0;
  /** Directory reads of the store (the company's shard, before each write of stops). */
  let directoryReads = 0;
  for (let k = 0; k < STOPS; k++) {
    await upload(1, 5 * 60);
    await upload(0, 10 * 60);
    await upload(1, 60);
    await settled(p.companyId, m.id);
    for (const [source, c] of Object.entries(await d1Counts())) {
      if (source === "signal store · stops") storeStopWrites += c.writes;
      if (source.startsWith("signal store [directory]")) {
        directoryReads += c.statements - c.writes;
      } else if (source.startsWith("signal store")) {
        if (k === 0) firstStopReads += c.statements - c.writes;
        else laterReads += c.statements - c.writes;
        if (c.statements > c.writes)
          console.log(`  stop ${k + 1}, ${source}: ${c.statements - c.writes} reads`);
      }
      if (source.startsWith("samples upload")) uploadReads += c.statements - c.writes;
    }
    await fetch(`${BASE}/__bench/d1/reset`, { method: "POST" });
  }
  const { stops } = await stopsOf(p.key, m.id);
  const closed = stops.filter((s) => s.stop.endTime !== null).length;
  return {
    uploads,
    storeStopWrites,
    firstStopReads,
    laterReads,
    directoryReads,
    uploadReads,
    stops: stops.length,
    closed,
  };
}

/** Part 3: a year of 1 Hz, then late batches; what the detector reads. */
async function yearOfHistory() {
  const p = await plant("Year", 1);
  const m = p.machines[0];
  if (!m) throw new Error("no machine");
  const first = Date.UTC(2024, 0, 1); // a Monday
  const began = performance.now();
  for (let d = 0; d < YEAR_DAYS; d++) {
    const day = first + d * DAY;
    const weekend = d % 7 >= 5;
    const samples: [number, number][] = [];
    for (let t = day; t < day + DAY; t += S) samples.push([t, weekend ? 0 : 1]);
    await send(m.count, samples);
  }
  const before = await settled(p.companyId, m.id);
  const ingestS = (performance.now() - began) / 1000;
  // Late pieces: 10 minutes on a Saturday of the middle of the year, then on a Wednesday.
  const saturday = first + (7 * Math.floor(YEAR_DAYS / 14) + 5) * DAY + 13 * HOUR;
  const wednesday = first + (7 * Math.floor(YEAR_DAYS / 14) + 2) * DAY + 13 * HOUR;
  const reads: { label: string; summaries: number; blocks: number; touched: number }[] = [];
  for (const [label, at, value] of [
    ["pieces inside a weekend stop", saturday, 1],
    ["zeros inside a working day", wednesday, 0],
  ] as const) {
    const last = await settled(p.companyId, m.id);
    const samples: [number, number][] = [];
    for (let t = at; t < at + 10 * MIN; t += S) samples.push([t, value]);
    await send(m.count, samples);
    const now = await settled(p.companyId, m.id);
    reads.push({
      label,
      summaries: now.summaries - last.summaries,
      blocks: now.blocks - last.blocks,
      touched: 1,
    });
  }
  void before;
  const { totalCount } = await stopsOf(p.key, m.id);
  return { ingestS, reads, stops: totalCount };
}

/** Part 4: the server restarted while a stop is open. */
async function restart(child: { current: ReturnType<typeof spawnDevServer> }) {
  const p = await plant("Restart", 1);
  const m = p.machines[0];
  if (!m) throw new Error("no machine");
  await op("PUT", `/machines/${m.id}/stop-detection`, { maxSampleGapSeconds: 86_400 });
  // Ten minutes of samples up to now (a sample may not be ahead of the clock).
  const t0 = Math.floor(Date.now() / S) * S - 600 * S;
  await send(
    m.count,
    Array.from({ length: 600 }, (_, i) => [t0 + i * S, i < 120 ? 1 : 0] as [number, number]),
  );
  await settled(p.companyId, m.id);
  const open = (await stopsOf(p.key, m.id)).stops;
  await stopDevServer(child.current);
  child.current = spawnDevServer({
    port: PORT,
    persistTo: STATE,
    vars: [`OPERATOR_TOKEN:${TOKEN}`],
    script: "bench/workers/d1-counting.ts",
    env: PRIVATE_REGISTRY,
  });
  await waitForHealthz(BASE, child.current);
  const afterRestart = (await stopsOf(p.key, m.id)).stops;
  await send(m.count, [[t0 + 600 * S, 4]]);
  await settled(p.companyId, m.id);
  const closed = (await stopsOf(p.key, m.id)).stops;
  const res = await fetch(`${BASE}/v1/realtime/${m.id}/events?since=0`, {
    headers: { "x-api-key": p.key },
    signal: AbortSignal.timeout(5_000),
  }).catch(() => null);
  let text = "";
  if (res?.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && !/stop\.ended/.test(text)) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) break;
      text += decoder.decode(chunk.value);
    }
    await reader.cancel().catch(() => undefined);
  }
  const started = open[0];
  const ok =
    open.length === 1 &&
    started?.stop.endTime === null &&
    afterRestart.length === 1 &&
    afterRestart[0]?.stop.id === started.stop.id &&
    afterRestart[0]?.stop.endTime === null &&
    closed.length === 1 &&
    closed[0]?.stop.id === started.stop.id &&
    closed[0]?.stop.endTime === iso(t0 + 600 * S) &&
    /event: stop\.started/.test(text) &&
    /event: stop\.ended/.test(text);
  return { ok, open, afterRestart, closed };
}

type Check = { what: string; got: string; ok: boolean; target: string };

function throughputChecks(t: Awaited<ReturnType<typeof throughput>>): Check[] {
  const share = median(t.shares);
  const overall = t.cpuRateOn / t.cpuRateOff;
  const rounds = t.shares.map((s) => `${(100 * s).toFixed(0)} %`).join(", ");
  return [
    {
      what: `ingestion with detection on, share of detection off (${MACHINES} machines at once; samples per second of the server's CPU, its stops written): the median of ${t.shares.length} rounds`,
      got: `${(100 * share).toFixed(1)} % (rounds ${rounds}; all rounds together ${(100 * overall).toFixed(1)} %, ${t.cpuRateOn.toFixed(0)} / ${t.cpuRateOff.toFixed(0)} samples per CPU-second)`,
      ok: share >= 0.9,
      target: ">= 90 %",
    },
    {
      what: "the same, samples per second of wall clock (moves with the machine's load)",
      got: `${(100 * (t.rateOn / t.rateOff)).toFixed(1)} % (${t.rateOn.toFixed(0)} / ${t.rateOff.toFixed(0)} samples/s)`,
      ok: true,
      target: "(reported)",
    },
    {
      what: "detected stops, a machine on / off, the warm-up day included (correctness of the run)",
      got: `${t.stopsOn} / ${t.stopsOff}`,
      ok: t.stopsOn === 12 * (ROUNDS + 1) && t.stopsOff === 0,
      target: `${12 * (ROUNDS + 1)} / 0`,
    },
  ];
}

function perStopChecks(s: Awaited<ReturnType<typeof perStop>>): Check[] {
  return [
    {
      what: `D1 write statements of the signal store per detected stop (${s.stops} stops, ${s.closed} closed)`,
      got: (s.storeStopWrites / Math.max(1, s.stops)).toFixed(2),
      ok: s.stops === STOPS && s.closed === STOPS && s.storeStopWrites === 2 * STOPS,
      target: "2 (one when it opens, one when it closes)",
    },
    {
      what: `D1 reads by the upload route (${s.uploads} uploads)`,
      got: `${s.uploadReads}`,
      ok: s.uploadReads === 0,
      target: "0",
    },
    {
      what: `D1 reads by the signal store: the first stop's cycle (the machine's zone, shift definitions and their machines, the plant calendar's closures, recorded stops), then the ${STOPS - 1} others`,
      got: `${s.firstStopReads}, then ${s.laterReads}`,
      ok: s.firstStopReads <= 5 && s.laterReads === 0,
      target: "at most 5 once, then 0",
    },
    {
      what: "directory reads by the signal store (the company's shard, kept 2 s for company moves, read before a write of stops)",
      got: `${s.directoryReads} for ${s.storeStopWrites} writes`,
      ok: s.directoryReads <= s.storeStopWrites,
      target: "at most one per write",
    },
  ];
}

function yearChecks(y: Awaited<ReturnType<typeof yearOfHistory>>): Check[] {
  return y.reads.map((read) => ({
    what: `a year of 1 Hz history, late batch ${read.label}: blocks decoded by detection, summaries read`,
    got: `${read.blocks} blocks, ${read.summaries} summaries`,
    ok: read.blocks === 0 && read.summaries <= 3 * 72,
    target: "0 blocks; summaries of the hours around the touched one only",
  }));
}

function restartChecks(r: Awaited<ReturnType<typeof restart>>): Check[] {
  return [
    {
      what: "a stop open across a restart: same stop, closed by the next piece, with its stream events",
      got: r.ok ? "yes" : JSON.stringify({ open: r.open, after: r.afterRestart, closed: r.closed }),
      ok: r.ok,
      target: "yes",
    },
  ];
}

async function main(): Promise<void> {
  rmSync(STATE, { recursive: true, force: true });
  applyMigrations(STATE);
  const child = {
    current: spawnDevServer({
      port: PORT,
      persistTo: STATE,
      vars: [`OPERATOR_TOKEN:${TOKEN}`],
      script: "bench/workers/d1-counting.ts",
      env: PRIVATE_REGISTRY,
    }),
  };
  const load = [loadavg()[0] ?? 0];
  try {
    await waitForHealthz(BASE, child.current);
    console.log(
      `Throughput: ${MACHINES} machines at once, detection off then on, ${ROUNDS} rounds...`,
    );
    const t = PARTS.includes("1") ? await throughput(child.current.pid ?? 0) : null;
    load.push(loadavg()[0] ?? 0);
    console.log(`D1 per detected stop, live uploads... (restarts so far: ${bench.restarts()})`);
    const s = PARTS.includes("2") ? await perStop() : null;
    console.log(
      `A year of 1 Hz history (${YEAR_DAYS} days)... (restarts so far: ${bench.restarts()})`,
    );
    const y = PARTS.includes("3") ? await yearOfHistory() : null;
    load.push(loadavg()[0] ?? 0);
    console.log("Restart with a stop open...");
    const r = PARTS.includes("4") ? await restart(child) : null;
    load.push(loadavg()[0] ?? 0);
    const checks = [
      ...(t ? throughputChecks(t) : []),
      ...(s ? perStopChecks(s) : []),
      ...(y ? yearChecks(y) : []),
      ...(r ? restartChecks(r) : []),
    ];
    const date = new Date().toISOString().slice(0, 10);
    const report = [
      `# Stop detection (${date})`,
      "",
      `\`npx tsx bench/detection.ts\`; ${cpus().length} cores, load average ${load.map((l) => l.toFixed(1)).join(" -> ")} (other agents at work on the machine); ${y ? `a year of history: ${YEAR_DAYS} days ingested in ${y.ingestS.toFixed(0)} s, ${y.stops} detected stops; ` : `parts ${PARTS}; `}the local runtime restarted under ${bench.restarts()} call(s), resent.`,
      "",
      "| Check | Measured | Target |",
      "|---|---|---|",
      ...checks.map(
        (c) => `| ${c.what} | ${c.got} | ${c.target} ${c.ok ? "(met)" : "(**missed**)"} |`,
      ),
      "",
    ].join("\n");
    if (PARTS === "1234") writeFileSync(RESULTS, report);
    console.log(`\n${report}`);
    const misses = checks.filter((c) => !c.ok);
    if (misses.length > 0) {
      console.error(`Missed: ${misses.map((c) => c.what).join("; ")}`);
      process.exitCode = 1;
    }
  } finally {
    await stopDevServer(child.current);
    rmSync(STATE, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
