/**
 * Plant-scale signal storage: bytes per sample on disk, ingestion rates, and query
 * medians at the start and at the end of a long history (docs/signal-storage.md).
 *
 * Two local servers, each on fresh state: the API, and the floor,
 * `bench/workers/signals-floor.ts` (a bare object writing the same hour blocks, no API, and
 * constant answers of a given size).
 *
 * 1. A new company through the operator API; one machine gets `PLANT_WEEKS` weeks (default 8)
 *    of 1 Hz samples of one signal, 10,000 a call, one call at a time (its rate: "one
 *    machine"); every call's body also goes to the floor right after (its rate: the floor,
 *    under the same load). Then `PLANT_MACHINES` more machines (default 20) get one day
 *    each, all at once (their summed rate: "20 at once").
 * 2. Bytes per sample: the `SignalStore` state directory after the long history (WAL and
 *    all), and its `.sqlite` files alone, divided by its samples; the whole local state
 *    after everything (D1 and every object) divided by every sample, and D1's share.
 * 3. Queries on the long history, the first 14 days and the last 14 days: 14 d at 3 min,
 *    14 d at 1 h, 2 h at 1 s; every point compared with the same aggregation computed here
 *    from the generated samples before timing; medians of `PLANT_RUNS` (default 31) of the
 *    public route at both ends and of the floor's constant answer of the same size, taken
 *    in turns; and of the store call alone as the Worker times it (operator diagnostics).
 *
 * Targets (the issue): <= 12 bytes a sample; one machine >= 50 % of the floor; 20 at once
 * >= 0.8 of one machine; medians < 20 / 8 / 8 ms; end / start ratio <= 1.3. Writes
 * `bench/signals-plant-results.md`; exits 1 when a target is missed.
 */
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { percentile } from "./lib/local-worker";
import { chunkBody, iso, reference, START } from "./lib/signal-series";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const WEEKS = envNumber("PLANT_WEEKS", 8);
const MACHINES = envNumber("PLANT_MACHINES", 20);
const RUNS = envNumber("PLANT_RUNS", 31);
const PORT = envNumber("BENCH_PLANT_PORT", 8796);
const FLOOR_PORT = PORT + 1;
const TOKEN = "bench-token";
const STATE = ".wrangler/bench-plant";
const FLOOR_STATE = ".wrangler/bench-plant-floor";
const RESULTS = join(ROOT, "bench", "signals-plant-results.md");
const DAY = 86_400_000;
const CHUNK = 10_000;

async function put(base: string, path: string, body: unknown): Promise<void> {
  const res = await fetch(`${base}${path}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`PUT ${path} -> ${res.status}: ${await res.text()}`);
}

async function post(base: string, path: string, body: string, auth = true): Promise<unknown> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(auth ? { authorization: `Bearer ${TOKEN}` } : {}),
    },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path} -> ${res.status}: ${text}`);
  return JSON.parse(text);
}

/**
 * Sends `seconds` of 1 Hz samples in calls of 10,000, one after the other, to every sender
 * in turn (each call's body to all of them before the next body), so that senders timed
 * together meet the same load of the machine.
 *
 * @returns samples/s of each sender, in the senders' order (the client's time to build the
 *   bodies left out).
 */
async function ingestSeries(
  senders: readonly ((body: string) => Promise<unknown>)[],
  seconds: number,
  salt = 0,
  start = START,
): Promise<number[]> {
  const busy = senders.map(() => 0);
  for (let first = 0; first < seconds; first += CHUNK) {
    const body = chunkBody(start, first, Math.min(CHUNK, seconds - first), salt);
    for (const [k, send] of senders.entries()) {
      const t = performance.now();
      const answer = (await send(body)) as { accepted: number };
      busy[k] = (busy[k] ?? 0) + performance.now() - t;
      if (answer.accepted !== Math.min(CHUNK, seconds - first)) throw new Error("not all accepted");
    }
  }
  return busy.map((ms) => seconds / (ms / 1000));
}

/** Bytes of every file under a directory (whose name passes `keep`, when given). */
function bytesUnder(dir: string, keep: (name: string) => boolean = () => true): number {
  if (!existsSync(dir)) return 0;
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) total += bytesUnder(path, keep);
    else if (keep(name)) total += stat.size;
  }
  return total;
}

