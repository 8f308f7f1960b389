/**
 * What a Durable Object write costs in this runtime, without any of the API: the
 * least a realtime write can cost, and how much of it is the local disk.
 *
 * Starts `bench/workers/storage-floor.ts` (a bare Worker and object, see there) on
 * wrangler's dev server (inspector and file watching off), once with its state in
 * memory (a tmpfs directory under /dev/shm) and once on disk (`.wrangler/`), and
 * measures with autocannon (32 connections, 3 s warm-up, 8 s measured):
 *
 * - the floor, `GET /healthz`, first and last (shares are of the higher);
 * - an object call that writes nothing, then one SQLite write (an INSERT), then
 *   two (INSERT and UPDATE, as a realtime write applies), each on one object and
 *   spread over 50 objects.
 *
 * Prints a markdown table per medium: req/s, share of the floor, CPU ms per request
 * (the server's process group and autocannon). Informational: no target, exit 0
 * unless a request fails. Run with `npx tsx bench/storage-floor.ts`
 * (BENCH_SF_PORT, default 8798).
 */
import { existsSync, rmSync } from "node:fs";
import { envNumber } from "./lib/bench-env";
import { CPU_COUNT } from "./lib/cpu";
import { spawnDevServer, stopDevServer, waitForHealthz } from "./lib/spawn-dev-server";
import { type Measure, measureThroughput } from "./lib/throughput";

const PORT = envNumber("BENCH_SF_PORT", 8798);
const BASE = `http://127.0.0.1:${PORT}`;
const RUN = { connections: 32, warmupSeconds: 3, durationSeconds: 8 };
const OBJECTS = 50;
const MEDIA = [
  ...(existsSync("/dev/shm")
    ? [
        {
          name: "in memory (tmpfs)",
          dir: `/dev/shm/production-monitoring-storage-floor-${process.pid}`,
        },
      ]
    : []),
  { name: "on disk", dir: ".wrangler/bench-storage-floor" },
];

async function runOn(medium: { name: string; dir: string }): Promise<Measure[]> {
  rmSync(medium.dir, { recursive: true, force: true });
  const child = spawnDevServer({
    port: PORT,
    persistTo: medium.dir,
    script: "bench/workers/storage-floor.ts",
  });
  try {
    await waitForHealthz(BASE, child);
    const pgid = child.pid ?? 0;
    const measures = [
      await measureThroughput("floor: GET /healthz", pgid, { url: `${BASE}/healthz` }, RUN),
    ];
    for (const writes of [0, 1, 2]) {
      const what =
        writes === 0
          ? "object call, no write"
          : `object call, ${writes} SQLite write${writes > 1 ? "s" : ""}`;
      measures.push(
        await measureThroughput(
          `${what}, 1 object`,
          pgid,
          { url: `${BASE}/objects/one?writes=${writes}`, method: "POST" },
          RUN,
        ),
        await measureThroughput(
          `${what}, ${OBJECTS} objects`,
          pgid,
          {
            url: BASE,
            requests: Array.from({ length: OBJECTS }, (_, i) => ({
              method: "POST",
              path: `/objects/o${i}?writes=${writes}`,
            })),
          },
          RUN,
        ),
      );
    }
    measures.push(
      await measureThroughput("floor again: GET /healthz", pgid, { url: `${BASE}/healthz` }, RUN),
    );
    return measures;
  } finally {
    await stopDevServer(child);
    rmSync(medium.dir, { recursive: true, force: true });
  }
}

let failed = false;
for (const medium of MEDIA) {
  const measures = await runOn(medium);
  // Shares are of the higher of the two floors (before and after the writes).
  const floor = Math.max(
    measures[0]?.requestsPerSecond ?? 0,
    measures.at(-1)?.requestsPerSecond ?? 0,
  );
  console.log(
    [
      `## Durable Object writes vs the floor, state ${medium.name}`,
      "",
      `autocannon, ${RUN.connections} connections, ${RUN.durationSeconds} s after ${RUN.warmupSeconds} s of warm-up; ${CPU_COUNT} CPUs.`,
      "",
      "| Scenario | req/s | of floor | CPU ms per request | non-2XX + errors |",
      "|---|---:|---:|---:|---:|",
      ...measures.map(
        (m) =>
          `| ${m.name} | ${m.requestsPerSecond.toFixed(0)} | ${((m.requestsPerSecond / floor) * 100).toFixed(0)} % | ${m.cpuMsPerRequest.toFixed(2)} | ${m.non2xx + m.errors} |`,
      ),
      "",
    ].join("\n"),
  );
  failed ||= measures.some((m) => m.non2xx + m.errors > 0);
}
if (failed) process.exitCode = 1;
