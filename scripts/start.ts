/**
 * `npm start`: the whole local demo in one command.
 *
 * 1. creates `.dev.vars` from `.dev.vars.example` when missing;
 * 2. applies the D1 migrations to every local database, the directory (`DB`) and every shard
 *    (`SHARD_<n>`) of wrangler.toml, in one runtime (scripts/lib/local-migrations.ts);
 * 3. runs `wrangler dev` (127.0.0.1:8787 from wrangler.toml, or `--port <n>`), forwarding
 *    Ctrl-C to it and exiting with its exit code; once GET /openapi.json answers 200 it
 *    records the URL for the follow-up commands (scripts/lib/local-server.ts);
 * 4. loads the demo data once (scripts/lib/demo-seed.ts), with its fixed ids
 *    (docs/demo-data.md), retrying what says nothing was done (scripts/lib/demo-fetch.ts);
 * 5. prints the banner (scripts/lib/start-banner.ts): URLs, keys, webhook secrets, commands,
 *    and where the start-up time went;
 * 6. then fills the last 7 days of both demo plants and plays the running shift live.
 *
 * Quiet by default: the migrations are listed once, then the banner. The output of
 * wrangler (one line per request, about 200 while the demo loads) and the seed's progress
 * go to `.wrangler/start.log`; `npm start -- --verbose` shows them on the terminal instead.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join, relative } from "node:path";
import { DEMO_PLANT_A, FLEET_B } from "./lib/demo-data";
import { demoFetch } from "./lib/demo-fetch";
import { completeFleetHistory, readFleetFiles } from "./lib/demo-fleet-history";
import { type DemoKey, PartialSeedError, seedDemo } from "./lib/demo-seed";
import { HttpError } from "./lib/http";
import { localDatabases, migrationsRecorded } from "./lib/local-migrations";
import { answers200, forgetLocalServer, recordLocalServer } from "./lib/local-server";
import { connectOperator, type OperatorConnection } from "./lib/operator-api";
import {
  DEFAULT_BASE_URL,
  ensureDevVars,
  PROJECT_ROOT,
  resolveOperatorToken,
  WRANGLER_BIN,
} from "./lib/project";
import { Replay, startReplay } from "./lib/replay";
import { fillFleetWeek } from "./lib/replay-fleet";
import { startBanner } from "./lib/start-banner";

/** `--port <n>`: another port than wrangler.toml's (8787), for a second checkout. */
const PORT = portArgument(process.argv.slice(2));
const BASE_URL = PORT === undefined ? DEFAULT_BASE_URL : `http://127.0.0.1:${PORT}`;
const READY_PATH = "/openapi.json";
/** How long `wrangler dev` may take to answer (about 3 s alone, 10 s and more under load). */
const READY_TIMEOUT_MS = 120_000;
const POLL_INTERVAL_MS = 250;
/** Where the output of wrangler and the seed goes unless `--verbose`. */
const LOG_PATH = join(PROJECT_ROOT, ".wrangler", "start.log");
const LOG_NAME = relative(PROJECT_ROOT, LOG_PATH);
/** Lines of the log shown when wrangler fails in quiet mode. */
const TAIL_LINES = 40;

/** The number after `--port`, or undefined; exits with a usage message when it is not a port. */
function portArgument(args: readonly string[]): number | undefined {
  const i = args.indexOf("--port");
  if (i < 0) return undefined;
  const port = Number(args[i + 1]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) {
    console.error("usage: npm start -- [--port <1-65535>] [--verbose] [--no-replay]");
    process.exit(2);
  }
  return port;
}

/**
 * Polls `url` until it answers 200.
 *
 * @param url absolute URL.
 * @param timeoutMs how long to wait, in milliseconds.
 * @param child the process serving it; waiting stops when it exits.
 * @returns true when ready, false on timeout or when the child exited.
 */
async function waitUntilReady(
  url: string,
  timeoutMs: number,
  child: ChildProcess,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    if (await answers200(url)) return true;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  return false;
}

/**
 * Applies the D1 migrations to every local database of wrangler.toml in one local runtime
 * (scripts/migrate-d1.ts `--local`), unless its record says the same files were applied to
 * the same databases (a restart), in a process of its own (its Miniflare is disposed of when
 * it ends, and a Ctrl-C stops it with this script). Its lines (one per database) are
 * printed; on a failure, all of it.
 *
 * @param track told of the child while it runs, so that a stop signal reaches it.
 * @returns false when a migration failed or the start was stopped.
 */
