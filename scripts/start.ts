/**
 * `npm start`: the whole local demo in one command.
 *
 * 1. creates `.dev.vars` from `.dev.vars.example` when missing;
 * 2. applies the D1 migrations to every local database: the directory (`DB`) and every
 *    shard (`SHARD_<n>`) of wrangler.toml;
 * 3. runs `wrangler dev` (127.0.0.1:8787 from wrangler.toml, or `--port <n>`), forwarding
 *    Ctrl-C to it and exiting with its exit code;
 * 4. waits until GET /openapi.json answers 200 (at most 60 s);
 * 5. loads the demo data once (scripts/lib/demo-seed.ts), with its fixed ids
 *    (docs/demo-data.md);
 * 6. prints the URLs, the demo keys and four curl commands to paste.
 *
 * Quiet by default: the migrations are listed once, then the banner. The output of
 * wrangler (one line per request, about 200 while the demo loads) and the seed's progress
 * go to `.wrangler/start.log`; `npm start -- --verbose` shows them on the terminal instead.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join, relative } from "node:path";
import { d1Bindings } from "./lib/cloudflare-setup";
import { DEMO_FILES, DEMO_PLANT_A, FLEET_B } from "./lib/demo-data";
import { ASSET_0_POWER_ID, ASSET_0_UUID } from "./lib/demo-ids";
import { type DemoKey, PartialSeedError, seedDemo } from "./lib/demo-seed";
import { HttpError } from "./lib/http";
import { connectOperator } from "./lib/operator-api";
import { DEFAULT_BASE_URL, ensureDevVars, PROJECT_ROOT, resolveOperatorToken } from "./lib/project";
import { Replay, startReplay } from "./lib/replay";
import { type FleetFiles, fillFleetWeek } from "./lib/replay-fleet";

/** `--port <n>`: another port than wrangler.toml's (8787), for a second checkout. */
const PORT = portArgument(process.argv.slice(2));
const BASE_URL = PORT === undefined ? DEFAULT_BASE_URL : `http://127.0.0.1:${PORT}`;
const READY_PATH = "/openapi.json";
const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 500;
/** Where the output of wrangler and the seed goes unless `--verbose`. */
const LOG_PATH = join(PROJECT_ROOT, ".wrangler", "start.log");
const LOG_NAME = relative(PROJECT_ROOT, LOG_PATH);
/** Lines of the log shown when wrangler fails in quiet mode. */
const TAIL_LINES = 40;
/** The day of the SME data used in the example query (a full working day). */
const EXAMPLE_DAY = "2022-09-05";
/** The body of the example metrics report: the shifts of the week from EXAMPLE_DAY. */
const EXAMPLE_METRICS_BODY = JSON.stringify({
  startDate: { between: { start: `${EXAMPLE_DAY}T00:00:00Z`, end: "2022-09-12T00:00:00Z" } },
  limit: 100,
});

// The project's own wrangler, started with this Node rather than through `npx`: npx
// does not pass SIGTERM on, which would leave wrangler running when this script is
// stopped, while wrangler's bin script does pass signals to its worker process.
const WRANGLER_BIN = createRequire(join(PROJECT_ROOT, "package.json")).resolve(
  "wrangler/bin/wrangler.js",
);

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
 * Answers whether GET `url` returns 200 within 2 s.
 *
 * @param url absolute URL.
 * @returns true on a 200, false on any other status or a connection error.
 */
async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
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
 * Applies the D1 migrations to every local database of wrangler.toml (the directory and
 * each shard: one migration stream).
 *
 * @returns the first non-zero exit code of wrangler, or 0.
 */
function applyAllMigrations(env: NodeJS.ProcessEnv, verbose: boolean): number {
  const toml = readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  for (const binding of d1Bindings(toml)) {
    const status = applyMigrations(binding, env, verbose);
    if (status !== 0) return status;
  }
  return 0;
}

/**
 * Applies the D1 migrations to one local database. Verbose: wrangler's own output. Quiet:
 * wrangler prints every migration's table once per migration applied, so its output goes
 * to the log and the names applied are listed once (all of it is shown on a failure).
 *
 * @param binding the database's binding name (`DB`, `SHARD_0`, ...).
 * @returns wrangler's exit code.
 */
