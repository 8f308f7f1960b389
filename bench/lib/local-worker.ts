/**
 * A local Worker for the load and durability runs: a frozen bundle of the
 * Worker, its own D1/Durable Object state, `wrangler dev` in its own process
 * group (so it can be stopped, or killed hard, with everything it started),
 * and small JSON helpers for the operator and public APIs.
 *
 * Why a frozen bundle: `wrangler dev` on the source reloads the Worker whenever
 * a file of the tree changes (others edit it while these runs go), and a reload
 * drops in-flight requests and local Queues' in-memory messages. The bundle is
 * built once (`wrangler deploy --dry-run --outdir`) with a copy of wrangler.toml
 * pointing at it, and served with `wrangler dev --no-bundle`.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { d1Bindings } from "../../scripts/lib/cloudflare-setup";
import { WRANGLER_BIN } from "../../scripts/lib/project";
import { ROOT } from "./bench-env";
import { DEV_SERVER_ENV } from "./spawn-dev-server";

/** Absolute path of the project root. */

const READY_TIMEOUT_MS = 90_000;

/** Where one run keeps its files, all under `.wrangler/` (git-ignored). */
export interface WorkerPaths {
  /** The bundle and its wrangler.toml copy, relative to ROOT. */
  buildDir: string;
  /** `--persist-to` (D1, Durable Objects), relative to ROOT. */
  persistDir: string;
  /** wrangler's stdout and stderr, appended across restarts (absolute). */
  logFile: string;
}

/** Options of {@link startWorker}. */
export interface StartOptions {
  paths: WorkerPaths;
  port: number;
  /** `--var NAME:value` pairs (OPERATOR_TOKEN among them). */
  vars: Record<string, string>;
  /** Adds `--test-scheduled` (GET /cdn-cgi/handler/scheduled runs the cron handler). */
  testScheduled?: boolean;
}

/** A running `wrangler dev`. */
export interface LocalWorker {
  child: ChildProcess;
  base: string;
  /** Resolves when the process has exited (any way). */
  exited: Promise<void>;
}

function runWrangler(args: string[], logFile: string): void {
  const fd = openSync(logFile, "a");
  try {
    const result = spawnSync(process.execPath, [WRANGLER_BIN, ...args], {
      cwd: ROOT,
      stdio: ["ignore", fd, fd],
      env: DEV_SERVER_ENV,
    });
    if (result.status !== 0) {
      throw new Error(`wrangler ${args.join(" ")} exited ${result.status}; see ${logFile}`);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The project's wrangler.toml for a copy in `buildDir`: `main` is the bundle
 * `dist/index.js` there, the migrations folder is made relative to the copy, and the
 * `[build]` table goes (the bundle already holds the board's script, which that command
 * builds, and its paths are the project's, not the copy's).
 *
 * @param buildDir the folder of the copy, relative to the project root.
 * @throws Error when wrangler.toml has no `main` line.
 */
export function frozenConfig(buildDir: string): string {
  const up = relative(join(ROOT, buildDir), ROOT).split(sep).join("/");
  const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main = .*$/m, 'main = "dist/index.js"')
    .replaceAll('migrations_dir = "migrations"', `migrations_dir = "${up}/migrations"`)
    .replace(/^\[build\]\n(?:[^[\n].*\n)*/m, "");
  if (!config.includes('main = "dist/index.js"')) throw new Error("wrangler.toml has no main");
  return config;
}

/**
 * Bundles src/index.ts into `<buildDir>/dist`, writes `<buildDir>/wrangler.toml`
 * (the project's, with `main` at the bundle and paths made relative to the copy),
 * empties `persistDir` and applies the D1 migrations to it.
 *
 * @param paths the run's folders; both are emptied first.
 * @throws Error when wrangler fails (its output is in `paths.logFile`).
 */
export function prepareWorker(paths: WorkerPaths): void {
  rmSync(join(ROOT, paths.buildDir), { recursive: true, force: true });
  rmSync(join(ROOT, paths.persistDir), { recursive: true, force: true });
  mkdirSync(join(ROOT, paths.buildDir), { recursive: true });
  mkdirSync(dirname(paths.logFile), { recursive: true });
  writeFileSync(paths.logFile, "");
  runWrangler(
    ["deploy", "--dry-run", "--config", "wrangler.toml", "--outdir", `${paths.buildDir}/dist`],
    paths.logFile,
  );
  writeFileSync(join(ROOT, paths.buildDir, "wrangler.toml"), frozenConfig(paths.buildDir));
  // The directory and every shard (one migration stream).
  for (const binding of d1Bindings(readFileSync(join(ROOT, "wrangler.toml"), "utf8"))) {
    runWrangler(
      [
        "d1",
        "migrations",
        "apply",
        binding,
        "--local",
        "--config",
        `${paths.buildDir}/wrangler.toml`,
        "--persist-to",
        paths.persistDir,
      ],
      paths.logFile,
    );
  }
}

/**
 * Starts `wrangler dev --no-bundle` on the frozen bundle, in its own process
 * group, output appended to `paths.logFile`, and waits until GET /openapi.json
 * answers 200.
 *
 * @returns the running Worker.
 * @throws Error when it exits or does not answer within 90 s (then it is killed).
 */
export async function startWorker(options: StartOptions): Promise<LocalWorker> {
  const { paths, port } = options;
  const args = [
    WRANGLER_BIN,
    "dev",
    "--no-bundle",
    "--config",
    `${paths.buildDir}/wrangler.toml`,
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--inspector-port",
    String(port + 10_000),
    "--persist-to",
    paths.persistDir,
    "--show-interactive-dev-session=false",
    "--log-level",
    process.env.BENCH_WRANGLER_LOG ?? "warn",
  ];
  if (options.testScheduled) args.push("--test-scheduled");
  for (const [name, value] of Object.entries(options.vars)) args.push("--var", `${name}:${value}`);
  const fd = openSync(paths.logFile, "a");
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      ...DEV_SERVER_ENV,
      // A dev registry of its own: another `wrangler dev` of the same Worker starting or
      // stopping (other benches, `npm start`) updates the shared registry, and that update
      // restarts this session's runtime ("Your worker restarted mid-request"), dropping
      // local Queues' in-memory messages among others.
      WRANGLER_REGISTRY_PATH: join(ROOT, paths.buildDir, "dev-registry"),
      WRANGLER_CI_DISABLE_CONFIG_WATCHING: "true",
    },
    stdio: ["ignore", fd, fd],
    // Its own process group: a signal to -pid reaches wrangler and workerd together.
    detached: true,
  });
  closeSync(fd);
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const worker: LocalWorker = { child, base: `http://127.0.0.1:${port}`, exited };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `wrangler dev exited (${child.exitCode ?? child.signalCode}); see ${paths.logFile}`,
      );
    }
    try {
      const res = await fetch(`${worker.base}/openapi.json`, {
        signal: AbortSignal.timeout(2_000),
      });
      await res.body?.cancel();
      if (res.status === 200) return worker;
    } catch {
      // Not listening yet.
    }
    await sleep(300);
  }
  await stopWorker(worker, "SIGKILL");
  throw new Error(`wrangler dev did not answer on ${worker.base} in 90 s; see ${paths.logFile}`);
}

