/**
 * The operational part of the demo: what the plant data implies for shifts, SKUs,
 * nominal speeds, production logs and stops, as pure functions from the CSV files of
 * `data/` (see data/README.md, "Production, stops and OEE"). Every rule here is an
 * assumption of the demo, not a fact of the source data; the README states each one.
 *
 * - "Demo Plant A" (SME file): SKUs P00..P13, three 8-hour shifts in Europe/Rome,
 *   nominal speeds per machine/product (./demo-nominal-speeds.ts),
 *   one production log per run of one product inside one shift instance, and one
 *   unplanned stop per run of alarm rows.
 * - "Fleet B" (Azure files): one classified unplanned stop per failure (assumed
 *   repair time) and one classified programmed stop per maintenance record that is
 *   not the repair of a failure; one 24-hour shift that reports leave out.
 */
import { TZDate } from "@date-fns/tz";
import { parseCsv, toIsoUtc, toNumber } from "./csv";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Length of one regular SME row: the file has one row per machine every 5 minutes. */
export const SME_ROW_MS = 5 * MINUTE_MS;

/** The time zone of Demo Plant A (the plant is Italian; the file's `ts` is UTC). */
export const PLANT_A_TIMEZONE = "Europe/Rome";

/** The three 8-hour shifts of Demo Plant A, every day (an assumption: the data has no shifts). */
export const PLANT_A_SHIFTS = [
  { name: "Morning", startTime: "06:00", endTime: "14:00" },
  { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
  { name: "Night", startTime: "22:00", endTime: "06:00" },
] as const;

/** The name of Demo Plant A's weekend closures (the plant calendar, docs/metrics.md). */
export const PLANT_A_WEEKEND = "Weekend";

/** The name of the closure of a shift one machine did not run (`idleShifts`). */
export const IDLE_SHIFT = "Shift not run";

/** A closure of the plant calendar as the operator API takes it (local dates, inclusive). */
export interface DemoClosure {
  name: string;
  startDate: string;
  endDate: string;
}

/**
 * Demo Plant A's weekends that touch the local dates (Europe/Rome) of `[from, to]`, one
 * closure each, Saturday and Sunday: the recorded plant stood still on both (its rows show
 * no items from Saturday 00:00 to Monday 00:00), so the demo's calendar closes them, as a
 * plant that works Monday to Friday would. The same weekend gives the same closure, so
 * creating them again is idempotent.
 *
 * @param from first instant, ms; `to` last instant, ms (a span of weeks: one step per day).
 */
export function plantAWeekends(from: number, to: number): DemoClosure[] {
  const first = new TZDate(from, PLANT_A_TIMEZONE);
  const last = new TZDate(to, PLANT_A_TIMEZONE);
  const iso = (y: number, m: number, d: number) =>
    new Date(Date.UTC(y, m, d)).toISOString().slice(0, 10);
  const endKey = iso(last.getFullYear(), last.getMonth(), last.getDate());
  // The first date's weekend (a Sunday's began the day before), else the next one.
  const day = first.getDay(); // 0 = Sunday ... 6 = Saturday
  const toSaturday = day === 0 ? -1 : 6 - day;
  const out: DemoClosure[] = [];
  for (let d = first.getDate() + toSaturday; ; d += 7) {
    const saturday = iso(first.getFullYear(), first.getMonth(), d);
    if (saturday > endKey) return out;
    out.push({
      name: PLANT_A_WEEKEND,
      startDate: saturday,
      endDate: iso(first.getFullYear(), first.getMonth(), d + 1),
    });
  }
}

/** A shift instance one asset did not run, ms: `[start, end)`. */
export interface IdleShift {
  asset: number;
  start: number;
  end: number;
}

/**
 * The weekday shift instances (06:00, 14:00, 22:00 Europe/Rome, starting Monday to Friday)
 * that lie wholly within an asset's rows and hold no row with items and no alarm row: the
 * recorded plant did not run that shift on that machine (Asset 2's Tuesday night shift of
 * the recorded week), so the demo's calendar closes it for the machine, as it closes the
 * weekends for all (`plantAWeekends`). A shift with a single item or alarm stays scheduled,
 * and its idle time stays downtime.
 *
 * @param rowsByAsset rows by asset, ascending `ts` (recorded, or moved to the real dates).
 */
export function idleShifts(rowsByAsset: ReadonlyMap<number, readonly SmeRow[]>): IdleShift[] {
  const out: IdleShift[] = [];
  for (const [asset, rows] of rowsByAsset) {
    const first = rows[0]?.ts;
    const last = rows[rows.length - 1]?.ts;
    if (first === undefined || last === undefined) continue;
    const starts = wallClockInstants(
      PLANT_A_SHIFTS.map((s) => s.startTime),
      PLANT_A_TIMEZONE,
      first - DAY_MS,
      last + DAY_MS,
    );
    let i = 0;
    for (const [k, start] of starts.entries()) {
      const end = starts[k + 1];
      if (end === undefined || start < first || end > last) continue;
      const weekday = new TZDate(start, PLANT_A_TIMEZONE).getDay();
      if (weekday === 0 || weekday === 6) continue;
      while (i < rows.length && (rows[i] as SmeRow).ts < start) i += 1;
      let ran = false;
      for (let j = i; j < rows.length && (rows[j] as SmeRow).ts < end; j += 1) {
        const row = rows[j] as SmeRow;
        if (row.items > 0 || rowKind(row) === "alarm") ran = true;
      }
      if (!ran) out.push({ asset, start, end });
    }
  }
  return out;
}

/** The single shift of Fleet B: 24 hours from 00:00 UTC, not considered in the metrics report. */
export const FLEET_B_SHIFT = {
  name: "Day",
  startTime: "00:00",
  endTime: "00:00",
  isConsidered: false,
} as const;

/**
 * The manual packing bench's shift: 24 hours from 00:00, not considered in the reports (it has
 * no count signal and no production logs, so it has no OEE). The bench works whenever the lines
 * do; with a running shift, its realtime state answers like every other machine's, and the
 * board asks no machine of the demo into a 409 (docs/demo-data.md).
 */
export const BENCH_SHIFT = {
  name: "Bench, all day",
  startTime: "00:00",
  endTime: "00:00",
  isConsidered: false,
} as const;

/** Assumed repair time of one Azure failure (the source gives only the failure instant). */
export const FAILURE_REPAIR_MS = 8 * HOUR_MS;

/** Assumed duration of one Azure maintenance record (the source gives only its instant). */
export const MAINTENANCE_MS = 2 * HOUR_MS;

/** General cause given to the failure stops of Fleet B. */
export const FAILURE_CAUSE = "Component failure";

/** General cause given to the maintenance stops of Fleet B. */
export const MAINTENANCE_CAUSE = "Scheduled maintenance";

/** One row of the SME file, as numbers (instants in ms since the epoch). */
export interface SmeRow {
  /** `ts`, ms since the epoch. */
  ts: number;
  /** End of the interval the row stands for: `min(ts + 5 min, next row's ts)` of the same asset. */
  end: number;
  asset: number;
  items: number;
  /** `power_avg`, kW. */
  power: number;
  status: number;
  alarm: number;
  product: number;
}

/** What a row says the machine was doing. */
export type RowKind = "production" | "alarm" | "idle";

/**
 * Classifies an SME row: `status` 3 or `alarm` 1 is an alarm, `status` 1 (manual) or 2
 * (automatic) is production, anything else (`status` 0, idle) is neither.
 */
export function rowKind(row: Pick<SmeRow, "status" | "alarm">): RowKind {
  if (row.status === 3 || row.alarm === 1) return "alarm";
  if (row.status === 1 || row.status === 2) return "production";
  return "idle";
}

/** A run: consecutive, touching rows of one asset with the same kind (and product, for production). */
export interface SmeRun {
  asset: number;
  kind: RowKind;
  /** The product of a production run; the first row's product otherwise. */
  product: number;
  /** First row's `ts`, ms. */
  start: number;
  /** Last row's `end`, ms. */
  end: number;
  rows: SmeRow[];
}

/**
 * Parses the SME file into rows per asset, each list sorted by `ts`. When two rows share
 * an asset and `ts`, the later line wins (as the seed does for the signals). Each row's
 * `end` is `min(ts + 5 min, ts of the asset's next row)`: the irregular rows between two
 * 5-minute rows are state changes, and cut the interval of the row before them.
 *
 * @param smeCsv content of company_A_labelled_subset.csv.
 * @returns rows by asset number.
 * @throws Error on a missing column or a malformed field (message names the line).
 */
export function parseSmeRows(smeCsv: string): Map<number, SmeRow[]> {
  const { rows } = parseCsv(smeCsv, [
    "ts",
    "asset",
    "items",
    "power_avg",
    "status",
    "alarm",
    "product",
  ]);
  const byAsset = new Map<number, Map<number, SmeRow>>();
  rows.forEach((row, index) => {
    const where = `SME line ${index + 2}`;
    const ts = Date.parse(toIsoUtc(row.ts ?? ""));
    const asset = toNumber(row.asset ?? "", `${where} asset`);
    const parsed: SmeRow = {
      ts,
      end: ts + SME_ROW_MS,
      asset,
      items: toNumber(row.items ?? "", `${where} items`),
      power: toNumber(row.power_avg ?? "", `${where} power_avg`),
      status: toNumber(row.status ?? "", `${where} status`),
      alarm: toNumber(row.alarm ?? "", `${where} alarm`),
      product: toNumber(row.product ?? "", `${where} product`),
    };
    let byTs = byAsset.get(asset);
    if (!byTs) {
      byTs = new Map();
      byAsset.set(asset, byTs);
    }
    byTs.set(ts, parsed);
  });
  const out = new Map<number, SmeRow[]>();
  for (const [asset, byTs] of [...byAsset].sort(([a], [b]) => a - b)) {
    const list = [...byTs.values()].sort((a, b) => a.ts - b.ts);
    list.forEach((row, i) => {
      const next = list[i + 1];
      if (next) row.end = Math.min(row.end, next.ts);
    });
    out.set(asset, list);
  }
  return out;
}

/**
 * Groups the rows of one asset into runs: a row joins the current run when it has the
 * same kind (and, for production, the same product) and starts where the previous row
 * ends (no gap of missing rows between them). A gap always ends a run.
 *
 * @param rows the asset's rows from {@link parseSmeRows}, sorted by `ts`.
 * @returns the runs in time order.
 */
export function smeRuns(rows: readonly SmeRow[]): SmeRun[] {
  const runs: SmeRun[] = [];
  let current: SmeRun | undefined;
  for (const row of rows) {
    const kind = rowKind(row);
    const joins =
      current !== undefined &&
      current.kind === kind &&
      current.end === row.ts &&
      (kind !== "production" || current.product === row.product);
    if (current && joins) {
      current.rows.push(row);
      current.end = row.end;
    } else {
      current = {
        asset: row.asset,
        kind,
        product: row.product,
        start: row.ts,
        end: row.end,
        rows: [row],
      };
      runs.push(current);
    }
  }
  return runs;
}

/**
 * The instants at which the given local wall-clock times occur in a time zone, strictly
 * inside `(from, to)`, ascending (DST-correct: each is that wall-clock time on its own
 * local date, as `@date-fns/tz` resolves it).
 *
 * @param clocks local times `HH:MM`.
 * @param timezone IANA zone.
 * @param from lower bound, ms (excluded).
 * @param to upper bound, ms (excluded).
 * @returns ms instants.
 */
export function wallClockInstants(
  clocks: readonly string[],
  timezone: string,
  from: number,
  to: number,
): number[] {
  const times = clocks.map((clock) => clock.split(":").map(Number) as [number, number]);
  const out = new Set<number>();
  const first = new TZDate(from - DAY_MS, timezone);
  for (let d = 0; ; d++) {
    const day = new TZDate(first.getFullYear(), first.getMonth(), first.getDate() + d, timezone);
    if (day.getTime() > to + DAY_MS) break;
    for (const [hours, minutes] of times) {
      const instant = new TZDate(
        day.getFullYear(),
        day.getMonth(),
        day.getDate(),
        hours,
        minutes,
        timezone,
      ).getTime();
      if (instant > from && instant < to) out.add(instant);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** A part of a run inside one shift instance. */
export interface RunPiece {
  start: number;
  end: number;
  /** Sum of `items` of the run's rows whose `ts` lies in `[start, end)`. */
  items: number;
}

/**
 * Cuts a run at the given instants. A row whose interval crosses a cut counts its items
 * in the piece that contains its `ts`.
 *
 * @param run the run.
 * @param cuts ascending instants (ms); only those strictly inside the run cut it.
 * @returns the pieces in time order (one when no cut falls inside the run).
 */
export function cutRun(run: SmeRun, cuts: readonly number[]): RunPiece[] {
  const inside = cuts.filter((cut) => cut > run.start && cut < run.end);
  const bounds = [run.start, ...inside, run.end];
  const pieces: RunPiece[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const start = bounds[i] as number;
    const end = bounds[i + 1] as number;
    const items = run.rows
      .filter((row) => row.ts >= start && row.ts < end)
      .reduce((sum, row) => sum + row.items, 0);
    pieces.push({ start, end, items });
  }
  return pieces;
}

/** Nearest-rank percentile (`p` in 0..100) of ascending values; NaN for an empty list. */
export function nearestRankPercentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/**
 * Whether a row measures the automatic production rate: `status` 2, `alarm` 0,
 * `items` > 0, on the 5-minute grid and standing for a whole 5 minutes (no state-change
 * row cuts it), so that `items / 5` is a rate in pieces per minute.
 */
export function isRateRow(row: SmeRow): boolean {
  return (
    row.status === 2 &&
    row.alarm === 0 &&
    row.items > 0 &&
    row.ts % SME_ROW_MS === 0 &&
    row.end - row.ts === SME_ROW_MS
  );
}

/** A production log to create (instants in ms). */
export interface DerivedProductionLog {
  asset: number;
  product: number;
  start: number;
  end: number;
  count: number;
}

/** An unplanned stop of Demo Plant A (instants in ms). */
export interface DerivedAlarmStop {
  asset: number;
  start: number;
  end: number;
  /** Rows of the alarm run. */
  rows: number;
}

/** The SKU code of a product id: `P00` .. `P13`. */
export function skuCode(product: number): string {
  return `P${String(product).padStart(2, "0")}`;
}

/** Everything derived for Demo Plant A. */
export interface PlantAOperations {
  products: number[];
  productionLogs: DerivedProductionLog[];
  stops: DerivedAlarmStop[];
  /** Items of alarm rows, which no production log counts. */
  alarmItems: number;
  /** Weekday shifts an asset did not run (`idleShifts`), closed by the demo's calendar. */
  idleShifts: IdleShift[];
}

/**
 * Derives the production logs, stops and products of Demo Plant A (its nominal speeds:
 * ./demo-nominal-speeds.ts).
 *
 * Production logs: each production run (`status` 1 or 2, one product, no gap) is cut
 * at 06:00, 14:00 and 22:00 Europe/Rome (the shift boundaries), one log per piece:
 * `start`/`end` = the piece, `count` = sum of `items` of its rows. Stops: one per
 * alarm run (`status` 3 or `alarm` 1), from its first row's `ts` to its last row's
 * end, not cut (the report clips stops to each shift). Idle rows make neither.
 *
 * @param smeCsv content of company_A_labelled_subset.csv.
 * @returns the derived records, production logs and stops in (asset, time) order.
 * @throws Error on a malformed file.
 */
export function derivePlantAOperations(smeCsv: string): PlantAOperations {
  const rowsByAsset = parseSmeRows(smeCsv);
  const products = new Set<number>();
  const productionLogs: DerivedProductionLog[] = [];
  const stops: DerivedAlarmStop[] = [];
  let alarmItems = 0;
  for (const [asset, rows] of rowsByAsset) {
    const first = rows[0];
    const last = rows[rows.length - 1];
    if (!first || !last) continue;
    const cuts = wallClockInstants(
      PLANT_A_SHIFTS.map((shift) => shift.startTime),
      PLANT_A_TIMEZONE,
      first.ts,
      last.end,
    );
    for (const run of smeRuns(rows)) {
      if (run.kind === "production") {
        products.add(run.product);
        for (const piece of cutRun(run, cuts)) {
          productionLogs.push({
            asset,
            product: run.product,
            start: piece.start,
            end: piece.end,
            count: piece.items,
          });
        }
      } else if (run.kind === "alarm") {
        alarmItems += run.rows.reduce((sum, row) => sum + row.items, 0);
        stops.push({ asset, start: run.start, end: run.end, rows: run.rows.length });
      }
    }
  }
  return {
    products: [...products].sort((a, b) => a - b),
    productionLogs,
    stops,
    alarmItems,
    idleShifts: idleShifts(rowsByAsset),
  };
}

/** A classified stop of Fleet B (instants in ms). */
export interface DerivedFleetStop {
  /** `machineID` of the Azure files. */
  machine: number;
  start: number;
  end: number;
  isProgrammed: boolean;
  /** The component (`comp1`..`comp4`). */
  component: string;
  generalCause: string;
}

/**
 * Derives the stops of Fleet B.
 *
 * - Each row of PdM_failures.csv: an unplanned stop from `datetime` for
 *   {@link FAILURE_REPAIR_MS}, classified `{component, generalCause: "Component failure"}`.
 * - Each row of PdM_maint.csv with `datetime` inside the telemetry period
 *   `[periodStart, periodEnd]`, except those with the same machine, instant and
 *   component as a failure (that replacement is the failure's repair, already
 *   covered): a programmed stop of {@link MAINTENANCE_MS}, classified
 *   `{component, generalCause: "Scheduled maintenance"}`.
 *
 * @param failuresCsv content of PdM_failures.csv.
 * @param maintCsv content of PdM_maint.csv.
 * @param periodStart first telemetry instant, ms.
 * @param periodEnd last telemetry instant, ms.
 * @returns stops by machine, then start, then component.
 * @throws Error on a malformed file.
 */
export function deriveFleetStops(
  failuresCsv: string,
  maintCsv: string,
  periodStart: number,
  periodEnd: number,
): DerivedFleetStop[] {
  const failures = parseCsv(failuresCsv, ["datetime", "machineID", "failure"]).rows.map(
    (row, i) => ({
      machine: toNumber(row.machineID ?? "", `PdM_failures line ${i + 2} machineID`),
      at: Date.parse(toIsoUtc(row.datetime ?? "")),
      component: row.failure ?? "",
    }),
  );
  const failureKeys = new Set(failures.map((f) => `${f.machine}|${f.at}|${f.component}`));
  const maintenance = parseCsv(maintCsv, ["datetime", "machineID", "comp"]).rows.map((row, i) => ({
    machine: toNumber(row.machineID ?? "", `PdM_maint line ${i + 2} machineID`),
    at: Date.parse(toIsoUtc(row.datetime ?? "")),
    component: row.comp ?? "",
  }));
  const stops: DerivedFleetStop[] = [
    ...failures.map((f) => ({
      machine: f.machine,
      start: f.at,
      end: f.at + FAILURE_REPAIR_MS,
      isProgrammed: false,
      component: f.component,
      generalCause: FAILURE_CAUSE,
    })),
    ...maintenance
      .filter(
        (m) =>
          m.at >= periodStart &&
          m.at <= periodEnd &&
          !failureKeys.has(`${m.machine}|${m.at}|${m.component}`),
      )
      .map((m) => ({
        machine: m.machine,
        start: m.at,
        end: m.at + MAINTENANCE_MS,
        isProgrammed: true,
        component: m.component,
        generalCause: MAINTENANCE_CAUSE,
      })),
  ];
  return stops.sort(
    (a, b) => a.machine - b.machine || a.start - b.start || a.component.localeCompare(b.component),
  );
}