function applyMigrations(binding: string, env: NodeJS.ProcessEnv, verbose: boolean): number {
  const args = [WRANGLER_BIN, "d1", "migrations", "apply", binding, "--local"];
  if (verbose) {
    const result = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, stdio: "inherit", env });
    if (result.error) throw result.error;
    return result.status ?? 1;
  }
  const result = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, env, encoding: "utf8" });
  if (result.error) throw result.error;
  const output = `${result.stdout}${result.stderr}`;
  appendFileSync(LOG_PATH, output);
  if (result.status !== 0) {
    console.error(output);
    return result.status ?? 1;
  }
  const applied = [...new Set(output.match(/\b\d{4}_[\w-]+\.sql\b/g) ?? [])];
  console.log(
    applied.length === 0
      ? `D1 migrations: the local database ${binding} is up to date.`
      : `D1 migrations applied to the local database ${binding}: ${applied.join(", ")}.`,
  );
  return 0;
}

/** The last `count` lines of the log, for a failure in quiet mode. */
function logTail(count: number): string {
  try {
    return readFileSync(LOG_PATH, "utf8").trimEnd().split("\n").slice(-count).join("\n");
  } catch {
    return "";
  }
}

/**
 * Builds the closing banner: URLs, keys, curl commands, where the log is, how to stop.
 *
 * @param keys the demo keys.
 * @param verbose whether wrangler's output is on the terminal (else in the log file).
 * @param replay whether the demo replay runs.
 */
function banner(keys: DemoKey[], verbose: boolean, replay: boolean): string {
  const fullKey =
    keys.find((key) => key.company === DEMO_PLANT_A && key.name === "demo-full-access") ?? keys[0];
  const width = Math.max(...keys.map((key) => `${key.company} / ${key.name}`.length));
  const lines = [
    "",
    "=".repeat(72),
    `Production Monitoring API running at ${BASE_URL}`,
    `API reference: ${BASE_URL}/docs   (OpenAPI: ${BASE_URL}${READY_PATH})`,
    "",
    "Demo API keys (header x-api-key; also in .wrangler/demo-keys.json):",
    ...keys.map((key) => `  ${`${key.company} / ${key.name}`.padEnd(width)}  ${key.key}`),
    "",
    "The same as shell variables (PM_KEY, PM_MACHINE_UUID, PM_POWER_ID, ...; docs/demo-data.md):",
    '  eval "$(npm run --silent demo-env)"',
  ];
  if (fullKey) {
    const header = `-H "x-api-key: ${fullKey.key}"`;
    // Fixed on every install (scripts/lib/demo-ids.ts).
    const uuid = ASSET_0_UUID;
    const powerId = ASSET_0_POWER_ID;
    const query =
      `start_time=${EXAMPLE_DAY}T00:00:00Z&end_time=${nextDay(EXAMPLE_DAY)}T00:00:00Z` +
      "&agg_unit=h&agg_function=avg";
    lines.push(
      "",
      "Try it:",
      "  # the machines of Demo Plant A",
      `  curl -s ${BASE_URL}/v1/machines ${header}`,
      "  # the signals of Asset 0",
      `  curl -s ${BASE_URL}/v1/machines/${uuid}/signals ${header}`,
      `  # hourly average power of Asset 0 on ${EXAMPLE_DAY}`,
      `  curl -s "${BASE_URL}/v1/machines/${uuid}/signals/${powerId}?${query}" ${header}`,
      `  # OEE of Demo Plant A per machine and shift, the week from ${EXAMPLE_DAY}`,
      `  curl -s -X POST ${BASE_URL}/v1/reports/metrics ${header} -H "content-type: application/json" -d '${EXAMPLE_METRICS_BODY}'`,
    );
  }
  lines.push(
    "",
    replay
      ? `Demo Plant A plays its recorded week at the current time of day: the last 7 days are filled in, the running shift plays live (every minute; npm start -- --no-replay to switch off).\nPlant board: ${BASE_URL}/board (enter the demo-full-access key)`
      : `Plant board: ${BASE_URL}/board (the replay is off: no machine runs a shift now)`,
  );
  if (!verbose) lines.push("", `Request log: ${LOG_NAME} (or: npm start -- --verbose)`);
  lines.push("", "Press Ctrl-C to stop.", "=".repeat(72), "");
  return lines.join("\n");
}

