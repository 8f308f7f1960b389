/**
 * Checks the metrics report of Demo Plant A against figures computed straight from the
 * SME CSV: `npx tsx scripts/check-demo-oee.ts [--url URL] [--start ISO] [--end ISO]`.
 *
 * A second, independent implementation of the demo's rules (data/README.md, "Production,
 * stops and OEE"), of the stops the count signal makes (docs/machine-state.md, in
 * ./lib/demo-detected-stops.ts) and of docs/metrics.md: it does not use the seed's
 * derivation code nor the Worker's detection, and works on the raw rows (each row's interval,
 * kind, items) instead of on runs, logs and stops. For every row of the report (all pages,
 * instance starts in [start, end]) it recomputes the time classes, availability,
 * effectiveness, quality, OEE and minutes lost by low speed, and compares them to 1e-6. It
 * also checks that each instance starts at 06:00, 14:00 or 22:00 Europe/Rome and ends at the
 * next of those wall-clock times.
 *
 * `--replayed` checks the demo week instead (what the replay of `npm start` filled in for
 * the last 7 days, scripts/lib/replay-week.ts): the report rows of the closed shift instances
 * since the one running 7 days ago, against the same computation on the CSV rows moved to
 * the real dates they play on (the recorded day of the same weekday, same time of day).
 * Shift instances that the replay played live (realtime logs, `isAutomated`) are counted
 * and left out: their logs are the realtime segments, not the CSV's runs.
 *
 * Needs a running Worker with the demo loaded (`npm start`) and its keys in
 * `.wrangler/demo-keys.json`. Exits 1 on any difference.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { TZDate } from "@date-fns/tz";
import { createClient } from "../clients/typescript/src/index";
import { parseCsv, toIsoUtc } from "./lib/csv";
import { DEMO_FILES, DEMO_PLANT_A } from "./lib/demo-data";
import {
  assetPlannedTime,
  detectedStops,
  type Interval,
  joined,
  lengthOf,
  without,
} from "./lib/demo-detected-stops";
import { readDemoKeys } from "./lib/demo-seed";
import { ok } from "./lib/http";
import { resolveBaseUrl } from "./lib/local-server";
import { PROJECT_ROOT } from "./lib/project";
import { replayOffset } from "./lib/replay-plan";
import { weekWindow } from "./lib/replay-week-plan";

const TOLERANCE = 1e-6;
const FIVE_MINUTES = 300_000;
/** Local end of each shift by its local start (Europe/Rome). */
const SHIFT_ENDS: Record<string, string> = { "06:00": "14:00", "14:00": "22:00", "22:00": "06:00" };

interface Row {
  ts: number;
  end: number;
  kind: "alarm" | "production" | "none";
  product: number;
  items: number;
  rate: number | null;
}

interface ReportRow {
  machine: { id: number; name: string };
  shift: { name: string; startTime: string; endTime: string };
  shiftIndicators: Record<string, number | null>;
  productionMetrics: Record<string, number | null | boolean>;
}

/** The SME rows of each asset with their intervals, kinds and automatic rates. */
function loadRows(): Map<number, Row[]> {
  const text = readFileSync(join(PROJECT_ROOT, DEMO_FILES.sme), "utf8");
  const byAsset = new Map<number, Map<number, Record<string, string>>>();
  for (const raw of parseCsv(text).rows) {
    const asset = Number(raw.asset);
    const map = byAsset.get(asset) ?? new Map<number, Record<string, string>>();
    map.set(Date.parse(toIsoUtc(raw.ts ?? "")), raw);
    byAsset.set(asset, map);
  }
  const out = new Map<number, Row[]>();
  for (const [asset, map] of byAsset) {
    const times = [...map.keys()].sort((a, b) => a - b);
    out.set(
      asset,
      times.map((ts, i) => {
        const raw = map.get(ts) ?? {};
        const next = times[i + 1];
        const end = next === undefined ? ts + FIVE_MINUTES : Math.min(ts + FIVE_MINUTES, next);
        const status = Number(raw.status);
        const alarm = Number(raw.alarm);
        const items = Number(raw.items);
        const kind =
          status === 3 || alarm === 1
            ? "alarm"
            : status === 1 || status === 2
              ? "production"
              : "none";
        const full = ts % FIVE_MINUTES === 0 && end - ts === FIVE_MINUTES;
        const rate = status === 2 && alarm === 0 && items > 0 && full ? items / 5 : null;
        return { ts, end, kind, product: Number(raw.product), items, rate };
      }),
    );
  }
  return out;
}

