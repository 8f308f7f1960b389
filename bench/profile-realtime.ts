/**
 * Where a realtime write's CPU goes: a CPU profile of the Worker (and the Durable
 * Objects in its isolate) while autocannon sends the 50-machine SKU writes of
 * `bench/realtime.ts`.
 *
 * 1. applies the migrations to a state directory in memory and starts the dev server
 *    (`lib/profiled-server.ts`) on BENCH_PROFILE_PORT (8794) with the DevTools inspector
 *    on BENCH_INSPECTOR_PORT (9231): the inspector costs CPU of its own, so figures taken
 *    here are shares within one profile, never comparable with `npm run bench`;
 * 2. seeds the realtime plant, warms up for 3 s, then records a profile over
 *    BENCH_PROFILE_SECONDS (10) of writes through the `Profiler` domain;
 * 3. writes the profile to `.wrangler/realtime.cpuprofile` (open it in Chrome
 *    DevTools) and prints the functions with the most self time, and the source
 *    files with the most self time.
 *
 * Run with `npx tsx bench/profile-realtime.ts`. A diagnosis aid, not part of `npm run bench`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { withProfiledServer } from "./lib/profiled-server";
import { summarize } from "./lib/profiler";
import { seedRealtimePlant } from "./lib/realtime-plant";
import { measureThroughput } from "./lib/throughput";

const PORT = envNumber("BENCH_PROFILE_PORT", 8794);
const INSPECTOR = envNumber("BENCH_INSPECTOR_PORT", 9231);
const SECONDS = envNumber("BENCH_PROFILE_SECONDS", 10);
const TOKEN = "bench-profile-token";

await withProfiledServer(
  {
    name: "profile",
    port: PORT,
    inspector: INSPECTOR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, "RATE_LIMIT_ENABLED:true"],
  },
  async ({ child, base, profile: profiled }) => {
    const plant = await seedRealtimePlant(base, TOKEN, {
      name: "Profile",
      machines: 50,
      extraScopes: ["machines.read"],
      countSignal: true,
    });
    const headers = { "x-api-key": plant.key, "content-type": "application/json" };
    const body = JSON.stringify({ skuId: plant.skuId, quantity: 1000 });
    const options = {
      url: base,
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
    let measure: Awaited<ReturnType<typeof measureThroughput>> | undefined;
    const profile = await profiled(async () => {
      measure = await measureThroughput("profiled", pgid, options, {
        ...run,
        durationSeconds: SECONDS,
      });
    });
    if (!measure) throw new Error("no measurement");
    const out = join(ROOT, ".wrangler/realtime.cpuprofile");
    writeFileSync(out, JSON.stringify(profile));
    console.log(
      `${measure.requests} writes, ${measure.requestsPerSecond.toFixed(0)}/s, ${measure.non2xx} non-2XX; profile in ${out}\n`,
    );
    summarize(profile, measure.requests, "write");
  },
);
