/**
 * `npm run bench:start [-- --runs N --port P --keep]`: how long `npm start` takes, measured
 * from outside as a new user meets it, for the figures of the README and docs/demo-data.md.
 *
 * The project's files are copied to a temporary folder (without `node_modules`, which is
 * linked, `.wrangler`, `.dev.vars` and `.git`), so that the checkout's own demo state is
 * never touched. Then N times (default 5): `npm start -- --port P` on a deleted `.wrangler`
 * (a fresh clone's first start: migrations, the demo's load, Fleet B's history, both weeks),
 * stopped with SIGINT (Ctrl-C) once everything is loaded, then started again on that state
 * (a restart) and stopped the same way. Each start is timed from the spawn of `npm` to:
 *
 * - the first answer: `GET /openapi.json` answering 200 (polled every 250 ms);
 * - the banner (its `running at` line);
 * - Demo Plant A's week filled (the `Replay: Demo Plant A` line);
 * - Fleet B's history loaded (a fresh start only);
 * - everything loaded (the `Replay: Fleet B's recorded week` line, the last one).
 *
 * It prints the median and the slowest of each, with the load average it ran under (the
 * 1-minute figure when each start began and ended) and the lost requests of wrangler dev's
 * proxy that the demo load met and retried (`Retrying ... 503` and `... 500` lines of
 * `.wrangler/start.log`, docs/demo-data.md), and writes the same report to
 * `bench/start-results.md`. Exits 1 when a start failed or did not get everything loaded
 * within its time limits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { answers200 } from "../scripts/lib/local-server";
import { ROOT } from "./lib/bench-env";
import { percentile, sleep } from "./lib/local-worker";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "5" },
    port: { type: "string", default: process.env.BENCH_START_PORT ?? "8803" },
    keep: { type: "boolean", default: false },
  },
});
const RUNS = Number(args.runs);
const PORT = Number(args.port);
if (!Number.isInteger(RUNS) || RUNS < 1 || !Number.isInteger(PORT) || PORT < 1 || PORT > 65535) {
  console.error("usage: npm run bench:start -- [--runs <n >= 1>] [--port <1-65535>] [--keep]");
  process.exit(2);
}
const BASE_URL = `http://127.0.0.1:${PORT}`;
/** Time limits of one start, in seconds from the command. */
const LIMITS = { firstAnswer: 240, banner: 420, everything: 1_200 };
/** How long a start may take to end after Ctrl-C before it is killed. */
const STOP_GRACE_MS = 20_000;

/** The milestones of one start, in seconds from the spawn of `npm start`. */
interface Milestones {
  firstAnswer?: number;
  banner?: number;
  plantAWeek?: number;
  fleetHistory?: number;
  everything?: number;
}
type Milestone = keyof Milestones;

interface StartRun {
  kind: "fresh" | "restart";
  milestones: Milestones;
  /** The 1-minute load average when the start began and when it ended. */
  load: [number, number];
  /**
   * Lost requests of the proxy retried by the demo load: a 503 "restarted mid-request" (wrangler
   * 4.86), or a 500 without `X-Request-Id` (4.164; scripts/lib/demo-fetch.ts).
   */
  lost503: number;
  /** Every retry of the demo load, whatever its cause. */
  retries: number;
  /** The banner's own account, `Up in ... s: ...`. */
  upIn?: string;
  failure?: string;
}

/** Which stdout line marks which milestone. */
const MARKS: [Milestone, RegExp][] = [
  ["banner", /^Production Monitoring API running at /],
  ["plantAWeek", /^Replay: Demo Plant A/],
  ["fleetHistory", /^Fleet B's history loaded/],
  ["everything", /^Replay: Fleet B's recorded week/],
];
/** Lines of `npm start` that say a part of the demo could not be loaded. */
const FAILURE = /failed|could not|did not answer|stopped with code/i;

/**
 * Copies the project to a temporary folder: its files without `node_modules` (linked),
 * `.wrangler`, `.dev.vars`, `.git` and build output.
 */
function copyProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "pm-bench-start-"));
  const skip = new Set(["node_modules", ".wrangler", ".dev.vars", ".git", "dist", "coverage"]);
  cpSync(ROOT, dir, {
    recursive: true,
    filter: (source) => source === ROOT || !skip.has(basename(source)),
  });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