/**
 * The rows as the replay plays them between `from` and `to`: each local date (Europe/Rome)
 * gets the recorded day of its weekday (`replayOffset`), moved by whole local days, each
 * row's interval cut at that day's end.
 */
function replayedRows(rows: Map<number, Row[]>, from: number, to: number): Map<number, Row[]> {
  const out = new Map<number, Row[]>();
  const first = new TZDate(from, "Europe/Rome");
  for (let d = -1; ; d++) {
    const day = new TZDate(
      first.getFullYear(),
      first.getMonth(),
      first.getDate() + d,
      "Europe/Rome",
    );
    if (day.getTime() >= to) break;
    const next = new TZDate(
      first.getFullYear(),
      first.getMonth(),
      first.getDate() + d + 1,
      "Europe/Rome",
    );
    const { sourceStart, offset } = replayOffset(day.getTime());
    const sourceEnd = sourceStart + (next.getTime() - day.getTime());
    for (const [asset, list] of rows) {
      const moved = out.get(asset) ?? [];
      for (const row of list) {
        if (row.ts < sourceStart || row.ts >= sourceEnd) continue;
        moved.push({ ...row, ts: row.ts + offset, end: Math.min(row.end, sourceEnd) + offset });
      }
      out.set(asset, moved);
    }
  }
  return out;
}

/**
 * Nominal speed per asset and product, as the demo stored them (`Asset N`, SKU `Pnn`): the
 * speeds are the demo's assumption (data/README.md), the figures are what this checks.
 */
async function nominalSpeeds(api: ReturnType<typeof createClient>): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let page = 1; ; page++) {
    const answer = ok(
      "POST",
      await api.POST("/v1/nominal-speeds/filters", { body: { limit: 100, page } }),
    );
    for (const speed of answer.nominalSpeeds) {
      const asset = Number(speed.machine.name.replace("Asset ", ""));
      out.set(`${asset}|${Number(speed.sku.sku.slice(1))}`, speed.nominalSpeed);
    }
    if (page >= answer.totalPages) return out;
  }
}

/**
 * The downtime the count signal detects, per asset (the alarm runs, the recorded stops, take
 * in what they touch: `expected` joins both).
 */
function detectedByAsset(rows: Map<number, Row[]>, now: number): Map<number, Interval[]> {
  const out = new Map<number, Interval[]>();
  for (const [asset, list] of rows) {
    const first = list[0]?.ts ?? now;
    const last = list[list.length - 1]?.end ?? now;
    const planned = assetPlannedTime(
      list.map((r) => ({ ts: r.ts, items: r.items, alarm: r.kind === "alarm" })),
      first,
      last + 1,
    );
    out.set(asset, detectedStops(list, now, planned));
  }
  return out;
}

/**
 * The report figures of one asset and window, from the rows and the detected stops
 * (docs/metrics.md): alarm and detected stops are non-programmed downtime, production rows
 * are production where no stop is.
 */
