/**
 * Starts `./dev-server.ts` (wrangler's local dev server without the DevTools
 * inspector and file watching) as a child in its own process group, the way
 * the benchmarks used to start `wrangler dev`.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { d1Bindings } from "../../scripts/lib/cloudflare-setup";
import { WRANGLER_BIN } from "../../scripts/lib/project";
import { ROOT } from "./bench-env";

const requireHere = createRequire(join(ROOT, "package.json"));
const TSX_CLI = requireHere.resolve("tsx/cli");
const DEV_SERVER = join(ROOT, "bench", "lib", "dev-server.ts");

/** Offline and quiet: no usage metrics, no fetch of the `Request.cf` placeholder. */
export const DEV_SERVER_ENV = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  CI: "1",
};

/**
 * Spawns the dev server from the project root.
 *
 * @param options.port local port; `options.persistTo` the `--persist-to` directory (relative
 *   to the root); `options.vars` `NAME:value` pairs; `options.script` another entry point;
 *   `options.env` more environment variables (as `BENCH_INSPECTOR_PORT`); `options.config`
 *   another wrangler configuration file.
 * @returns the child (its pid is the process group id: `process.kill(-pid, "SIGTERM")`
 *   stops it with workerd).
 */
export function spawnDevServer(options: {
  port: number;
  persistTo: string;
  vars?: readonly string[];
  script?: string;
  env?: Record<string, string>;
  config?: string;
}): ChildProcess {
  const args = [TSX_CLI, DEV_SERVER, "--port", String(options.port)];
  args.push("--persist-to", options.persistTo);
  for (const pair of options.vars ?? []) args.push("--var", pair);
  if (options.script !== undefined) args.push("--script", options.script);
  if (options.config !== undefined) args.push("--config", options.config);
  return spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...DEV_SERVER_ENV, ...options.env },
    stdio: ["ignore", "inherit", "inherit"],
    detached: true,
  });
}

/**
 * Applies the D1 migrations to every local database of wrangler.toml (`wrangler d1
 * migrations apply <binding> --local`: the directory and each shard), output to this
 * process's terminal.
 *
 * @param persistTo the `--persist-to` directory, relative to the project root.
 * @throws Error when wrangler exits non-zero.
 */
export function applyMigrations(persistTo: string): void {
  for (const binding of d1Bindings(readFileSync(join(ROOT, "wrangler.toml"), "utf8"))) {
    const args = ["d1", "migrations", "apply", binding, "--local", "--persist-to", persistTo];
    const result = spawnSync(process.execPath, [WRANGLER_BIN, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "inherit", "inherit"],
      env: DEV_SERVER_ENV,
    });
    if (result.status !== 0) throw new Error(`wrangler ${args.join(" ")} exited ${result.status}`);
  }
}

/**
 * Stops a server started by `spawnDevServer`: SIGTERM to its process group, up to 10 s for
 * wrangler to exit, then SIGKILL to whatever of the group is left (a workerd that outlived
 * its wrangler kept running, and spinning, after an export bench had ended: 26 min of CPU
 * over the next 100 min).
 */
export async function stopDevServer(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((done) => child.once("exit", done));
    try {
      process.kill(-child.pid, "SIGTERM");
      await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    } catch {
      // The whole group has exited.
    }
  }
  killGroup(child);
}

/** SIGKILL to what is left of a server's process group (a workerd its wrangler left). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The whole group has exited.
  }
}

/**
 * Waits until `GET <base>/healthz` answers 204.
 *
 * @throws Error when the server exits first, or after `timeoutMs` (default 120 s).
 */
export async function waitForHealthz(
  base: string,
  child: ChildProcess,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the dev server exited ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 204) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`the dev server did not answer on ${base} within ${timeoutMs / 1000} s`);
}

/**
 * Stops the server when this process exits or is interrupted (SIGINT, SIGTERM: exit 130).
 * An exiting process cannot wait for the server, so it ends its whole process group at once
 * (SIGKILL: wrangler and its workerd, which SIGTERM alone left running).
 *
 * @returns the stop function, for a caller that stops it earlier (stopping twice is harmless).
 */
export function stopWhenThisProcessEnds(child: ChildProcess): () => void {
  const stop = () => void stopDevServer(child);
  process.on("exit", () => killGroup(child));
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      stop();
      process.exit(130);
    });
  }
  return stop;
}

/**
 * Starts a dev server on a fresh state, as most benchmarks do: deletes `persistTo`, applies
 * the migrations, spawns the server with the operator token, stops it when this process
 * exits or is interrupted, and waits until it answers `/healthz`.
 *
 * @param options.port local port; `options.persistTo` the state directory (relative to the
 *   root, deleted first); `options.token` the `OPERATOR_TOKEN` it takes.
 * @returns the child (its pid is the process group's, for CPU and memory readings).
 * @throws Error when migrations fail or the server exits or stays silent (`waitForHealthz`).
 */
export async function startFreshDevServer(options: {
  port: number;
  persistTo: string;
  token: string;
}): Promise<ChildProcess> {
  const base = `http://127.0.0.1:${options.port}`;
  rmSync(join(ROOT, options.persistTo), { recursive: true, force: true });
  console.log(`Applying migrations to ${options.persistTo} ...`);
  applyMigrations(options.persistTo);
  console.log(`Starting the dev server on ${base} ...`);
  const child = spawnDevServer({
    port: options.port,
    persistTo: options.persistTo,
    vars: [`OPERATOR_TOKEN:${options.token}`],
  });
  stopWhenThisProcessEnds(child);
  await waitForHealthz(base, child);
  return child;
}
