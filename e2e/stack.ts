/**
 * The local stack of the end-to-end suite: a `wrangler dev` of the Worker with its own
 * port and its own `--persist-to` folder (so it never touches `npm start`'s database),
 * and a Stoplight Prism proxy in front of it. Every process is started in its own
 * process group and stopped with that group, also when the suite fails.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { d1Bindings } from "../scripts/lib/cloudflare-setup";
import { WRANGLER_BIN } from "../scripts/lib/project";

/** The project root (the folder holding package.json). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const requireFromRoot = createRequire(join(PROJECT_ROOT, "package.json"));
const PRISM_BIN = join(
  dirname(requireFromRoot.resolve("@stoplight/prism-cli/package.json")),
  "dist/index.js",
);
const SPECTRAL_BIN = join(
  dirname(requireFromRoot.resolve("@stoplight/spectral-cli/package.json")),
  "dist/index.js",
);

/** How long the Worker and Prism may take to answer their first request. */
const READY_TIMEOUT_MS = 90_000;
const POLL_INTERVAL_MS = 300;
/** How long a stopped process group gets between SIGTERM and SIGKILL. */
const STOP_GRACE_MS = 5_000;

/**
 * Offline settings for every wrangler process: no usage metrics, and no fetch of the
 * `Request.cf` placeholder object from the network.
 */
const OFFLINE_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "true",
};

/** Stacks started and not stopped yet, for {@link stopAllStacks}. */
const ACTIVE = new Set<Stack>();

/** A running child process group and the file its output goes to. */
export interface Service {
  name: string;
  child: ChildProcess;
  logPath: string;
}

/** What {@link startStack} started; pass it to {@link stopStack}. */
export interface Stack {
  /** Origin of the Worker, for example `http://127.0.0.1:41234`. */
  workerUrl: string;
  /** Origin of the Prism proxy in front of the Worker, when started. */
  prismUrl?: string;
  /** The operator token the Worker was started with (`--var OPERATOR_TOKEN:...`). */
  operatorToken: string;
  /** The temporary folder with the D1/DO state, the logs and the OpenAPI document. */
  workDir: string;
  services: Service[];
}

/** Whether `port` (0: any) can be listened on at 127.0.0.1 right now; resolves the port taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.unref();
    server.on("error", () => resolvePort(null));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const taken = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(taken > 0 ? taken : null));
    });
  });
}

/** Ports handed out by this process, so that two services of one run never get the same. */
const handedOut = new Set<number>();

/**
 * Finds a TCP port that is free on 127.0.0.1 right now: in `E2E_PORTS` (`<first>-<last>`,
 * for a machine whose users share out port ranges) when it is set, else one the OS chooses.
 *
 * @returns a port number (1024-65535).
 * @throws Error when no port is free (in the range, when one is set).
 */
export async function freePort(): Promise<number> {
  const range = /^(\d+)-(\d+)$/.exec(process.env.E2E_PORTS ?? "");
  if (range) {
    for (let port = Number(range[1]); port <= Number(range[2]); port += 1) {
      if (handedOut.has(port)) continue;
      if ((await tryPort(port)) !== null) {
        handedOut.add(port);
        return port;
      }
    }
    throw new Error(`no free port in E2E_PORTS=${process.env.E2E_PORTS}`);
  }
  const port = await tryPort(0);
  if (port === null) throw new Error("no free port");
  return port;
}

/**
 * Runs a node script to completion as a service of `stack` (so that an interruption
 * stops it too), its output appended to `logPath`.
 *
 * @returns resolves on exit code 0.
 * @throws Error naming the command and the last lines of its output otherwise.
 */
async function runToEnd(
  stack: Stack,
  name: string,
  args: string[],
  logPath: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const service = startService(name, args, logPath, env);
  stack.services.push(service);
  const code = await new Promise<number | null>((resolveRun, reject) => {
    service.child.on("error", reject);
    service.child.on("close", (exitCode) => resolveRun(exitCode));
  });
  stack.services.splice(stack.services.indexOf(service), 1);
  if (code !== 0) throw new Error(`${name} exited with ${code}\n${tail(logPath)}`);
}

/** Starts a long-running node script in its own process group, output to `logPath`. */
function startService(
  name: string,
  args: string[],
  logPath: string,
  env: NodeJS.ProcessEnv,
): Service {
  const log = createWriteStream(logPath, { flags: "a" });
  // detached = a new process group, so that stopping it also stops wrangler's workerd.
  const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, env, detached: true });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return { name, child, logPath };
}

/**
 * The last lines of a log file, for error messages.
 *
 * @param path the file; a missing file gives an empty string.
 * @param lines how many lines, from the end.
 */
export function tail(path: string, lines = 40): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/**
 * Polls `url` until it answers `status`.
 *
 * @throws Error when `service` exits first or after {@link READY_TIMEOUT_MS}.
 */
async function waitFor(url: string, service: Service, init: RequestInit = {}): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null || service.child.signalCode !== null) {
      throw new Error(`${service.name} exited before answering\n${tail(service.logPath)}`);
    }
    try {
      const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (response.status < 500) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
  }
  throw new Error(`${service.name} did not answer ${url} within ${READY_TIMEOUT_MS} ms`);
}