function expected(
  rows: Row[],
  detected: readonly Interval[],
  speeds: Map<string, number>,
  asset: number,
  w0: number,
  w1: number,
) {
  const clip = (xs: Interval[]) =>
    joined(xs.map((x) => ({ start: Math.max(x.start, w0), end: Math.min(x.end, w1) })));
  let total = 0;
  let ideal = 0;
  for (const row of rows) {
    if (row.kind === "production" && row.ts >= w0 && row.ts < w1) {
      const speed = speeds.get(`${asset}|${row.product}`);
      if (speed === undefined)
        throw new Error(`No nominal speed for asset ${asset} product ${row.product}`);
      total += row.items;
      ideal += row.items / speed;
    }
  }
  const interval = (r: Row) => ({ start: r.ts, end: r.end });
  const stops = clip([...rows.filter((r) => r.kind === "alarm").map(interval), ...detected]);
  const production = without(
    clip(rows.filter((r) => r.kind === "production").map(interval)),
    stops,
  );
  const covered = joined([...stops, ...production]);
  const first = covered[0]?.start;
  const last = covered[covered.length - 1]?.end;
  const available = (w1 - w0) / 60_000;
  const late = first === undefined ? 0 : (first - w0) / 60_000;
  const early = last === undefined ? 0 : (w1 - last) / 60_000;
  const nonProgrammed = lengthOf(stops) / 60_000;
  const noData = available - nonProgrammed - lengthOf(production) / 60_000 - late - early;
  const run = available - (nonProgrammed + late + early + noData);
  // A ratio without a denominator is null (docs/metrics.md); OEE is fully productive time
  // over the available time (every item is good here), 0 when nothing was made.
  const availability = available > 0 ? run / available : null;
  const effectiveness = run > 0 ? ideal / run : null;
  const quality = total > 0 ? 1 : null;
  return {
    availableTime: available,
    programmedDowntime: 0,
    nonProgrammedDowntime: nonProgrammed,
    lateStartTime: late,
    earlyStopTime: early,
    noDataTime: noData,
    availability,
    effectiveness,
    quality,
    oee: available > 0 ? ideal / available : null,
    minutesLostByLowSpeed: Math.max(0, run - ideal),
    minutesLostByLowQuality: 0,
  };
}

