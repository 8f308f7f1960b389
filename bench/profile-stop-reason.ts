/**
 * Where a stop reason's CPU goes (issue 48): the CPU of each process of the dev server
 * (wrangler's Node process, workerd) per request of each route of `bench/stop-reason.ts`, and
 * optionally a CPU profile of the Worker's isolate while stop reasons are sent.
 *
 * 1. applies the migrations to a state directory in memory and starts the dev server on
 *    BENCH_PROFILE_PORT (8794), with a local webhook receiver on
 *    BENCH_PROFILE_RECEIVER_PORT (8796) as its exempt origin; with
 *    BENCH_PROFILE_INSPECTOR=1, with the DevTools inspector on BENCH_INSPECTOR_PORT (9233):
 *    the inspector costs CPU of its own, so the profile's figures are shares within it;
 * 2. prepares a company as `bench/stop-reason.ts` does (three 8-hour shifts, a machine, two
 *    causes, an open stop, the classification webhooks to the receiver);
 * 3. sends BENCH_PROFILE_REQUESTS (60) requests of each route one after another, each
 *    followed by the work it left, and prints each process's CPU per request;
 * 4. with the inspector, profiles BENCH_PROFILE_REQUESTS stop reasons, writes the profile to
 *    `.wrangler/stop-reason.cpuprofile` and prints where the isolate's self time went.
 *
 * Run with `npx tsx bench/profile-stop-reason.ts`. A diagnosis aid, not part of `npm run bench`.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectOperator } from "../scripts/lib/operator-api";
import { envNumber, ROOT } from "./lib/bench-env";
import { inspect, type Profile, summarize } from "./lib/profiler";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";
import {
  quietPlant,
  ROUTES,
  type Route,
  routeRequest,
  startReceiver,
} from "./lib/stop-reason-plant";

const PORT = envNumber("BENCH_PROFILE_PORT", 8794);
const RECEIVER_PORT = envNumber("BENCH_PROFILE_RECEIVER_PORT", 8796);
const INSPECTOR = envNumber("BENCH_INSPECTOR_PORT", 9233);
const WITH_INSPECTOR = process.env.BENCH_PROFILE_INSPECTOR === "1";
const REQUESTS = envNumber("BENCH_PROFILE_REQUESTS", 60, { positive: true });
const BASE = `http://127.0.0.1:${PORT}`;
const RECEIVER = `http://127.0.0.1:${RECEIVER_PORT}`;
const TOKEN = "bench-profile-token";
const PROFILE_CONFIG = "wrangler.profile.toml";
const DIR = `/dev/shm/production-monitoring-profile-stop-${process.pid}`;
const SETTLE_MS = 2_000;
const USER_HZ = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU ms so far of each process of group `pgid`, by command name, and of this process. */
function cpuByProcess(pgid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) !== pgid) continue;
    const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
    const key = `${name} ${entry}`;
    out.set(key, (out.get(key) ?? 0) + ms);
  }
  const own = process.cpuUsage();
  out.set("client (this process)", (own.user + own.system) / 1000);
  return out;
}

async function main(): Promise<void> {
  rmSync(DIR, { recursive: true, force: true });
  applyMigrations(DIR);
  let config: string | undefined;
  if (WITH_INSPECTOR) {
    const text = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    writeFileSync(join(ROOT, PROFILE_CONFIG), text.replace(/^minify = true$/m, "minify = false"));
    config = PROFILE_CONFIG;
  }
  const receiver = startReceiver(RECEIVER_PORT);
  const child = spawnDevServer({
    port: PORT,
    persistTo: DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, `WEBHOOK_EXEMPT_ORIGINS:${RECEIVER}`],
    ...(WITH_INSPECTOR ? { env: { BENCH_INSPECTOR_PORT: String(INSPECTOR) }, config } : {}),
  });
  try {
    await waitForHealthz(BASE, child);
    const target = await quietPlant(
      connectOperator(BASE, TOKEN),
      { base: BASE, token: TOKEN, receiver: RECEIVER },
      "Profile",
    );
    const pgid = child.pid ?? 0;
    let round = 0;
    const send = async (route: Route) => {
      round += 1;
      const { url, init, expected } = routeRequest(BASE, TOKEN, target, route, round);
      const res = await fetch(url, init);
      const text = await res.text();
      if (res.status !== expected) throw new Error(`${route}: ${res.status} ${text}`);
    };
    for (const route of ROUTES) {
      for (let i = 0; i < 5; i += 1) await send(route);
      await sleep(SETTLE_MS);
      const before = cpuByProcess(pgid);
      const deliveredBefore = receiver.count();
      for (let i = 0; i < REQUESTS; i += 1) await send(route);
      await sleep(SETTLE_MS);
      const after = cpuByProcess(pgid);
      const parts = [...after]
        .map(([name, ms]) => [name, (ms - (before.get(name) ?? 0)) / REQUESTS] as const)
        .filter(([, ms]) => ms > 0.05)
        .sort((a, b) => b[1] - a[1]);
      const total = parts.reduce((s, [, ms]) => s + ms, 0);
      console.log(
        `${route}: ${total.toFixed(1)} ms CPU per request (${parts
          .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
          .join(", ")}); ${receiver.count() - deliveredBefore} deliveries`,
      );
    }
    if (WITH_INSPECTOR) {
      const session = await inspect(INSPECTOR);
      await session.call("Profiler.enable");
      await session.call("Profiler.setSamplingInterval", { interval: 200 });
      await session.call("Profiler.start");
      for (let i = 0; i < REQUESTS; i += 1) await send("stopReason");
      await sleep(SETTLE_MS);
      const { profile } = (await session.call("Profiler.stop")) as unknown as {
        profile: Profile;
      };
      session.close();
      const out = join(ROOT, ".wrangler/stop-reason.cpuprofile");
      writeFileSync(out, JSON.stringify(profile));
      console.log(`profile in ${out}\n`);
      summarize(profile, REQUESTS, "stop reason");
    }
  } finally {
    receiver.close();
    await stopDevServer(child);
    rmSync(DIR, { recursive: true, force: true });
    if (WITH_INSPECTOR) rmSync(join(ROOT, PROFILE_CONFIG), { force: true });
  }
}

await main();
