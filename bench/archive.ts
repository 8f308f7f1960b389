/**
 * The signal archive's targets (issue 43; docs/signal-storage.md, "The archive"), on the
 * project's own Worker against wrangler's local dev server (its R2 emulated on disk):
 *
 * 1. Bytes a sample of the archive on the demo's real series (data/: Plant A's `power` and
 *    `count`, Fleet B's `voltage`, `rotation`, `pressure`, `vibration`), beside the hot
 *    store's bytes a sample of the same samples (measured here before the archive, and the
 *    10.6 of a 1 Hz signal, docs/signal-storage.md) and beside a Gorilla encoding of the same
 *    objects' samples (bench/lib/gorilla.ts). Targets: <= 3 for Plant A, <= 7 for Fleet B.
 * 2. A store's size bounded by the hot window plus rollups: one machine with `ARCHIVE_DAYS`
 *    (default 24) days of a 1 Hz signal up to now, its size all hot, then with a hot window
 *    of `ARCHIVE_HOT_DAYS` (default 10; the demo's series get it too, all of them older).
 *    Target: after <= its hot hours at the measured bytes an hour + 2.4 KB an archived hour
 *    (its row, hour and minute rollups).
 * 3. Queries on that machine, the public route, request to last byte: 2 h at 1 s over
 *    archived hours against the same over hot hours (target: median within 3x), and the
 *    rollup-served 7 d at 1 h and 7 d at 3 min over archived against hot hours (the same
 *    answers before and after the archive, bit for bit; medians reported). The server is
 *    restarted after the archive, so the first archived query reads R2 cold (reported apart).
 *
 * Writes `bench/archive-results.md`; exits 1 when a target is missed. Port
 * `BENCH_ARCHIVE_PORT` (default 8850).
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { buildDemoCompanies } from "../scripts/lib/demo-data";
import {
  DAY_OBJECT_MAX_SAMPLES,
  DAY_OBJECT_MIN_SAMPLES,
  MONTH_OBJECT_MIN_DAY_SAMPLES,
} from "../src/resources/signals/archive-layout";
import { envNumber, ROOT } from "./lib/bench-env";
import { gorillaBytes } from "./lib/gorilla";
import { percentile } from "./lib/local-worker";
import { chunkBody } from "./lib/signal-series";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const PORT = envNumber("BENCH_ARCHIVE_PORT", 8850);
const DAYS = envNumber("ARCHIVE_DAYS", 24);
const RUNS = envNumber("ARCHIVE_RUNS", 31);
const TOKEN = "bench-token";
const STATE = ".wrangler/bench-archive";
const RESULTS = join(ROOT, "bench", "archive-results.md");
const BASE = `http://127.0.0.1:${PORT}`;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The long machine's window (the product's default is 35 days; 10 keeps the load short). */
const HOT_WINDOW_DAYS = envNumber("ARCHIVE_HOT_DAYS", 10);
/**
 * What an archived hour may keep in its store: its row, hour rollup and minute rollups
 * (1,920 bytes), with SQLite's cell and page overhead (2,263 bytes measured in the first run).
 */
const ROLLUP_BYTES_PER_HOUR = 2_400;

