/**
 * What holds the local runtime while the demo fills its weeks (issue 48, "Fair share for
 * background work"): the demo's load after `npm start`'s banner (Demo Plant A's week and
 * running shift, Fleet B's history and week), with a probe of the bare route `GET /healthz`
 * every BENCH_FILL_PROBE_MS (50) ms beside it, and a CPU profile of the Worker's isolate.
 *
 * 1. starts the profiled dev server (`lib/profiled-server.ts`, unminified, the inspector on)
 *    on BENCH_PROFILE_PORT (8920), inspector BENCH_INSPECTOR_PORT (8921);
 * 2. loads the demo as `npm start` does before its banner (Fleet B's history deferred);
 * 3. profiles the fill: every request of the load is timed (method, path, body bytes, ms),
 *    and the probe's answers slower than BENCH_FILL_STALL_MS (200) ms are listed with the
 *    load's requests in flight during them;
 * 4. prints the load's requests by kind (count, total and slowest ms), the stalls, and the
 *    profile's self time by function and file; writes `.wrangler/demo-fill.cpuprofile`.
 *
 * Run with `npx tsx bench/profile-demo-fill.ts`. A diagnosis aid, not part of `npm run bench`:
 * the inspector costs CPU of its own, so its times are shares within one run.
 */
import { rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { startReplay } from "../scripts/lib/replay";
import { envNumber, ROOT } from "./lib/bench-env";
import { fillFleetB, seedDemoBeforeBanner } from "./lib/demo-fleet-fill";
import { withProfiledServer } from "./lib/profiled-server";
import { type Profile, summarize } from "./lib/profiler";
import {
  applyMigrations,
  spawnDevServer,
  stopWhenThisProcessEnds,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_PROFILE_PORT", 8920);
const INSPECTOR = envNumber("BENCH_INSPECTOR_PORT", 8921);
const PROBE_MS = envNumber("BENCH_FILL_PROBE_MS", 50, { positive: true });
const STALL_MS = envNumber("BENCH_FILL_STALL_MS", 200, { positive: true });
/** BENCH_FILL_PROFILE=0: no CPU profile (the probe and the requests' times only). */
const PROFILE = process.env.BENCH_FILL_PROFILE !== "0";
const TOKEN = "bench-profile-fill-token";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One request the load sent: when (ms since the script started), what, and how big. */
interface Sent {
  start: number;
  end: number;
  what: string;
  bytes: number;
}

const sent: Sent[] = [];
let recording = false;
const original = globalThis.fetch;
/** Every request of this process is timed while `recording` (the probe's are not kept). */
globalThis.fetch = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  if (!recording || url.pathname === "/healthz") return original(request);
  const body = request.body ? await request.clone().arrayBuffer() : null;
  const start = performance.now();
  const response = await original(request);
  const text = await response.arrayBuffer();
  const path = url.pathname
    .replace(/\/[0-9a-f-]{36}(?=\/|$)/g, "/{uuid}")
    .replace(/\/\d+(?=\/|$)/g, "/{id}")
    .replace(/\/signals\/[^/]+\/samples/, "/signals/{id}/samples");
  sent.push({
    start,
    end: performance.now(),
    what: `${request.method} ${path}`,
    bytes: body?.byteLength ?? 0,
  });
  const empty = response.status === 204 || response.status === 205 || response.status === 304;
  return new Response(empty ? null : text, response);
};

/** The fill, measured on the server at `base`; `profile` runs work under the CPU profiler. */
async function measure(
  base: string,
  profile: ((work: () => Promise<void>) => Promise<Profile>) | null,
): Promise<void> {
  {
    const quiet = () => undefined;
    const { client, plantKey, fleetKey } = await seedDemoBeforeBanner(base, TOKEN);
    await sleep(5_000);

    const probes: { start: number; ms: number }[] = [];
    const phases: { name: string; start: number; end: number }[] = [];
    const phase = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      try {
        return await work();
      } finally {
        phases.push({ name, start, end: performance.now() });
      }
    };
    const controller = new AbortController();
    const fill = async () => {
      recording = true;
      let done = false;
      const probe = (async () => {
        while (!done) {
          const start = performance.now();
          await (await original(`${base}/healthz`)).arrayBuffer();
          probes.push({ start, ms: performance.now() - start });
          await sleep(PROBE_MS);
        }
      })();
      await phase("Demo Plant A: week and running shift", () =>
        startReplay(
          { baseUrl: base, key: plantKey.key, operatorToken: TOKEN },
          { log: quiet, signal: controller.signal },
        ),
      );
      await fillFleetB({ base, client, fleetKey, operatorToken: TOKEN, log: quiet }, (name, work) =>
        phase(name, work),
      );
      // What the load left running (archive alarms, detection, deliveries).
      await phase("after the load (10 s)", () => sleep(10_000));
      done = true;
      await probe;
      recording = false;
      controller.abort();
    };
    const t0 = performance.now();
    if (profile) {
      const p = await profile(fill);
      writeFileSync(join(ROOT, ".wrangler", "demo-fill.cpuprofile"), JSON.stringify(p));
      summarize(p, 1, "fill");
    } else {
      await fill();
    }
    console.log(
      `\nload average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
    );
    for (const p of phases) {
      const inPhase = probes.filter((x) => x.start >= p.start && x.start < p.end);
      const ms = inPhase.map((x) => x.ms).sort((a, b) => a - b);
      const p95 = ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.95))] ?? 0;
      console.log(
        `${p.name}: ${((p.end - p.start) / 1000).toFixed(1)} s; probe ${ms.length} answers, p95 ${p95.toFixed(0)} ms, highest ${(ms[ms.length - 1] ?? 0).toFixed(0)} ms`,
      );
    }
    const kinds = new Map<string, { n: number; ms: number; max: number; bytes: number }>();
    for (const s of sent) {
      const k = kinds.get(s.what) ?? { n: 0, ms: 0, max: 0, bytes: 0 };
      k.n += 1;
      k.ms += s.end - s.start;
      k.max = Math.max(k.max, s.end - s.start);
      k.bytes = Math.max(k.bytes, s.bytes);
      kinds.set(s.what, k);
    }
    console.log("\nthe load's requests: count, total ms, slowest ms, largest body bytes");
    for (const [what, k] of [...kinds].sort((a, b) => b[1].ms - a[1].ms)) {
      console.log(
        `  ${what}: ${k.n}, ${k.ms.toFixed(0)}, ${k.max.toFixed(0)}, ${k.bytes.toLocaleString("en")}`,
      );
    }
    const stalls = probes.filter((x) => x.ms > STALL_MS);
    console.log(`\nprobe answers over ${STALL_MS} ms: ${stalls.length} of ${probes.length}`);
    for (const stall of stalls.sort((a, b) => b.ms - a.ms).slice(0, 15)) {
      const during = sent.filter((s) => s.start < stall.start + stall.ms && s.end > stall.start);
      const names = [...new Set(during.map((s) => s.what))].join("; ");
      console.log(
        `  at ${((stall.start - t0) / 1000).toFixed(1)} s: ${stall.ms.toFixed(0)} ms; in flight: ${names || "nothing"}`,
      );
    }
  }
}

if (PROFILE) {
  await withProfiledServer(
    {
      name: "profile-demo-fill",
      port: PORT,
      inspector: INSPECTOR,
      vars: [`OPERATOR_TOKEN:${TOKEN}`],
    },
    ({ base, profile }) => measure(base, profile),
  );
} else {
  const dir = `/dev/shm/production-monitoring-demo-fill-${process.pid}`;
  applyMigrations(dir);
  const child = spawnDevServer({ port: PORT, persistTo: dir, vars: [`OPERATOR_TOKEN:${TOKEN}`] });
  const stop = stopWhenThisProcessEnds(child);
  try {
    await waitForHealthz(`http://127.0.0.1:${PORT}`, child);
    await measure(`http://127.0.0.1:${PORT}`, null);
  } finally {
    stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
