/**
 * Where ingestion with stop detection spends its CPU beside ingestion without it: CPU
 * profiles of the Worker (and the Durable Objects in its isolate) while machines with
 * detection off, then on, each take days of 1 Hz counts (the workload of `bench/detection.ts`,
 * part 1).
 *
 * 1. applies the migrations to a state directory in memory and starts the dev server
 *    (`bench/workers/d1-counting.ts`, unminified; `lib/profiled-server.ts`) on BENCH_PROFILE_PORT (8796) with the
 *    DevTools inspector on BENCH_INSPECTOR_PORT (9232): the inspector costs CPU of its own,
 *    so figures taken here are shares within one profile, never comparable with
 *    `npm run bench`;
 * 2. 2 x BENCH_PROFILE_MACHINES (10) machines with a `count` signal on a 24-hour shift,
 *    detection off on half; a first day to every machine warms up;
 * 3. for each group, BENCH_PROFILE_DAYS (2) days a machine, the group's machines at once,
 *    profiled from the first call to the server quiet again after the last day (each day
 *    waits for the alarms and the stream's ticks it set going: `untilQuiet`);
 * 4. writes `.wrangler/detection-off.cpuprofile` and `.wrangler/detection-on.cpuprofile`
 *    (open them in Chrome DevTools) and prints, for each, the functions and files with the
 *    most self time and the server's CPU per 1,000 samples.
 *
 * Run with `npx tsx bench/profile-detection.ts`. A diagnosis aid, not part of `npm run bench`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { DAY, detectionBench, serverCpuMs, untilQuiet, workingDay } from "./lib/detection-plant";
import { withProfiledServer } from "./lib/profiled-server";
import { summarize } from "./lib/profiler";

const PORT = envNumber("BENCH_PROFILE_PORT", 8796);
const INSPECTOR = envNumber("BENCH_INSPECTOR_PORT", 9232);
const MACHINES = envNumber("BENCH_PROFILE_MACHINES", 10);
const DAYS = envNumber("BENCH_PROFILE_DAYS", 2);
const TOKEN = "bench-profile-detection-token";

await withProfiledServer(
  {
    name: "profile-detection",
    port: PORT,
    inspector: INSPECTOR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`],
    script: "bench/workers/d1-counting.ts",
  },
  async ({ child, base, profile: profiled }) => {
    const bench = detectionBench(base, TOKEN);
    const p = await bench.plant("Profile", 2 * MACHINES);
    const groups = {
      off: p.machines.slice(0, MACHINES),
      on: p.machines.slice(MACHINES),
    };
    for (const m of groups.off) {
      await bench.op("PUT", `/machines/${m.id}/stop-detection`, { enabled: false });
    }
    // Days inside the company's hot window (35 days): no archive step in the profiles.
    const first = Math.floor(Date.now() / DAY) * DAY - (DAYS + 2) * DAY;
    const sendDay = async (machines: typeof p.machines, day: number) => {
      const samples = workingDay(first + day * DAY);
      await Promise.all(machines.map((m) => bench.send(m.count, samples)));
      await Promise.all(machines.map((m) => bench.settled(p.companyId, m.id)));
    };
    const warm = performance.now();
    await sendDay(p.machines, 0);
    await untilQuiet(child.pid ?? 0, warm);
    const samples = (MACHINES * DAYS * DAY) / 1_000;
    for (const [name, machines] of Object.entries(groups)) {
      const pgid = child.pid ?? 0;
      const cpuBefore = serverCpuMs(pgid);
      const profile = await profiled(async () => {
        // Each day's alarms and stream ticks inside the group's own profile.
        for (let d = 1; d <= DAYS; d++) {
          const began = performance.now();
          await sendDay(machines, d);
          await untilQuiet(pgid, began);
        }
      });
      const cpuMs = serverCpuMs(pgid) - cpuBefore;
      const out = join(ROOT, `.wrangler/detection-${name}.cpuprofile`);
      writeFileSync(out, JSON.stringify(profile));
      console.log(
        `\n=== detection ${name}: ${samples} samples, server CPU ${(cpuMs / 1000).toFixed(1)} s ` +
          `(${((1000 * cpuMs) / samples).toFixed(3)} ms per 1,000 samples); profile in ${out}`,
      );
      summarize(profile, samples / 1_000, "1,000 samples");
    }
  },
);