/** Local `HH:MM` of an instant in Europe/Rome. */
function romeClock(ms: number): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: "Europe/Rome",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(ms);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: "string" },
      start: { type: "string", default: "2022-08-31T00:00:00Z" },
      end: { type: "string", default: "2022-09-22T00:00:00Z" },
      replayed: { type: "boolean", default: false },
    },
  });
  const week = values.replayed ? weekWindow(Date.now()) : null;
  const start = week ? new Date(week.from).toISOString() : values.start;
  const end = week ? new Date(week.until).toISOString() : values.end;
  const baseUrl = resolveBaseUrl(values.url);
  const key = readDemoKeys(baseUrl).find((k) => k.company === DEMO_PLANT_A);
  if (!key) throw new Error(`No Demo Plant A key for ${baseUrl} in .wrangler/demo-keys.json`);
  const report: ReportRow[] = [];
  const api = createClient({ baseUrl, apiKey: key.key, maxRetries: 0 });
  for (let page = 1; ; page++) {
    const answer = ok(
      "POST",
      await api.POST("/v1/reports/metrics", {
        body: {
          startDate: { between: { start, end } },
          limit: 100,
          page,
        },
      }),
    );
    report.push(...answer.metrics);
    if (page >= answer.totalPages) break;
  }
  const recorded = loadRows();
  const speeds = await nominalSpeeds(api);
  const rows = week ? replayedRows(recorded, week.from, week.until) : recorded;
  // The count samples the detection read: the replay sends them from a day before the week
  // and up to now (the running shift plays them live), the seed the whole recording.
  const now = Date.now();
  const sent = (from: number) =>
    new Map(
      [...replayedRows(recorded, from, now + 1)].map(([asset, list]) => [
        asset,
        list.filter((r) => r.ts >= from && r.ts <= now),
      ]),
    );
  const detected = detectedByAsset(week ? sent(week.from - 86_400_000) : recorded, now);
  // Shift instances played live by an earlier replay: their logs are realtime segments.
  const live = new Set<string>();
  if (week) {
    for (let page = 1; ; page++) {
      const answer = ok(
        "POST",
        await api.POST("/v1/production-logs/filters", {
          body: { start: { between: { start, end } }, limit: 100, page },
        }),
      );
      for (const log of answer.productionLogs) {
        if (log.isAutomated && log.shift) live.add(`${log.machine.id}:${log.shift.start}`);
      }
      if (page >= answer.totalPages) break;
    }
  }
  const compared = report.filter(
    (row) => !live.has(`${row.machine.id}:${new Date(row.shift.startTime).toISOString()}`),
  );
  if (week) {
    console.log(
      `The demo week from ${start}: ${report.length} report rows of closed shifts, ` +
        `${report.length - compared.length} played live by the replay (not compared), ` +
        `${compared.filter((r) => Number(r.productionMetrics.oee ?? 0) > 0).length} of the compared with production.`,
    );
  }
  const problems: string[] = [];
  let worst = 0;
  let aboveNominal = 0;
  for (const row of compared) {
    const asset = Number(row.machine.name.replace("Asset ", ""));
    const w0 = Date.parse(row.shift.startTime);
    const w1 = Date.parse(row.shift.endTime);
    const where = `${row.machine.name} ${row.shift.name} ${row.shift.startTime}`;
    if (SHIFT_ENDS[romeClock(w0)] !== romeClock(w1)) {
      problems.push(`${where}: not a 06-14, 14-22 or 22-06 Europe/Rome shift`);
    }
    const want = expected(rows.get(asset) ?? [], detected.get(asset) ?? [], speeds, asset, w0, w1);
    const { aboveNominalSpeed, ...figures } = row.productionMetrics;
    const got = { ...row.shiftIndicators, ...figures } as Record<string, number | null>;
    // The flag says what effectiveness says; the recording itself never runs above nominal
    // speed (its speeds are fitted to it), a replayed week may (its night shifts join days).
    const above = (want.effectiveness ?? 0) > 1;
    if (aboveNominalSpeed !== above) {
      problems.push(
        `${where} aboveNominalSpeed: ${aboveNominalSpeed}, effectiveness ${want.effectiveness}`,
      );
    }
    if (above) {
      aboveNominal += 1;
      if (!week) problems.push(`${where}: effectiveness ${want.effectiveness} above 1`);
    }
    for (const [field, value] of Object.entries(want)) {
      const diff =
        value === null
          ? got[field] === null
            ? 0
            : Number.NaN
          : Math.abs(value - (got[field] ?? Number.NaN));
      worst = Math.max(worst, Number.isNaN(diff) ? Number.POSITIVE_INFINITY : diff);
      if (!(diff <= TOLERANCE))
        problems.push(`${where} ${field}: CSV ${value}, report ${got[field]}`);
    }
  }
  const sample = compared.find((r) => Number(r.productionMetrics.oee ?? 0) > 0);
  if (sample) {
    const asset = Number(sample.machine.name.replace("Asset ", ""));
    const want = expected(
      rows.get(asset) ?? [],
      detected.get(asset) ?? [],
      speeds,
      asset,
      Date.parse(sample.shift.startTime),
      Date.parse(sample.shift.endTime),
    );
    console.log(
      `Example: ${sample.machine.name}, ${sample.shift.name} from ${sample.shift.startTime}`,
    );
    for (const field of ["availability", "effectiveness", "quality", "oee"] as const) {
      console.log(
        `  ${field}: CSV ${want[field]?.toFixed(9)}  report ${(sample.productionMetrics[field] as number | null)?.toFixed(9)}`,
      );
    }
  }
  console.log(
    `Compared ${compared.length} report rows (${Object.keys(expected([], [], speeds, 0, 0, 1)).length} fields each); ` +
      `largest difference ${worst.toExponential(2)}; ${aboveNominal} above nominal speed (flagged).`,
  );
  if (report.length === 0) problems.push("The report has no rows: is the demo loaded?");
  if (problems.length > 0) {
    console.error(problems.slice(0, 20).join("\n"));
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
