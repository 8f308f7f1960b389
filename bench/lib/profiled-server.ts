/**
 * The start-up the profiling scripts share (`bench/profile-detection.ts`,
 * `bench/profile-realtime.ts`): migrations applied to a state directory in memory, the dev
 * server started from an unminified copy of wrangler.toml (so that the profile names the
 * functions) with the DevTools inspector on, a profiling session on it, and everything removed
 * again at the end. The inspector costs CPU of its own: figures taken under it are shares
 * within one profile, never comparable with `npm run bench`.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./bench-env";
import { inspect, type Profile } from "./profiler";
import { applyMigrations, spawnDevServer, stopDevServer, waitForHealthz } from "./spawn-dev-server";

/** A profiled dev server: its process, its URL, and a profile of what runs during `work`. */
export interface ProfiledServer {
  child: ChildProcess;
  base: string;
  /** Runs `work` with the profiler on (sampling every 200 µs) and returns the profile. */
  profile(work: () => Promise<void>): Promise<Profile>;
}

/**
 * Starts the profiled dev server, runs `body` with it, then stops it and removes its state
 * and its copy of wrangler.toml (also when `body` throws).
 *
 * @param options.name the state directory's and the configuration copy's name;
 *   `options.port` the server's port; `options.inspector` the inspector's port;
 *   `options.vars` `NAME:value` pairs; `options.script` another entry point.
 */
export async function withProfiledServer(
  options: {
    name: string;
    port: number;
    inspector: number;
    vars: readonly string[];
    script?: string;
  },
  body: (server: ProfiledServer) => Promise<void>,
): Promise<void> {
  const dir = existsSync("/dev/shm")
    ? `/dev/shm/production-monitoring-${options.name}-${process.pid}`
    : join(ROOT, `.wrangler/${options.name}`);
  const config = `wrangler.${options.name}.toml`;
  rmSync(dir, { recursive: true, force: true });
  applyMigrations(dir);
  // The same configuration, unminified, beside wrangler.toml (its paths are relative).
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  writeFileSync(join(ROOT, config), toml.replace(/^minify = true$/m, "minify = false"));
  const child = spawnDevServer({
    port: options.port,
    persistTo: dir,
    vars: options.vars,
    script: options.script,
    env: { BENCH_INSPECTOR_PORT: String(options.inspector) },
    config,
  });
  const base = `http://127.0.0.1:${options.port}`;
  let session: Awaited<ReturnType<typeof inspect>> | undefined;
  try {
    await waitForHealthz(base, child);
    session = await inspect(options.inspector);
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 200 });
    const profiler = session;
    await body({
      child,
      base,
      async profile(work) {
        await profiler.call("Profiler.start");
        await work();
        const { profile } = (await profiler.call("Profiler.stop")) as unknown as {
          profile: Profile;
        };
        return profile;
      },
    });
  } finally {
    session?.close();
    await stopDevServer(child);
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(ROOT, config), { force: true });
  }
}