async function migrate(track: (child: ChildProcess | undefined) => void): Promise<boolean> {
  const databases = localDatabases(readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8"));
  if (migrationsRecorded(PROJECT_ROOT, databases)) {
    console.log(
      `D1 migrations: the local databases ${databases.map((d) => d.binding).join(", ")} are up to date.`,
    );
    return true;
  }
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(PROJECT_ROOT, "scripts", "migrate-d1.ts"), "--local"],
    { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  track(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += String(chunk);
  });
  child.stderr.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const status = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", resolve);
  });
  track(undefined);
  const output = `${stdout}${stderr}`.trimEnd();
  appendFileSync(LOG_PATH, `${output}\n`);
  if (stopping) return false;
  if (status !== 0) {
    console.error(output);
    return false;
  }
  console.log(stdout.trimEnd());
  return true;
}

/** The last `count` lines of the log, for a failure in quiet mode. */
function logTail(count: number): string {
  try {
    return readFileSync(LOG_PATH, "utf8").trimEnd().split("\n").slice(-count).join("\n");
  } catch {
    return "";
  }
}

function describe(error: unknown): string {
  if (error instanceof HttpError) {
    return `${error.method} ${error.url} answered ${error.status} ${error.body}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Set on Ctrl-C (or SIGTERM): what fails after it is the stop, not worth a message. */
let stopping = false;

/** A clock of the start's phases, for the banner and docs/demo-data.md's measurements. */
function phaseClock() {
  const phases: [string, number][] = [];
  let last = performance.now();
  return {
    phases,
    /** Ends the phase that began at the previous call (or at the start). */
    done(name: string): void {
      const now = performance.now();
      phases.push([name, (now - last) / 1000]);
      last = now;
    },
  };
}

async function main(): Promise<void> {
  const verbose = process.argv.slice(2).some((arg) => arg === "--verbose" || arg === "-v");
  const replay = !process.argv.slice(2).includes("--no-replay");
  // From this Node process's start: tsx and the loading of the script's modules.
  const clock = phaseClock();
  clock.phases.push(["tsx and modules", performance.now() / 1000]);
  mkdirSync(dirname(LOG_PATH), { recursive: true });
  writeFileSync(LOG_PATH, "");
  if (ensureDevVars()) console.log("Created .dev.vars from .dev.vars.example.");
  // Offline: no usage metrics, and no fetch of the `Request.cf` placeholder from the network.
  const quietEnv = {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
  };

  if (await answers200(`${BASE_URL}${READY_PATH}`)) {
    console.error(
      `Something already answers at ${BASE_URL} (another wrangler dev?). Stop it first, or ` +
        "give another port: npm start -- --port 8788.",
    );
    process.exitCode = 1;
    return;
  }

  // Ctrl-C (or SIGTERM) stops whichever child runs: the migrations, then wrangler dev (whose
  // exit ends this script, below).
  let child: ChildProcess | undefined;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      stopping = true;
      if (child && child.exitCode === null && child.signalCode === null) child.kill(signal);
      else process.exit(128 + (constants.signals[signal] ?? 0));
    });
  }
  if (!(await migrate((running) => (child = running)))) {
    if (!stopping) console.error("Applying the D1 migrations failed.");
    process.exitCode = 1;
    return;
  }
  clock.done("migrations");

  const logFd = verbose ? undefined : openSync(LOG_PATH, "a");
  // The project's own wrangler, started with this Node rather than through `npx`: npx does
  // not pass SIGTERM on, while wrangler's bin script passes signals to its worker process.
  const devArgs = [WRANGLER_BIN, "dev", ...(PORT === undefined ? [] : ["--port", String(PORT)])];
  const dev = spawn(process.execPath, devArgs, {
    cwd: PROJECT_ROOT,
    stdio: logFd === undefined ? "inherit" : ["ignore", logFd, logFd],
    env: quietEnv,
  });
  child = dev;
  dev.on("error", (error) => {
    console.error(`Could not start wrangler dev: ${error.message}`);
    process.exit(1);
  });
  dev.on("exit", (code, signal) => {
    forgetLocalServer();
    if (!verbose && !stopping && code !== 0 && signal === null) {
      console.error(`wrangler dev stopped with code ${code}. The end of ${LOG_NAME}:`);
      console.error(logTail(TAIL_LINES));
    }
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });

  if (!(await waitUntilReady(`${BASE_URL}${READY_PATH}`, READY_TIMEOUT_MS, dev))) {
    if (dev.exitCode === null) {
      console.error(
        `${BASE_URL}${READY_PATH} did not answer 200 within ${READY_TIMEOUT_MS / 1000} s.`,
      );
      console.error("wrangler dev keeps running; press Ctrl-C to stop it.");
    }
    return;
  }
  recordLocalServer(BASE_URL);
  clock.done("wrangler dev to its first answer");

  // Progress lines carry the seconds since this process started, for the measurements of
  // docs/demo-data.md ("Where npm start spends its time").
  const stamp = (line: string) => `[${(performance.now() / 1000).toFixed(1)} s] ${line}`;
  const log = verbose
    ? (line: string) => console.log(stamp(line))
    : (line: string) => appendFileSync(LOG_PATH, `${stamp(line)}\n`);
  // Every call of the demo load retries what says nothing was done (a lost request of
  // wrangler dev's proxy included: docs/demo-data.md), and says so in the log.
  const send = demoFetch({ onRetry: (line) => log(`Retrying ${line}`) });
  let keys: DemoKey[];
  // The token wrangler dev just read, even when the shell has another OPERATOR_TOKEN.
  const token = resolveOperatorToken({ preferDevVars: true });
  try {
    const client = connectOperator(BASE_URL, token, send);
    if (!verbose) console.log(`Loading the demo data if needed (progress in ${LOG_NAME}) ...`);
    // Fleet B's history after the banner: nothing the banner shows needs it.
    const seed = await seedDemo(client, log, { deferFleetHistory: true });
    keys = seed.keys;
    console.log(seed.seeded ? "Demo data loaded." : "Demo data already loaded.");
    clock.done(seed.seeded ? "demo data" : "demo keys checked");
  } catch (error) {
    if (stopping) {
      // Stopped while loading: only what the next start needs to know.
      if (error instanceof PartialSeedError) console.error(error.message);
      return;
    }
    if (error instanceof PartialSeedError) {
      console.error(`Loading the demo data failed: ${describe(error.cause)}\n${error.message}`);
    } else {
      console.error(`Loading the demo data failed: ${describe(error)}`);
    }
    console.error("wrangler dev keeps running; press Ctrl-C to stop it.");
    return;
  }
  console.log(
    startBanner({
      baseUrl: BASE_URL,
      keys,
      verbose,
      logName: LOG_NAME,
      replay,
      phases: clock.phases,
    }),
  );
  await completeDemo(connectOperator(BASE_URL, token, send), keys, replay, log);
}

/**
 * After the banner: Fleet B's history when it is not complete (a first start, or one stopped
 * while it loaded), then the demo weeks when the replay is on. Failures are printed; the
 * server keeps running.
 */
async function completeDemo(
  client: OperatorConnection,
  keys: readonly DemoKey[],
  replay: boolean,
  log: (line: string) => void,
): Promise<void> {
  if (replay) await replayPlantA(keys, client.token, log);
  const started = performance.now();
  try {
    const loaded = await completeFleetHistory(client, keys, log);
    if (loaded) {
      const took = ((performance.now() - started) / 1000).toFixed(1);
      console.log(`Fleet B's history loaded: ${loaded} (${took} s).`);
    }
  } catch (error) {
    if (!stopping) console.error(`Fleet B's history could not be loaded: ${describe(error)}`);
    return;
  }
  if (replay) await replayFleetB(keys, client.token, log);
}

