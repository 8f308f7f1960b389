/**
 * `npm start`: the whole local demo in one command.
 *
 * 1. creates `.dev.vars` from `.dev.vars.example` when missing;
 * 2. applies the D1 migrations to the local database;
 * 3. runs `wrangler dev` (127.0.0.1:8787, from wrangler.toml), forwarding Ctrl-C to it
 *    and exiting with its exit code;
 * 4. waits until GET /openapi.json answers 200 (at most 60 s);
 * 5. loads the demo data once (scripts/lib/demo-seed.ts);
 * 6. prints the URLs, the demo keys and four curl commands to paste.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { join } from "node:path";
import { DEMO_PLANT_A } from "./lib/demo-data";
import { type DemoKey, PartialSeedError, seedDemo } from "./lib/demo-seed";
import { HttpError } from "./lib/http";
import { OperatorClient } from "./lib/operator-client";
import { DEFAULT_BASE_URL, ensureDevVars, PROJECT_ROOT, resolveOperatorToken } from "./lib/project";
import { listPublicMachines, listPublicSignals } from "./lib/public-client";

const BASE_URL = DEFAULT_BASE_URL;
const READY_PATH = "/openapi.json";
const READY_TIMEOUT_MS = 60_000;
const POLL_INTERVAL_MS = 500;
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

/** Runs a wrangler command to completion with inherited output; returns its exit code. */
function runWrangler(args: string[], env: NodeJS.ProcessEnv): number {
  const result = spawnSync(process.execPath, [WRANGLER_BIN, ...args], {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
    env,
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** Looks up Asset 0's uuid and its power signal's public id through the public API. */
async function findExampleIds(apiKey: string): Promise<{ uuid: string; powerId: string }> {
  const machines = await listPublicMachines(BASE_URL, apiKey);
  const asset0 = machines.find((machine) => machine.name === "Asset 0");
  if (!asset0?.uuid) throw new Error('GET /v1/machines has no "Asset 0" with a uuid');
  const signals = await listPublicSignals(BASE_URL, apiKey, asset0.uuid);
  const power = signals.find((signal) => signal.name === "power");
  if (!power) throw new Error(`GET /v1/machines/${asset0.uuid}/signals has no "power" signal`);
  return { uuid: asset0.uuid, powerId: power.public_id };
}

/** Builds the closing banner: URLs, keys, curl commands, how to stop. */
async function banner(keys: DemoKey[]): Promise<string> {
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
  ];
  if (fullKey) {
    const header = `-H "x-api-key: ${fullKey.key}"`;
    let uuid = "MACHINE_UUID";
    let powerId = "POWER_PUBLIC_ID";
    try {
      ({ uuid, powerId } = await findExampleIds(fullKey.key));
    } catch (error) {
      lines.push("", `(Could not look up Asset 0 for the examples: ${describe(error)})`);
    }
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
  lines.push("", "Press Ctrl-C to stop.", "=".repeat(72), "");
  return lines.join("\n");
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

  const migrated = runWrangler(["d1", "migrations", "apply", "DB", "--local"], {
    ...quietEnv,
    CI: "true",
  });
  if (migrated !== 0) {
    console.error("Applying the D1 migrations failed.");
    process.exitCode = migrated;
    return;
  }

  const dev = spawn(process.execPath, [WRANGLER_BIN, "dev"], {
    cwd: PROJECT_ROOT,
    stdio: "inherit",
    env: quietEnv,
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (dev.exitCode === null && dev.signalCode === null) dev.kill(signal);
    });
  }
  dev.on("error", (error) => {
    console.error(`Could not start wrangler dev: ${error.message}`);
    process.exit(1);
  });
  dev.on("exit", (code, signal) => {
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
    const client = new OperatorClient({ baseUrl: BASE_URL, token });
    const { seeded, keys } = await seedDemo(client);
    if (!seeded) console.log("Demo data already loaded.");
    console.log(await banner(keys));
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