/**
 * Stops the Worker's whole process group (by its id) and waits for wrangler to exit.
 *
 * @param worker what {@link startWorker} returned.
 * @param signal SIGTERM for a clean stop, SIGKILL for a crash (nothing gets to clean up).
 */
export async function stopWorker(
  worker: LocalWorker,
  signal: "SIGTERM" | "SIGKILL" = "SIGTERM",
): Promise<void> {
  const pid = worker.child.pid;
  if (pid === undefined || worker.child.exitCode !== null || worker.child.signalCode !== null) {
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    return;
  }
  await Promise.race([worker.exited, sleep(15_000)]);
  if (signal === "SIGKILL") {
    // workerd may take a moment to release the port after its group is killed.
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      try {
        await fetch(`${worker.base}/openapi.json`, { signal: AbortSignal.timeout(500) });
      } catch {
        return;
      }
      await sleep(200);
    }
  }
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** A JSON answer: status, parsed body (undefined when empty or not JSON) and the raw text. */
export interface JsonAnswer<T> {
  status: number;
  body: T | undefined;
  text: string;
}

/**
 * Sends one JSON request.
 *
 * @param url absolute URL.
 * @param method HTTP method.
 * @param headers extra headers (credentials).
 * @param body serialised as JSON when given.
 * @returns status and body; never throws on a status.
 * @throws TypeError when the Worker cannot be reached (for example, it was killed).
 */
export async function requestJson<T>(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<JsonAnswer<T>> {
  const res = await fetch(url, {
    method,
    headers: {
      accept: "application/json",
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: T | undefined;
  try {
    parsed = text === "" ? undefined : (JSON.parse(text) as T);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text };
}

/**
 * Calls an operator route and expects a 2XX.
 *
 * @param base the Worker's origin.
 * @param token the operator token.
 * @param method HTTP method.
 * @param path a path under `/operator/v1`.
 * @param body optional JSON body.
 * @returns the parsed body.
 * @throws Error naming the status and body on a non-2XX answer.
 */
export async function operatorCall<T>(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const answer = await requestJson<T>(
    `${base}/operator/v1${path}`,
    method,
    { authorization: `Bearer ${token}` },
    body,
  );
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`${method} /operator/v1${path} -> ${answer.status}: ${answer.text}`);
  }
  return answer.body as T;
}

/**
 * Calls a public route with an API key and expects a 2XX.
 *
 * @returns the parsed body.
 * @throws Error naming the status and body on a non-2XX answer.
 */
export async function publicCall<T>(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const answer = await requestJson<T>(`${base}${path}`, method, { "x-api-key": key }, body);
  if (answer.status < 200 || answer.status > 299) {
    throw new Error(`${method} ${path} -> ${answer.status}: ${answer.text}`);
  }
  return answer.body as T;
}

/**
 * Nearest-rank percentile of sorted numbers.
 *
 * @param sorted ascending values.
 * @param p percentile, 0 to 100.
 * @returns the value, NaN when empty.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}