/** Fleet B's source files (data/azure-pdm/), for its demo week. */
function readFleetFiles(): FleetFiles {
  const read = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");
  return {
    telemetry: read(DEMO_FILES.azureTelemetry),
    machines: read(DEMO_FILES.azureMachines),
    failures: read(DEMO_FILES.azureFailures),
    maintenance: read(DEMO_FILES.azureMaint),
  };
}

function nextDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 10);
}

function describe(error: unknown): string {
  if (error instanceof HttpError) {
    return `${error.method} ${error.url} answered ${error.status} ${error.body}`;
  }
  return error instanceof Error ? error.message : String(error);
}

async function main(): Promise<void> {
  const verbose = process.argv.slice(2).some((arg) => arg === "--verbose" || arg === "-v");
  const replay = !process.argv.slice(2).includes("--no-replay");
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
      `Something already answers at ${BASE_URL} (another wrangler dev?). Stop it first.`,
    );
    process.exitCode = 1;
    return;
  }

  const migrated = applyAllMigrations({ ...quietEnv, CI: "true" }, verbose);
  if (migrated !== 0) {
    console.error("Applying the D1 migrations failed.");
    process.exitCode = migrated;
    return;
  }

  const logFd = verbose ? undefined : openSync(LOG_PATH, "a");
  const devArgs = [WRANGLER_BIN, "dev", ...(PORT === undefined ? [] : ["--port", String(PORT)])];
  const dev = spawn(process.execPath, devArgs, {
    cwd: PROJECT_ROOT,
    stdio: logFd === undefined ? "inherit" : ["ignore", logFd, logFd],
    env: quietEnv,
  });
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      stopping = true;
      if (dev.exitCode === null && dev.signalCode === null) dev.kill(signal);
    });
  }
  dev.on("error", (error) => {
    console.error(`Could not start wrangler dev: ${error.message}`);
    process.exit(1);
  });
  dev.on("exit", (code, signal) => {
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

  try {
    // The token wrangler dev just read, even when the shell has another OPERATOR_TOKEN.
    const token = resolveOperatorToken({ preferDevVars: true });
    const client = connectOperator(BASE_URL, token);
    if (!verbose) console.log(`Loading the demo data if needed (progress in ${LOG_NAME}) ...`);
    const log = verbose ? console.log : (line: string) => appendFileSync(LOG_PATH, `${line}\n`);
    const { seeded, keys } = await seedDemo(client, log);
    console.log(seeded ? "Demo data loaded." : "Demo data already loaded.");
    const replayKey = keys.find((k) => k.company === DEMO_PLANT_A && k.name === "demo-full-access");
    if (replay && replayKey) {
      // The replay's first pass (the last 7 days, then the running shift) before the banner,
      // so that the week's report has figures and a machine runs a shift with live
      // production when the curl commands are pasted (about 2 s on a laptop).
      const controller = new AbortController();
      for (const signal of ["SIGINT", "SIGTERM"] as const)
        process.on(signal, () => controller.abort());
      const target = { baseUrl: BASE_URL, key: replayKey.key, operatorToken: token };
      const replayLog = (line: string) =>
        line.startsWith("Replay: Demo Plant A") ? console.log(line) : log(line);
      try {
        const { running } = await startReplay(target, {
          log: replayLog,
          signal: controller.signal,
        });
        running.catch((error: unknown) => log(`Replay stopped: ${describe(error)}`));
      } catch (error) {
        console.error(`The demo replay could not start: ${describe(error)}`);
      }
      const fleetKey = keys.find((k) => k.company === FLEET_B);
      if (fleetKey) {
        try {
          const fleet = new Replay({ ...target, key: fleetKey.key }, log);
          const sent = await fillFleetWeek(fleet, readFleetFiles(), Date.now());
          console.log(
            `Replay: Fleet B's recorded week (from Monday 2015-01-19) on the last 7 days: ` +
              `${sent.samples} samples, ${sent.stops} classified stops created.`,
          );
        } catch (error) {
          console.error(`Fleet B's demo week could not be filled: ${describe(error)}`);
        }
      }
    }
    console.log(banner(keys, verbose, replay));
  } catch (error) {
    if (error instanceof PartialSeedError) {
      console.error(`Loading the demo data failed: ${describe(error.cause)}\n${error.message}`);
    } else {
      console.error(`Loading the demo data failed: ${describe(error)}`);
    }
    console.error("wrangler dev keeps running; press Ctrl-C to stop it.");
  }
}

await main();