async function withServer<T>(
  options: { port: number; state: string; script?: string },
  body: (base: string) => Promise<T>,
): Promise<T> {
  rmSync(join(ROOT, options.state), { recursive: true, force: true });
  if (options.script === undefined) applyMigrations(options.state);
  const child = spawnDevServer({
    port: options.port,
    persistTo: options.state,
    vars: [`OPERATOR_TOKEN:${TOKEN}`],
    script: options.script,
  });
  const base = `http://127.0.0.1:${options.port}`;
  try {
    await waitForHealthz(base, child);
    return await body(base);
  } finally {
    await stopDevServer(child);
  }
}

/** Steps 2-4 on the API's server (`base`), with the floor's server (`floorBase`) for transport floors. */
async function plant(base: string, floorBase: string) {
  const seconds = WEEKS * 7 * 86_400;
  const op = async <T>(path: string, body: unknown) =>
    (await post(base, `/operator/v1${path}`, JSON.stringify(body))) as T;
  const [company] = await op<{ id: number }[]>("/companies", [
    { name: "Plant bench", timezone: "UTC" },
  ]);
  if (!company) throw new Error("no company");
  // The 2024 history must stay in the store: this bench measures the hot store (the
  // archive's figures are bench/archive.ts's).
  await put(base, `/operator/v1/companies/${company.id}/signal-hot-window`, { days: 36_500 });
  const [key] = await op<{ key: string }[]>(`/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: ["signals.read"],
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  const machines = await op<{ id: number; uuid: string }[]>(
    `/companies/${company.id}/machines`,
    Array.from({ length: MACHINES + 1 }, (_, i) => ({ name: `Machine ${i + 1}` })),
  );
  const signals: string[] = [];
  for (const m of machines) {
    const [s] = await op<{ publicId: string }[]>(`/machines/${m.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog" },
    ]);
    if (!s) throw new Error("no signal");
    signals.push(s.publicId);
  }
  const [longMachine] = machines;
  const [longSignal, ...others] = signals;
  if (!key || !longMachine || longSignal === undefined) throw new Error("no machine");

  console.log(
    `One machine: ${WEEKS} weeks of 1 Hz (${seconds.toLocaleString("en-US")} samples) ...`,
  );
  // The floor takes every call's body too, right after the API: the same run, the same load.
  const [oneRate = 0, floorRate = 0] = await ingestSeries(
    [
      (body) => post(base, `/operator/v1/signals/${longSignal}/samples`, body),
      (body) => post(floorBase, "/objects/floor/samples", body, false),
    ],
    seconds,
  );
  console.log(
    `  ${oneRate.toFixed(0)} samples/s; the floor, call by call in turn: ${floorRate.toFixed(0)}`,
  );
  const storeDir = join(ROOT, STATE, "v3", "do", "production-monitoring-api-SignalStore");
  const storeBytes = bytesUnder(storeDir);
  const sqliteBytes = bytesUnder(storeDir, (name) => name.endsWith(".sqlite"));
  const d1Bytes = bytesUnder(join(ROOT, STATE, "v3", "d1"));

  console.log(`${MACHINES} machines at once, one day each ...`);
  const started = performance.now();
  await Promise.all(
    others.map((publicId, k) => {
      const send = (body: string) => post(base, `/operator/v1/signals/${publicId}/samples`, body);
      return ingestSeries([send], 86_400, k + 1, START + seconds * 1000);
    }),
  );
  const manyRate = (MACHINES * 86_400) / ((performance.now() - started) / 1000);
  console.log(`  ${manyRate.toFixed(0)} samples/s in all`);
  const allBytes = bytesUnder(join(ROOT, STATE));
  const allD1Bytes = bytesUnder(join(ROOT, STATE, "v3", "d1"));

  const end = START + seconds * 1000;
  const windows = {
    start: { from: START, twoHours: START + 12 * 3_600_000 },
    end: { from: end - 14 * DAY, twoHours: end - 12 * 3_600_000 - 2 * 3_600_000 },
  };
  const queries = [
    { label: "14 d, 3 min", width: 180_000, span: 14 * DAY, target: 20, unit: "m", period: 3 },
    { label: "14 d, 1 h", width: 3_600_000, span: 14 * DAY, target: 8, unit: "h", period: 1 },
    { label: "2 h, 1 s", width: 1000, span: 2 * 3_600_000, target: 8, unit: "s", period: 1 },
  ];
  const rows: {
    label: string;
    target: number;
    start: number;
    end: number;
    storeStart: number;
    storeEnd: number;
    floor: number;
    bytes: number;
  }[] = [];
  const publicGet = (path: string) => async () => {
    const res = await fetch(`${base}${path}`, {
      headers: { "x-api-key": key.key, "accept-encoding": "identity" },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text}`);
    return text;
  };
  for (const q of queries) {
    const paths = (["start", "end"] as const).map((at) => {
      const from = q.unit === "s" ? windows[at].twoHours : windows[at].from;
      const to = from + q.span;
      const query =
        `start_time=${iso(from)}&end_time=${iso(to)}&agg_unit=${q.unit}` +
        `&agg_period=${q.period}&agg_function=avg`;
      return {
        at,
        from,
        to,
        query,
        get: publicGet(`/v1/machines/${longMachine.uuid}/signals/${longSignal}?${query}`),
      };
    });
    let bytes = 0;
    for (const { at, from, to, get } of paths) {
      const text = await get();
      bytes = Math.max(bytes, Buffer.byteLength(text));
      const answer = JSON.parse(text) as { data: { timestamp: string; value: number }[] };
      const want = reference(seconds, from, to, q.width);
      if (answer.data.length !== want.length) throw new Error(`${q.label} ${at}: point count`);
      answer.data.forEach((p, i) => {
        const w = want[i];
        if (
          !w ||
          p.timestamp !== w.timestamp ||
          Math.abs(p.value - w.value) > 1e-9 * Math.abs(w.value)
        ) {
          throw new Error(
            `${q.label} ${at}: point ${i} is ${JSON.stringify(p)}, expected ${JSON.stringify(w)}`,
          );
        }
      });
    }
    // The store call alone, as the Worker times it (operator diagnostics route).
    const storeMedians = [];
    for (const { query } of paths) {
      const storeTimes: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const res = await fetch(`${base}/operator/v1/signals/${longSignal}/aggregate?${query}`, {
          headers: { authorization: `Bearer ${TOKEN}`, "accept-encoding": "identity" },
        });
        storeTimes.push(((await res.json()) as { queryMs: number }).queryMs);
      }
      storeMedians.push(
        percentile(
          storeTimes.sort((a, b) => a - b),
          50,
        ),
      );
    }
    // The transport floor: a constant answer of the same size from a bare Worker.
    const floorGet = async () =>
      (
        await fetch(`${floorBase}/answer?bytes=${bytes}`, {
          headers: { "accept-encoding": "identity" },
        })
      ).text();
    const [startPath, endPath] = paths;
    if (!startPath || !endPath) throw new Error("no paths");
    for (let i = 0; i < 3; i++) {
      await startPath.get();
      await endPath.get();
      await floorGet();
    }
    // Interleaved, so that a change of the machine's load falls on all three alike.
    const times = { start: [] as number[], end: [] as number[], floor: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      for (const [name, get] of [
        ["start", startPath.get],
        ["end", endPath.get],
        ["floor", floorGet],
      ] as const) {
        const t = performance.now();
        await get();
        times[name].push(performance.now() - t);
      }
    }
    const median = (xs: number[]) =>
      percentile(
        xs.sort((a, b) => a - b),
        50,
      );
    rows.push({
      label: q.label,
      target: q.target,
      start: median(times.start),
      end: median(times.end),
      storeStart: storeMedians[0] ?? 0,
      storeEnd: storeMedians[1] ?? 0,
      floor: median(times.floor),
      bytes,
    });
    const row = rows[rows.length - 1];
    console.log(
      `  ${q.label}: start ${row?.start.toFixed(1)} ms, end ${row?.end.toFixed(1)} ms, transport floor ${row?.floor.toFixed(1)} ms (${bytes} bytes)`,
    );
  }
  return {
    oneRate,
    floorRate,
    manyRate,
    storeBytes,
    sqliteBytes,
    d1Bytes,
    allBytes,
    allD1Bytes,
    rows,
  };
}

async function main(): Promise<void> {
  const seconds = WEEKS * 7 * 86_400;
  const result = await withServer(
    { port: FLOOR_PORT, state: FLOOR_STATE, script: "bench/workers/signals-floor.ts" },
    (floorBase) => withServer({ port: PORT, state: STATE }, (base) => plant(base, floorBase)),
  );
  const floorRate = result.floorRate;

  const bytesPerSample = result.storeBytes / seconds;
  const sqlitePerSample = result.sqliteBytes / seconds;
  const allSamples = seconds + MACHINES * 86_400;
  const years = (signals: number) => 10e9 / (sqlitePerSample * 86_400 * 365 * signals);
  const misses: string[] = [];
  if (bytesPerSample > 12) misses.push(`${bytesPerSample.toFixed(2)} bytes a sample > 12`);
  if (result.oneRate < 0.5 * floorRate) misses.push("one machine below 50 % of the floor");
  if (result.manyRate < 0.8 * result.oneRate) misses.push(`${MACHINES} at once below 0.8 of one`);
  for (const r of result.rows) {
    if (Math.max(r.start, r.end) >= r.target) misses.push(`${r.label}: median >= ${r.target} ms`);
    if (Math.max(r.start, r.end) / Math.min(r.start, r.end) > 1.3)
      misses.push(`${r.label}: end/start ratio > 1.3`);
  }
  const f = (x: number) => x.toFixed(1);
  const report = [
    "# Plant-scale signal storage",
    "",
    `Generated by \`npx tsx bench/signals-plant.ts\` on ${new Date().toISOString()} (local dev server, inspector off): ` +
      `one machine with ${WEEKS} weeks of 1 Hz samples of one signal (${seconds.toLocaleString("en-US")}), ` +
      `then ${MACHINES} machines with one day each, ingested at once; 10,000 samples a call through the operator API.`,
    "Query times: request to last body byte, uncompressed (`Accept-Encoding: identity`; Miniflare's entry worker would gzip for a client asking for it, which Cloudflare's proxy does after the Worker); " +
      `medians of ${RUNS} runs after 3 warm-ups, start, end and floor interleaved. ` +
      "Transport floor: a bare Worker on the same machine answering a constant JSON text of the same size.",
    `Load average during the run: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(", ")} on ${cpus().length} CPUs.`,
    "",
    "| Measure | Result | Target |",
    "|---|---:|---|",
    `| Bytes a sample on disk after the long history (SignalStore state directory, WAL included / samples) | ${bytesPerSample.toFixed(2)} | <= 12 |`,
    `| Bytes a sample in the SignalStore database files alone (\`.sqlite\`, no WAL) | ${sqlitePerSample.toFixed(2)} | |`,
    `| Bytes a sample, whole local state after everything (${(result.allBytes / 1e6).toFixed(1)} MB, D1 and every object, WAL included / ${allSamples.toLocaleString("en-US")} samples) | ${(result.allBytes / allSamples).toFixed(2)} | |`,
    `| D1 files (no samples in D1): after the long history / after everything | ${(result.d1Bytes / 1024).toFixed(0)} / ${(result.allD1Bytes / 1024).toFixed(0)} KiB (${((100 * result.allD1Bytes) / result.allBytes).toFixed(1)} % of the state) | |`,
    `| Capacity of one 10 GB store at 1 Hz, from the database bytes a sample: 1 / 4 / 16 signals | ${years(1).toFixed(1)} / ${years(4).toFixed(1)} / ${years(16).toFixed(2)} years | |`,
    `| Ingestion, bare-object floor (same blocks, no API) | ${floorRate.toFixed(0)} samples/s | |`,
    `| Ingestion, one machine | ${result.oneRate.toFixed(0)} samples/s (${((100 * result.oneRate) / floorRate).toFixed(0)} % of the floor) | >= 50 % |`,
    `| Ingestion, ${MACHINES} machines at once | ${result.manyRate.toFixed(0)} samples/s (${(result.manyRate / result.oneRate).toFixed(2)} of one) | >= 0.8 |`,
    ...result.rows.map(
      (r) =>
        `| ${r.label}, median at the start / end of the history | ${f(r.start)} / ${f(r.end)} ms (ratio ${(Math.max(r.start, r.end) / Math.min(r.start, r.end)).toFixed(2)}); store call alone ${f(r.storeStart)} / ${f(r.storeEnd)} ms; transport floor of the same ${(r.bytes / 1024).toFixed(0)} KiB ${f(r.floor)} ms | < ${r.target} ms, ratio <= 1.3 |`,
    ),
    "",
    misses.length === 0
      ? "Targets: all met."
      : `Targets missed:\n\n${misses.map((m) => `- ${m}`).join("\n")}`,
    "",
  ].join("\n");
  console.log(`\n${report}`);
  writeFileSync(RESULTS, report);
  process.exitCode = misses.length === 0 ? 0 : 1;
}

await main();
