/**
 * Where a realtime write's CPU goes: a CPU profile of the Worker (and the Durable
 * Objects in its isolate) while autocannon sends the 50-machine SKU writes of
 * `bench/realtime.ts`.
 *
 * 1. applies the migrations to a state directory in memory and starts the dev server
 *    on BENCH_PROFILE_PORT (8794) with the DevTools inspector on BENCH_INSPECTOR_PORT
 *    (9231): the inspector costs CPU of its own, so figures taken here are shares
 *    within one profile, never comparable with `npm run bench`;
 * 2. seeds the realtime plant, warms up for 3 s, then records a profile over
 *    BENCH_PROFILE_SECONDS (10) of writes through the `Profiler` domain;
 * 3. writes the profile to `.wrangler/realtime.cpuprofile` (open it in Chrome
 *    DevTools) and prints the functions with the most self time, and the source
 *    files with the most self time.
 *
 * Run with `npx tsx bench/profile-realtime.ts`. A diagnosis aid, not part of `npm run bench`.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { inspect, type Profile, summarize } from "./lib/profiler";
import { seedRealtimePlant } from "./lib/realtime-plant";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";
import { measureThroughput } from "./lib/throughput";

const PORT = envNumber("BENCH_PROFILE_PORT", 8794);
const INSPECTOR = envNumber("BENCH_INSPECTOR_PORT", 9231);
const SECONDS = envNumber("BENCH_PROFILE_SECONDS", 10);
const BASE = `http://127.0.0.1:${PORT}`;
const TOKEN = "bench-profile-token";
/** A copy of wrangler.toml with `minify` off, beside it (its paths are relative). */
const PROFILE_CONFIG = "wrangler.profile.toml";
const DIR = `/dev/shm/production-monitoring-profile-${process.pid}`;

async function main(): Promise<void> {
  rmSync(DIR, { recursive: true, force: true });
  applyMigrations(DIR);
  // The same configuration, unminified, so that the profile names the functions.
  const config = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  writeFileSync(join(ROOT, PROFILE_CONFIG), config.replace(/^minify = true$/m, "minify = false"));
  const child = spawnDevServer({
    port: PORT,
    persistTo: DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, "RATE_LIMIT_ENABLED:true"],
    env: { BENCH_INSPECTOR_PORT: String(INSPECTOR) },
    config: PROFILE_CONFIG,
  });
  try {
    await waitForHealthz(BASE, child);
    const plant = await seedRealtimePlant(BASE, TOKEN, {
      name: "Profile",
      machines: 50,
      extraScopes: ["machines.read"],
      countSignal: true,
    });
    const headers = { "x-api-key": plant.key, "content-type": "application/json" };
    const body = JSON.stringify({ skuId: plant.skuId, quantity: 1000 });
    const options = {
      url: BASE,
      requests: plant.machineIds.map((id) => ({
        method: "POST",
        path: `/v1/realtime/${id}/sku`,
        headers,
        body,
      })),
    };
    const pgid = child.pid ?? 0;
    const run = { connections: 32, warmupSeconds: 0 };
    await measureThroughput("warm-up", pgid, options, { ...run, durationSeconds: 3 });
    const session = await inspect(INSPECTOR);
    await session.call("Profiler.enable");
    await session.call("Profiler.setSamplingInterval", { interval: 200 });
    await session.call("Profiler.start");
    const measure = await measureThroughput("profiled", pgid, options, {
      ...run,
      durationSeconds: SECONDS,
    });
    const { profile } = (await session.call("Profiler.stop")) as unknown as { profile: Profile };
    session.close();
    const out = join(ROOT, ".wrangler/realtime.cpuprofile");
    writeFileSync(out, JSON.stringify(profile));
    console.log(
      `${measure.requests} writes, ${measure.requestsPerSecond.toFixed(0)}/s, ${measure.non2xx} non-2XX; profile in ${out}\n`,
    );
    summarize(profile, measure.requests, "write");
  } finally {
    await stopDevServer(child);
    rmSync(DIR, { recursive: true, force: true });
    rmSync(join(ROOT, PROFILE_CONFIG), { force: true });
  }
}

await main();