interface ArchiveStatus {
  objects: {
    key: string;
    signalId: number;
    kind: string;
    start: string;
    end: string;
    samples: number;
    bytes: number;
  }[];
  hotHours: number;
  archivedHours: number;
  dueHours: number;
  databaseSize: number;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status}: ${text}`);
  return (text === "" ? null : JSON.parse(text)) as T;
}
const op = <T>(method: string, path: string, body?: unknown) =>
  call<T>(method, `/operator/v1${path}`, body);

/** One series of the demo in the bench's company: its group, machine, signal and samples. */
interface Series {
  group: string;
  machineId: number;
  publicId: string;
  /** Its rank among its machine's signals (the order of creation = of internal ids). */
  rank: number;
  ts: number[];
  values: number[];
}

async function ingest(publicId: string, ts: readonly number[], values: readonly number[]) {
  for (let i = 0; i < ts.length; i += 10_000) {
    await op("POST", `/signals/${publicId}/samples`, {
      timestamps: ts.slice(i, i + 10_000).map((t) => new Date(t).toISOString()),
      values: values.slice(i, i + 10_000),
    });
  }
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

async function main() {
  rmSync(join(ROOT, STATE), { recursive: true, force: true });
  applyMigrations(STATE);
  let child = spawnDevServer({ port: PORT, persistTo: STATE, vars: [`OPERATOR_TOKEN:${TOKEN}`] });
  try {
    await waitForHealthz(BASE, child);
    const [company] = await op<{ id: number }[]>("POST", "/companies", [
      { name: "Archive bench", timezone: "UTC" },
    ]);
    if (!company) throw new Error("no company");
    // Everything stays hot while it is loaded and measured.
    await op("PUT", `/companies/${company.id}/signal-hot-window`, { days: 36_500 });
    const [key] = await op<{ key: string }[]>("POST", `/companies/${company.id}/api-keys`, [
      {
        name: "bench",
        scopes: ["signals.read"],
        rateLimit: { requests: 1_000_000, periodSeconds: 60 },
      },
    ]);
    if (!key) throw new Error("no key");

    // 1. The demo's series, one machine of ours per demo machine.
    const series: Series[] = [];
    const demo = buildDemoCompanies((path) => readFileSync(join(ROOT, path), "utf8"));
    for (const [c, demoCompany] of demo.entries()) {
      const prefix = c === 0 ? "A" : "B";
      const withSignals = demoCompany.machines.filter((m) => m.signals.length > 0);
      const machines = await op<{ id: number }[]>(
        "POST",
        `/companies/${company.id}/machines`,
        withSignals.map((m, i) => ({ name: `${prefix} ${i} ${m.input.name}` })),
      );
      for (const [i, m] of withSignals.entries()) {
        const machineId = machines[i]?.id;
        if (machineId === undefined) throw new Error("no machine");
        for (const [rank, s] of m.signals.entries()) {
          const [created] = await op<{ publicId: string }[]>(
            "POST",
            `/machines/${machineId}/signals`,
            [{ name: s.input.name, displayName: s.input.displayName, kind: s.input.kind }],
          );
          if (!created) throw new Error("no signal");
          const ts = s.samples.map((x) => Date.parse(x.timestamp));
          const values = s.samples.map((x) => x.value);
          await ingest(created.publicId, ts, values);
          series.push({
            group: `${prefix === "A" ? "Plant A" : "Fleet B"} ${s.input.name}`,
            machineId,
            publicId: created.publicId,
            rank,
            ts,
            values,
          });
        }
      }
    }
    console.log(
      `Demo series loaded: ${series.length} signals, ${series.reduce((n, s) => n + s.ts.length, 0)} samples`,
    );

    // 2. One machine with DAYS days of 1 Hz up to the last whole hour.
    const [long] = await op<{ id: number; uuid: string }[]>(
      "POST",
      `/companies/${company.id}/machines`,
      [{ name: "Long 1 Hz" }],
    );
    if (!long) throw new Error("no machine");
    const [longSignal] = await op<{ publicId: string }[]>("POST", `/machines/${long.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog" },
    ]);
    if (!longSignal) throw new Error("no signal");
    const seconds = DAYS * 86_400;
    const longStart = Math.floor(Date.now() / HOUR) * HOUR - seconds * 1000;
    console.log(`Long machine: ${DAYS} days of 1 Hz (${seconds} samples) ...`);
    for (let first = 0; first < seconds; first += 10_000) {
      await op(
        "POST",
        `/signals/${longSignal.publicId}/samples`,
        chunkBody(longStart, first, Math.min(10_000, seconds - first)),
      );
    }

    const machineIds = [...new Set(series.map((s) => s.machineId)), long.id];
    const status = async (id: number) => op<ArchiveStatus>("GET", `/machines/${id}/signal-archive`);
    const hotSizes = new Map<number, number>();
    for (const id of machineIds) hotSizes.set(id, (await status(id)).databaseSize);

    const longPath = `/v1/machines/${long.uuid}/signals/${longSignal.publicId}`;
    const q = (from: number, span: number, unit: string, period: number) =>
      `${longPath}?start_time=${new Date(from).toISOString()}&end_time=${new Date(from + span).toISOString()}` +
      `&agg_unit=${unit}&agg_period=${period}&agg_function=avg`;
    const archivedFrom = longStart + 2 * DAY + 6 * HOUR;
    const hotFrom = Math.floor(Date.now() / HOUR) * HOUR - 2 * DAY;
    const queries = {
      rawArchived: q(archivedFrom, 2 * HOUR, "s", 1),
      rawHot: q(hotFrom, 2 * HOUR, "s", 1),
      hoursArchived: q(longStart, 7 * DAY, "h", 1),
      hoursHot: q(hotFrom - 5 * DAY, 7 * DAY, "h", 1),
      minutesArchived: q(longStart, 7 * DAY, "m", 3),
      minutesHot: q(hotFrom - 5 * DAY, 7 * DAY, "m", 3),
    };
    const get = async (path: string) => {
      const t = performance.now();
      const res = await fetch(`${BASE}${path}`, {
        headers: { "x-api-key": key.key, "accept-encoding": "identity" },
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text}`);
      return { text, ms: performance.now() - t };
    };
    const before: Record<string, string> = {};
    for (const [name, path] of Object.entries(queries)) before[name] = (await get(path)).text;

    // 3. The hot window; each store learns it with its next ingestion (its first sample
    // again: the same value, nothing changes, and its hour is past the window).
    await op("PUT", `/companies/${company.id}/signal-hot-window`, { days: HOT_WINDOW_DAYS });
    for (const s of series) await ingest(s.publicId, s.ts.slice(0, 1), s.values.slice(0, 1));
    await op("POST", `/signals/${longSignal.publicId}/samples`, chunkBody(longStart, 0, 1));
    const archiveStarted = performance.now();
    const deadline = Date.now() + 30 * 60_000;
    // One machine at a time, and patiently: every store's archive runs on the one workerd
    // thread, and a status call waits for the step in progress on its object.
    for (const id of machineIds) {
      for (;;) {
        const due = await status(id).then(
          (st) => st.dueHours,
          () => Number.NaN,
        );
        if (due === 0) break;
        if (Date.now() > deadline)
          throw new Error(`machine ${id}: ${due} hours still due after 30 minutes`);
        await new Promise((done) => setTimeout(done, 2_000));
      }
    }
    const archiveSeconds = (performance.now() - archiveStarted) / 1000;
    console.log(
      `Archived in ${archiveSeconds.toFixed(1)} s (alarms 10 s after the ingestion, then 1 s apart)`,
    );

    // Bytes a sample per group: the objects' bytes over their samples; Gorilla over the same
    // objects' samples; the hot store's size over the machines' samples.
    const groups = new Map<
      string,
      { samples: number; bytes: number; gorilla: number; objects: number; kinds: Set<string> }
    >();
    const statuses = new Map<number, ArchiveStatus>();
    for (const id of machineIds) statuses.set(id, await status(id));
    for (const s of series) {
      const st = statuses.get(s.machineId);
      if (!st) throw new Error("no status");
      const signalIds = [...new Set(st.objects.map((o) => o.signalId))].sort((a, b) => a - b);
      const mine = st.objects.filter((o) => o.signalId === signalIds[s.rank]);
      const g = groups.get(s.group) ?? {
        samples: 0,
        bytes: 0,
        gorilla: 0,
        objects: 0,
        kinds: new Set<string>(),
      };
      // Which object holds each sample: the archive's rule, by the samples of its UTC day.
      const perDay = new Map<number, number>();
      for (const t of s.ts) perDay.set(t - (t % DAY), (perDay.get(t - (t % DAY)) ?? 0) + 1);
      const holder = (t: number) => {
        const n = perDay.get(t - (t % DAY)) ?? 0;
        const kind =
          n > DAY_OBJECT_MAX_SAMPLES
            ? "hour"
            : n >= DAY_OBJECT_MIN_SAMPLES
              ? "day"
              : n >= MONTH_OBJECT_MIN_DAY_SAMPLES
                ? "month"
                : "year";
        return mine.find(
          (o) => o.kind === kind && t >= Date.parse(o.start) && t < Date.parse(o.end),
        );
      };
      const byObject = new Map<string, number[]>();
      for (const [i, t] of s.ts.entries()) {
        const o = holder(t);
        if (!o) throw new Error(`${s.group}: no object holds ${new Date(t).toISOString()}`);
        byObject.set(o.key, [...(byObject.get(o.key) ?? []), i]);
      }
      for (const o of mine) {
        const idx = byObject.get(o.key) ?? [];
        if (idx.length !== o.samples)
          throw new Error(`${s.group}: object ${o.key} holds ${o.samples}, expected ${idx.length}`);
        g.gorilla += gorillaBytes(
          idx.map((i) => s.ts[i] ?? 0),
          idx.map((i) => s.values[i] ?? 0),
        );
        g.bytes += o.bytes;
        g.samples += o.samples;
        g.objects++;
        g.kinds.add(o.kind);
      }
      if (mine.reduce((n, o) => n + o.samples, 0) !== s.ts.length)
        throw new Error(`${s.group}: not every sample archived`);
      groups.set(s.group, g);
    }
    const hotBytes = (prefix: string) => {
      const ids = [
        ...new Set(series.filter((s) => s.group.startsWith(prefix)).map((s) => s.machineId)),
      ];
      const bytes = ids.reduce((n, id) => n + (hotSizes.get(id) ?? 0), 0);
      const samples = series
        .filter((s) => s.group.startsWith(prefix))
        .reduce((n, s) => n + s.ts.length, 0);
      return bytes / samples;
    };

    const longStatus = statuses.get(long.id);
    if (!longStatus) throw new Error("no status");
    const longHot = hotSizes.get(long.id) ?? 0;
    const totalHours = seconds / 3600;
    const bound =
      (longHot / totalHours) * longStatus.hotHours +
      ROLLUP_BYTES_PER_HOUR * longStatus.archivedHours;
    const longArchiveBytes = longStatus.objects.reduce((n, o) => n + o.bytes, 0);

    // 4. Restart (a cold object: the first archived read goes to R2), then the queries.
    await stopDevServer(child);
    child = spawnDevServer({ port: PORT, persistTo: STATE, vars: [`OPERATOR_TOKEN:${TOKEN}`] });
    await waitForHealthz(BASE, child);
    await get(queries.hoursHot); // the store object and the isolate awake, no archived read
    const cold = await get(queries.rawArchived);
    const same: Record<string, boolean> = { rawArchived: cold.text === before.rawArchived };
    for (const [name, path] of Object.entries(queries)) {
      if (name !== "rawArchived") same[name] = (await get(path)).text === before[name];
    }
    const times: Record<string, number[]> = {};
    for (let i = 0; i < RUNS; i++) {
      for (const [name, path] of Object.entries(queries)) {
        const list = times[name] ?? [];
        list.push((await get(path)).ms);
        times[name] = list;
      }
    }
    const med = Object.fromEntries(Object.entries(times).map(([name, xs]) => [name, median(xs)]));

    // Results and targets.
    const load = loadavg()
      .map((x) => x.toFixed(1))
      .join(" / ");
    const rows = [...groups.entries()].map(([group, g]) => {
      const perSample = g.bytes / g.samples;
      const target = group.startsWith("Plant A") ? 3 : 7;
      return { group, g, perSample, target, met: perSample <= target };
    });
    const rawRatio = (med.rawArchived ?? 0) / (med.rawHot ?? 1);
    const checks = [
      ...rows.map((r) => ({
        what: `${r.group}: ${r.perSample.toFixed(2)} bytes a sample`,
        met: r.met,
        target: `<= ${r.target}`,
      })),
      {
        what: `store after the archive ${longStatus.databaseSize} bytes, bound ${Math.round(bound)}`,
        met: longStatus.databaseSize <= bound,
        target: "hot hours + 2.4 KB an archived hour",
      },
      {
        what: `2 h at 1 s archived / hot median ${rawRatio.toFixed(2)}`,
        met: rawRatio <= 3,
        target: "<= 3",
      },
      {
        what: "every answer after the archive equal to before, bit for bit",
        met: Object.values(same).every(Boolean),
        target: "equal",
      },
    ];
    const lines = [
      "# Signal archive benchmark (`bench/archive.ts`)",
      "",
      `Run ${new Date().toISOString()}, ${cpus().length} CPUs, load average ${load} at the end (other agents at work).`,
      `Archive of the demo and of ${DAYS} days of 1 Hz done in ${archiveSeconds.toFixed(1)} s after the window was set (alarms 10 s after an ingestion, then 1 s apart).`,
      "",
      "## Bytes a sample (the demo's real series, every sample archived)",
      "",
      "| series | samples | objects | archive (Parquet on R2) | hot store, measured | Gorilla, same objects | target |",
      "|---|---:|---|---:|---:|---:|---|",
      ...rows.map(
        (r) =>
          `| ${r.group} | ${r.g.samples} | ${r.g.objects} (${[...r.g.kinds].join(", ")}) | **${r.perSample.toFixed(2)}** | ${hotBytes(r.group.slice(0, 7)).toFixed(1)} | ${(r.g.gorilla / r.g.samples).toFixed(2)} | <= ${r.target}: ${r.met ? "met" : "**missed**"} |`,
      ),
      "",
      `The hot store's figure is the machines' SQLite size over their samples (both signals of a Plant A machine, four of a Fleet B machine): sparse series pay each hour's row; a 1 Hz signal costs 10.6 (docs/signal-storage.md). The long machine's archive: ${(longArchiveBytes / (longStatus.objects.reduce((n, o) => n + o.samples, 0) || 1)).toFixed(2)} bytes a sample of its synthetic 1 Hz series (noise of four decimals on a sine: full-precision floats).`,
      "",
      "## A store's size",
      "",
      `One machine, ${DAYS} days of 1 Hz: **${longHot.toLocaleString("en-US")} bytes** all hot; after the ${HOT_WINDOW_DAYS}-day window **${longStatus.databaseSize.toLocaleString("en-US")} bytes** (${longStatus.hotHours} hot hours, ${longStatus.archivedHours} archived hours, which keep ${Math.round((longStatus.databaseSize - (longHot / totalHours) * longStatus.hotHours) / longStatus.archivedHours)} bytes each; bound ${Math.round(bound).toLocaleString("en-US")}: ${checks[rows.length]?.met ? "met" : "**missed**"}). Its ${longStatus.objects.length} objects on R2: ${longArchiveBytes.toLocaleString("en-US")} bytes.`,
      "",
      `## Queries (public route, request to last byte, uncompressed, median of ${RUNS})`,
      "",
      "| query | archived hours | hot hours | ratio | same answer as before |",
      "|---|---:|---:|---:|---|",
      `| 2 h at 1 s (7,200 points) | ${med.rawArchived?.toFixed(1)} ms (first after a restart: ${cold.ms.toFixed(1)} ms) | ${med.rawHot?.toFixed(1)} ms | **${rawRatio.toFixed(2)}** (target <= 3: ${rawRatio <= 3 ? "met" : "**missed**"}) | ${same.rawArchived && same.rawHot ? "yes" : "**no**"} |`,
      `| 7 d at 1 h | ${med.hoursArchived?.toFixed(1)} ms | ${med.hoursHot?.toFixed(1)} ms | ${((med.hoursArchived ?? 0) / (med.hoursHot ?? 1)).toFixed(2)} | ${same.hoursArchived && same.hoursHot ? "yes" : "**no**"} |`,
      `| 7 d at 3 min | ${med.minutesArchived?.toFixed(1)} ms | ${med.minutesHot?.toFixed(1)} ms | ${((med.minutesArchived ?? 0) / (med.minutesHot ?? 1)).toFixed(2)} | ${same.minutesArchived && same.minutesHot ? "yes" : "**no**"} |`,
      "",
      "Rollup-served widths never read R2 (an archived hour keeps its hour and minute rollups).",
      "",
      "## Targets",
      "",
      ...checks.map((c) => `- ${c.what} (${c.target}): ${c.met ? "met" : "**missed**"}`),
      "",
    ];
    writeFileSync(RESULTS, lines.join("\n"));
    console.log(lines.join("\n"));
    if (!checks.every((c) => c.met)) process.exitCode = 1;
  } finally {
    await stopDevServer(child);
  }
}

await main();