/** `npm start -- --port <PORT>` in `dir`, in a process group of its own (for Ctrl-C). */
function spawnStart(dir: string): ChildProcess {
  const npmCli = process.env.npm_execpath;
  const [command, prefix] =
    npmCli?.endsWith(".js") === true ? [process.execPath, [npmCli]] : ["npm", []];
  return spawn(command, [...prefix, "start", "--", "--port", String(PORT)], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
}

/** Ctrl-C to the start's process group, then SIGKILL after {@link STOP_GRACE_MS}. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  signalGroup("SIGINT");
  const timer = setTimeout(() => signalGroup("SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
  // wrangler's runtime may outlive npm by a moment: wait until the port is free.
  for (let i = 0; i < 40 && (await answers200(`${BASE_URL}/openapi.json`)); i++) await sleep(250);
}

/** The child running now, stopped when this process is interrupted. */
let running: ChildProcess | undefined;

/** One `npm start` in `dir`, timed until everything is loaded (or it fails). */
async function timeStart(dir: string, kind: StartRun["kind"]): Promise<StartRun> {
  const run: StartRun = {
    kind,
    milestones: {},
    load: [loadavg()[0] ?? 0, 0],
    lost503: 0,
    retries: 0,
  };
  const started = performance.now();
  const since = () => (performance.now() - started) / 1000;
  const child = spawnStart(dir);
  running = child;
  let output = "";
  let pending = "";
  const onData = (chunk: Buffer) => {
    pending += String(chunk);
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      output += `${line}\n`;
      for (const [mark, pattern] of MARKS) {
        if (pattern.test(line) && run.milestones[mark] === undefined)
          run.milestones[mark] = since();
      }
      if (line.startsWith("Up in ")) run.upIn = line;
      if (FAILURE.test(line) && run.failure === undefined) run.failure = line;
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  let ended = false;
  void exited.then(() => {
    ended = true;
  });

  // The first answer, polled from outside as a user's first call would meet it.
  while (!ended && since() < LIMITS.firstAnswer) {
    if (await answers200(`${BASE_URL}/openapi.json`)) {
      run.milestones.firstAnswer = since();
      break;
    }
    await sleep(250);
  }
  // Then the lines of npm start until everything is loaded, a failure, or a time limit.
  while (!ended && run.failure === undefined && run.milestones.everything === undefined) {
    if (run.milestones.banner === undefined && since() > LIMITS.banner) break;
    if (since() > LIMITS.everything) break;
    await sleep(250);
  }
  await stop(child);
  running = undefined;
  run.load[1] = loadavg()[0] ?? 0;
  if (run.failure === undefined && run.milestones.everything === undefined) {
    run.failure = ended
      ? `npm start ended early:\n${output.split("\n").slice(-15).join("\n")}`
      : `not everything loaded within its limits (${JSON.stringify(LIMITS)} s)`;
  }
  try {
    const log = readFileSync(join(dir, ".wrangler", "start.log"), "utf8");
    run.retries = log.match(/\] Retrying /g)?.length ?? 0;
    run.lost503 =
      log.match(/\] Retrying .* answered (503 .*restarted mid-request|500 )/g)?.length ?? 0;
  } catch {
    // no log: nothing retried
  }
  return run;
}

const fmt = (seconds: number) => seconds.toFixed(1);

/** `median (slowest)` of the values some of `runs` have, `-` when none has one. */
function medianCell(found: readonly (number | undefined)[], runs: number): string {
  const values = found.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (values.length === 0) return "-";
  const median =
    values.length % 2 === 1
      ? (values[(values.length - 1) / 2] ?? Number.NaN)
      : ((values[values.length / 2 - 1] ?? 0) + (values[values.length / 2] ?? 0)) / 2;
  const slowest = percentile(values, 100);
  return values.length === runs
    ? `${fmt(median)} (${fmt(slowest)})`
    : `${fmt(median)} (${fmt(slowest)}; ${values.length} of ${runs})`;
}

/** `median (slowest)` of a milestone over runs. */
function cell(runs: readonly StartRun[], mark: Milestone): string {
  return medianCell(
    runs.map((r) => r.milestones[mark]),
    runs.length,
  );
}

/**
 * The banner's own account of a start's phases (`Up in 25.2 s: tsx and modules 1.1 s,
 * migrations 5.1 s, ...`), as phase name to seconds.
 */
function phasesOf(upIn: string | undefined): Map<string, number> {
  const phases = new Map<string, number>();
  const list = (upIn ?? "").replace(/^Up in [\d.]+ s: /, "").replace(/\.$/, "");
  for (const part of list.split(", ")) {
    const match = /^(.+) ([\d.]+) s$/.exec(part);
    if (match?.[1] && match[2]) phases.set(match[1], Number(match[2]));
  }
  return phases;
}

/** The phases of the banner's account, median (slowest), fresh starts beside restarts. */
function phaseRows(fresh: readonly StartRun[], restarts: readonly StartRun[]): string[] {
  const names = [...new Set([...fresh, ...restarts].flatMap((r) => [...phasesOf(r.upIn).keys()]))];
  return names.map((name) => {
    const of = (group: readonly StartRun[]) =>
      medianCell(
        group.map((r) => phasesOf(r.upIn).get(name)),
        group.length,
      );
    return `| ${name} | ${of(fresh)} | ${of(restarts)} |`;
  });
}