/**
 * Demo Plant A's replay: the last 7 days, then the running shift so far, then every minute
 * until Ctrl-C (scripts/lib/replay.ts). A failure is printed; the server keeps running.
 */
async function replayPlantA(
  keys: readonly DemoKey[],
  operatorToken: string,
  log: (line: string) => void,
): Promise<void> {
  const started = performance.now();
  const plantKey = keys.find((k) => k.company === DEMO_PLANT_A && k.name === "demo-full-access");
  if (!plantKey) return;
  const controller = new AbortController();
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => controller.abort());
  }
  const took = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const replayLog = (line: string) =>
    line.startsWith("Replay: Demo Plant A") ? console.log(`${line} (${took()})`) : log(line);
  try {
    const { running } = await startReplay(
      { baseUrl: BASE_URL, key: plantKey.key, operatorToken },
      { log: replayLog, signal: controller.signal },
    );
    running.catch((error: unknown) => log(`Replay stopped: ${describe(error)}`));
  } catch (error) {
    if (!stopping) console.error(`The demo replay could not start: ${describe(error)}`);
  }
}

/** Fleet B's recorded week on the last 7 days (scripts/lib/replay-fleet.ts). */
async function replayFleetB(
  keys: readonly DemoKey[],
  operatorToken: string,
  log: (line: string) => void,
): Promise<void> {
  const started = performance.now();
  const fleetKey = keys.find((k) => k.company === FLEET_B);
  if (!fleetKey) return;
  try {
    const fleet = new Replay({ baseUrl: BASE_URL, key: fleetKey.key, operatorToken }, log);
    const sent = await fillFleetWeek(fleet, readFleetFiles(), Date.now());
    const took = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `Replay: Fleet B's recorded week (from Monday 2015-01-19) on the last 7 days: ` +
        `${sent.samples} samples, ${sent.stops} classified stops created (${took} s).`,
    );
  } catch (error) {
    if (!stopping) console.error(`Fleet B's demo week could not be filled: ${describe(error)}`);
  }
}

await main();