/**
 * Starts the Worker: applies the D1 migrations to a fresh `--persist-to` folder, runs
 * `wrangler dev` on a free port with a random operator token, and waits until
 * `/openapi.json` answers.
 *
 * @param stack the stack being built; the service is added to it at once, so that a
 *   failure while waiting still stops it.
 */
async function startWorker(stack: Stack): Promise<void> {
  const persistTo = join(stack.workDir, "state");
  // The directory and every shard (one migration stream).
  for (const binding of d1Bindings(readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8"))) {
    await runToEnd(
      stack,
      `wrangler d1 migrations apply ${binding}`,
      [WRANGLER_BIN, "d1", "migrations", "apply", binding, "--local", "--persist-to", persistTo],
      join(stack.workDir, `migrations-${binding}.log`),
      OFFLINE_ENV,
    );
  }
  const port = Number(new URL(stack.workerUrl).port);
  const inspectorPort = await freePort();
  const worker = startService(
    "wrangler dev",
    [
      WRANGLER_BIN,
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      persistTo,
      "--var",
      `OPERATOR_TOKEN:${stack.operatorToken}`,
      "--show-interactive-dev-session=false",
    ],
    join(stack.workDir, "wrangler.log"),
    OFFLINE_ENV,
  );
  stack.services.push(worker);
  await waitFor(`${stack.workerUrl}/openapi.json`, worker);
}

/**
 * Starts the local stack: the Worker, and Prism in proxy mode (`--errors`) in front of it
 * checking every request and response against `documentPath`.
 *
 * @param options `prism`: start Prism too; `documentPath` is then the OpenAPI document
 *   Prism checks against, written by `beforePrism` (which receives the started stack).
 * @returns the stack; stop it with {@link stopStack} in a `finally`.
 */
export async function startStack(options: {
  beforePrism?: (stack: Stack) => Promise<string>;
}): Promise<Stack> {
  const workDir = mkdtempSync(join(tmpdir(), "pm-e2e-"));
  const stack: Stack = {
    workerUrl: `http://127.0.0.1:${await freePort()}`,
    operatorToken: `e2e-${randomBytes(24).toString("hex")}`,
    workDir,
    services: [],
  };
  ACTIVE.add(stack);
  try {
    await startWorker(stack);
    if (options.beforePrism) {
      const documentPath = await options.beforePrism(stack);
      const prismPort = await freePort();
      const prism = startService(
        "prism proxy",
        [
          PRISM_BIN,
          "proxy",
          documentPath,
          stack.workerUrl,
          "--errors",
          "--host",
          "127.0.0.1",
          "--port",
          String(prismPort),
        ],
        join(workDir, "prism.log"),
        process.env,
      );
      stack.services.push(prism);
      stack.prismUrl = `http://127.0.0.1:${prismPort}`;
      // Prism answers an unknown path with its own 404 once it is listening.
      await waitFor(`${stack.prismUrl}/healthz`, prism);
    }
    return stack;
  } catch (error) {
    await stopStack(stack, { keepWorkDir: true });
    throw error;
  }
}

/** Sends `signal` to a process group; false when it is already gone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (child.pid === undefined) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Stops one service's process group: SIGTERM, then SIGKILL after {@link STOP_GRACE_MS}. */
async function stopService(service: Service): Promise<void> {
  const { child } = service;
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => child.once("exit", () => r()));
  if (!signalGroup(child, "SIGTERM")) return;
  const timer = setTimeout(() => signalGroup(child, "SIGKILL"), STOP_GRACE_MS);
  await exited;
  clearTimeout(timer);
  // workerd may outlive wrangler's node process by a moment; the group goes with it.
  signalGroup(child, "SIGKILL");
}

/**
 * Stops every service of the stack (Prism first) and removes its temporary folder.
 *
 * @param options `keepWorkDir`: leave the folder (logs, state) for inspection.
 */
export async function stopStack(stack: Stack, options: { keepWorkDir?: boolean } = {}) {
  for (const service of [...stack.services].reverse()) await stopService(service);
  stack.services.length = 0;
  ACTIVE.delete(stack);
  if (!options.keepWorkDir) rmSync(stack.workDir, { recursive: true, force: true });
}

/**
 * Stops every stack not stopped yet (on Ctrl-C or an unexpected error).
 *
 * @param options `keepWorkDir`: leave their folders (logs, state) for inspection.
 */
export async function stopAllStacks(options: { keepWorkDir?: boolean } = {}): Promise<void> {
  for (const stack of [...ACTIVE]) await stopStack(stack, options);
}

/**
 * Lints an OpenAPI document with Spectral (ruleset `.spectral.yaml` of the project root).
 *
 * @param documentPath the document (JSON).
 * @returns Spectral's exit code (0 = no finding at or above `warn`) and its text output.
 */
export function runSpectral(documentPath: string): Promise<{ code: number; output: string }> {
  return new Promise((resolveLint, reject) => {
    const child = spawn(
      process.execPath,
      [
        SPECTRAL_BIN,
        "lint",
        documentPath,
        "--ruleset",
        join(PROJECT_ROOT, ".spectral.yaml"),
        "--format",
        "text",
        "--fail-severity",
        "warn",
      ],
      { cwd: PROJECT_ROOT, stdio: "pipe" },
    );
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolveLint({ code: code ?? 1, output }));
  });
}