/** The report: a table of medians and slowest, the load, the lost requests, each start. */
function report(runs: readonly StartRun[], startedAt: Date): string {
  const loads = runs.flatMap((r) => r.load).sort((a, b) => a - b);
  const row = (label: string, group: readonly StartRun[]) =>
    `| ${label} | ${group.length} | ${cell(group, "firstAnswer")} | ${cell(group, "banner")} | ` +
    `${cell(group, "plantAWeek")} | ${cell(group, "fleetHistory")} | ${cell(group, "everything")} |`;
  const fresh = runs.filter((r) => r.kind === "fresh");
  const restarts = runs.filter((r) => r.kind === "restart");
  const wrangler = JSON.parse(
    readFileSync(join(ROOT, "node_modules", "wrangler", "package.json"), "utf8"),
  ) as { version: string };
  const lines = [
    "# `npm start`, timed from outside (`npm run bench:start`)",
    "",
    `${startedAt.toISOString().slice(0, 16)}Z, Node ${process.version}, wrangler ${wrangler.version}, ` +
      `${availableParallelism()} CPU cores; load average (1 min, at each start's beginning and end) ` +
      `${fmt(loads[0] ?? 0)} to ${fmt(loads.at(-1) ?? 0)}, median ${fmt(percentile(loads, 50))}. ` +
      `Seconds from the command, median (slowest); a fresh start is a copy of the project ` +
      "without `.wrangler`, a restart is the same copy started again.",
    "",
    "| Start | runs | first answer | banner | Demo Plant A's week | Fleet B's history | everything loaded |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    row("fresh", fresh),
    row("restart", restarts),
    "",
    "Until the banner, by the banner's own account (`Up in ...`; a restart checks the demo's",
    "keys instead of loading it), median (slowest):",
    "",
    "| Phase | fresh | restart |",
    "| --- | --- | --- |",
    ...phaseRows(fresh, restarts),
    "",
    `Requests of the demo load lost by wrangler dev's proxy (a 503 "Your worker restarted ` +
      `mid-request" or a 500 without X-Request-Id, retried): ${runs.reduce((n, r) => n + r.lost503, 0)} in ${runs.length} starts ` +
      `(${runs.filter((r) => r.lost503 > 0).length} starts met at least one); retries of any ` +
      `cause: ${runs.reduce((n, r) => n + r.retries, 0)}.`,
    "",
    "Each start:",
    "",
    ...runs.map(
      (r, i) =>
        `${i + 1}. ${r.kind}, load ${fmt(r.load[0])} to ${fmt(r.load[1])}: ` +
        (Object.entries(r.milestones) as [Milestone, number][])
          .map(([mark, at]) => `${mark} ${fmt(at)} s`)
          .join(", ") +
        (r.upIn ? `; banner's account: ${r.upIn}` : "") +
        (r.lost503 > 0 ? `; ${r.lost503} lost requests retried` : "") +
        (r.failure ? `; FAILED: ${r.failure}` : ""),
    ),
    "",
  ];
  return lines.join("\n");
}

async function main(): Promise<void> {
  if (await answers200(`${BASE_URL}/openapi.json`)) {
    console.error(`Something already answers at ${BASE_URL}: stop it, or give --port.`);
    process.exitCode = 1;
    return;
  }
  const dir = copyProject();
  const cleanUp = () => {
    if (!args.keep) rmSync(dir, { recursive: true, force: true });
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (running?.pid !== undefined) {
        try {
          process.kill(-running.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
      cleanUp();
      process.exit(130);
    });
  }
  const startedAt = new Date();
  const runs: StartRun[] = [];
  try {
    for (let i = 1; i <= RUNS; i++) {
      rmSync(join(dir, ".wrangler"), { recursive: true, force: true });
      rmSync(join(dir, ".dev.vars"), { force: true });
      for (const kind of ["fresh", "restart"] as const) {
        const run = await timeStart(dir, kind);
        runs.push(run);
        console.log(
          `${kind} start ${i} of ${RUNS} (load ${fmt(run.load[0])} to ${fmt(run.load[1])}): ` +
            (Object.entries(run.milestones) as [Milestone, number][])
              .map(([mark, at]) => `${mark} ${fmt(at)} s`)
              .join(", ") +
            (run.lost503 > 0 ? `, ${run.lost503} lost requests retried` : "") +
            (run.failure ? `\n  FAILED: ${run.failure}` : ""),
        );
        if (run.failure) break;
      }
      if (runs.at(-1)?.failure) break;
    }
  } finally {
    cleanUp();
  }
  const text = report(runs, startedAt);
  console.log(`\n${text}`);
  writeFileSync(join(ROOT, "bench", "start-results.md"), text);
  console.log("Written to bench/start-results.md.");
  process.exitCode = runs.some((r) => r.failure) ? 1 : 0;
}

await main();
