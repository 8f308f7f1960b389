/**
 * The shift instances a report covers, counted, paged and listed by calendar arithmetic
 * without storing them. Each (definition, machine) pair is a **series**: its instances are
 * those of the definition's weekdays on a run of local dates `[fromDay, toDay)`, because an
 * instance's start and end grow with its date, so every bound on them (the window, the
 * machine's first activity, `startDate`/`endDate`) is a bound on the date. Counting a series
 * is counting weekdays; the n-th instance of the report (ordered by start, then machine) is
 * found by a binary search on the date over those counts; only the instances of the dates
 * asked for are computed in the zone (`datedInstancesBetween`). A zone that skipped a date
 * (Samoa's 2011-12-30) is handled exactly: the dates around such a jump are listed, not
 * counted. docs/bounded-work.md ("Any range at once").
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../time/units";
import {
  type DatedInstance,
  datedInstancesBetween,
  parseClock,
  type ShiftDefinitionTimes,
} from "./instances";
import { dateJumps, ZoneSamples } from "./zone-offsets";

/** Every local date's instant lies within a day and a bit of its UTC midnight (offsets within ±14 h). */
const DATE_MARGIN_MS = 26 * HOUR_MS;

/** What an instance of a series must satisfy, on its start and end instants (ms). */
export interface SeriesBounds {
  /** start >= startFrom */
  startFrom: number;
  /** start < startTo */
  startTo: number;
  /** end > endAfter, when given */
  endAfter?: number;
  /** end < endBefore, when given */
  endBefore?: number;
}

/** A definition as a series needs it: an id, its local times and weekdays. */
type SeriesDefinition = ShiftDefinitionTimes & { id: number };

/** One (definition, machine) pair of a report and the instances of it that it covers. */
export interface SeriesInput<D extends SeriesDefinition> {
  definition: D;
  machineId: number;
  bounds: SeriesBounds;
}

interface Series<D extends SeriesDefinition> extends SeriesInput<D> {
  /** First local date (day number) whose instance is covered, by its bounds. */
  fromDay: number;
  /** Past the last one. */
  toDay: number;
  weekdays: ReadonlySet<number>;
}

/** One series' instances over a run of dates (`InstanceSeries.runs`). */
interface SeriesRun<D extends SeriesDefinition> {
  machineId: number;
  definition: D;
  bounds: SeriesBounds;
  /** The definition's instances of the run, ascending date (shared by its series). */
  listed: readonly DatedInstance[];
  /** The series' instances are among `listed[from]` to `listed[to - 1]` (see `covers`). */
  from: number;
  to: number;
}

/** A covered instance: its window, local date, machine and definition. */
export interface CoveredInstance<D extends SeriesDefinition> extends DatedInstance {
  machineId: number;
  definition: D;
}

/** ISO weekday (1 = Monday ... 7 = Sunday) of a day number (1970-01-01 was a Thursday). */
function weekdayOfDay(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1;
}

/** How many days of `[fromDay, toDay)` fall on the weekdays: arithmetic. */
function countWeekdays(weekdays: ReadonlySet<number>, fromDay: number, toDay: number) {
  const span = toDay - fromDay;
  if (span <= 0 || weekdays.size === 0) return 0;
  let count = Math.floor(span / 7) * weekdays.size;
  const first = weekdayOfDay(fromDay);
  for (let i = 0; i < span % 7; i++) if (weekdays.has(((first - 1 + i) % 7) + 1)) count++;
  return count;
}

/** The definition with every weekday: it has an instance on every date the zone has. */
const everyDay = (def: ShiftDefinitionTimes): ShiftDefinitionTimes => ({
  startTime: def.startTime,
  endTime: def.endTime,
  weekdays: [1, 2, 3, 4, 5, 6, 7],
});

/**
 * The first local date whose instance starts at or after `t` (whatever its weekday), and the
 * first whose instance ends after `t`: a listing of the two or three instances around `t`.
 */
function dayBounds(def: ShiftDefinitionTimes, timezone: string) {
  const all = everyDay(def);
  return {
    startingFrom(t: number): number {
      const found = datedInstancesBetween(all, timezone, t, t + 3 * DAY_MS)[0];
      return found ? found.day : Math.floor(t / DAY_MS) + 2;
    },
    endingAfter(t: number): number {
      // An instance ending after t starts after t less the longest instance (25 h).
      const near = datedInstancesBetween(all, timezone, t - 26 * HOUR_MS, t + 3 * DAY_MS);
      const found = near.find((i) => i.end > t);
      return found ? found.day : Math.floor(t / DAY_MS) + 2;
    },
  };
}

/** Whether an instance satisfies a series' bounds. */
function within(bounds: SeriesBounds, i: DatedInstance): boolean {
  return (
    i.start >= bounds.startFrom &&
    i.start < bounds.startTo &&
    (bounds.endAfter === undefined || i.end > bounds.endAfter) &&
    (bounds.endBefore === undefined || i.end < bounds.endBefore)
  );
}

/**
 * The instances a report covers over its series (see the module docstring): their number,
 * how many lie before a date, a page of them in report order (start, then machine), and those
 * of a run of dates.
 */
export class InstanceSeries<D extends SeriesDefinition> {
  private readonly series: Series<D>[];
  /** Day numbers around a skipped date: instances there are listed, never counted. */
  private readonly jumpDays = new Set<number>();
  /** Per definition id, its instances on `jumpDays`. */
  private readonly nearJumps = new Map<number, DatedInstance[]>();
  private readonly zone: ZoneSamples;
  /** How many instances the report covers. */
  readonly total: number;
  /** First local date of a covered instance (day number), and past the last one. */
  readonly fromDay: number;
  readonly toDay: number;

  /**
   * @param timezone the company's IANA zone.
   * @param inputs the report's series.
   */
  constructor(
    private readonly timezone: string,
    inputs: readonly SeriesInput<D>[],
  ) {
    this.zone = new ZoneSamples(timezone);
    const boundsOf = new Map<string, ReturnType<typeof dayBounds>>();
    const memo = new Map<string, number>();
    const cached = (key: string, compute: () => number) => {
      let v = memo.get(key);
      if (v === undefined) {
        v = compute();
        memo.set(key, v);
      }
      return v;
    };
    this.series = [];
    for (const input of inputs) {
      const { definition: def, bounds } = input;
      const times = `${def.startTime}|${def.endTime}`;
      let days = boundsOf.get(times);
      if (!days) {
        days = dayBounds(def, timezone);
        boundsOf.set(times, days);
      }
      const d = days;
      const starting = (t: number) => cached(`s|${times}|${t}`, () => d.startingFrom(t));
      const ending = (t: number) => cached(`e|${times}|${t}`, () => d.endingAfter(t));
      let fromDay = starting(bounds.startFrom);
      let toDay = starting(bounds.startTo);
      if (bounds.endAfter !== undefined) fromDay = Math.max(fromDay, ending(bounds.endAfter));
      if (bounds.endBefore !== undefined) toDay = Math.min(toDay, ending(bounds.endBefore - 1));
      if (bounds.startTo > bounds.startFrom) {
        this.series.push({ ...input, fromDay, toDay, weekdays: new Set(def.weekdays) });
      }
    }
    const from = Math.min(...this.series.map((s) => s.bounds.startFrom));
    const to = Math.max(...this.series.map((s) => s.bounds.startTo));
    if (this.series.length > 0) {
      for (const jump of dateJumps(timezone, from - 2 * DAY_MS, to + 2 * DAY_MS)) {
        const day = Math.floor(jump / DAY_MS);
        for (let k = day - 3; k <= day + 3; k++) this.jumpDays.add(k);
      }
    }
    if (this.jumpDays.size > 0) {
      const days = [...this.jumpDays];
      const [lo, hi] = [Math.min(...days), Math.max(...days) + 1];
      for (const s of this.series) {
        if (this.nearJumps.has(s.definition.id)) continue;
        const listed = this.listDays(s.definition, lo, hi).filter((i) => this.jumpDays.has(i.day));
        this.nearJumps.set(s.definition.id, listed);
      }
    }
    this.fromDay = Math.min(...this.series.map((s) => s.fromDay));
    this.toDay = Math.max(...this.series.map((s) => s.toDay));
    this.total = this.series.length === 0 ? 0 : this.countBefore(this.toDay);
  }

  /**
   * The definition's instances whose local date lies in `[fromDay, toDay)`, ascending: the
   * wall-clock times less the zone's offset where the zone does not change near them
   * (`ZoneSamples`), the zone's own computation (`datedInstancesBetween`) for the others.
   */
  private listDays(def: D, fromDay: number, toDay: number): DatedInstance[] {
    const out: DatedInstance[] = [];
    const start = parseClock(def.startTime);
    const end = parseClock(def.endTime);
    const startMs = (start.hours * 60 + start.minutes) * MINUTE_MS;
    const endMs =
      (end.hours * 60 + end.minutes) * MINUTE_MS + (def.endTime <= def.startTime ? DAY_MS : 0);
    const weekdays = new Set(def.weekdays);
    // Dates near a zone change, listed by the zone's own computation a run at a time.
    let exactFrom: number | null = null;
    const listExact = (to: number) => {
      if (exactFrom === null) return;
      const [a, b] = [exactFrom, to];
      const near = datedInstancesBetween(
        def,
        this.timezone,
        a * DAY_MS - DATE_MARGIN_MS,
        b * DAY_MS + DATE_MARGIN_MS,
      );
      for (const i of near) if (i.day >= a && i.day < b) out.push(i);
      exactFrom = null;
    };
    for (let day = fromDay; day < toDay; day++) {
      if (!weekdays.has(weekdayOfDay(day))) continue;
      const wallStart = day * DAY_MS + startMs;
      const wallEnd = day * DAY_MS + endMs;
      const startOffset = this.jumpDays.has(day) ? null : this.zone.plainOffset(wallStart);
      const endOffset = startOffset === null ? null : this.zone.plainOffset(wallEnd);
      if (startOffset === null || endOffset === null) {
        exactFrom ??= day;
        continue;
      }
      listExact(day);
      out.push({ start: wallStart - startOffset, end: wallEnd - endOffset, day });
    }
    listExact(toDay);
    return out;
  }

  /**
   * Whether the zone keeps one offset around the local date `day`: then the date is 24 hours
   * long and is the local date of every instant of `[day, day + 1)` less that offset.
   */
  isPlainDay(day: number): boolean {
    return (
      !this.jumpDays.has(day) &&
      this.zone.plainOffset(day * DAY_MS) !== null &&
      this.zone.plainOffset((day + 1) * DAY_MS) !== null
    );
  }

  /** How many covered instances lie on local dates before `day`. Arithmetic. */
  countBefore(day: number): number {
    let count = 0;
    for (const s of this.series) {
      const to = Math.min(s.toDay, day);
      if (to <= s.fromDay && this.jumpDays.size === 0) continue;
      const { weekdays } = s;
      count += countWeekdays(weekdays, s.fromDay, to);
      if (this.jumpDays.size === 0) continue;
      // Around a skipped date: the listed instances, not the counted weekdays.
      for (const j of this.jumpDays) {
        if (j < day && j >= s.fromDay && j < to && weekdays.has(weekdayOfDay(j))) count--;
      }
      for (const i of this.nearJumps.get(s.definition.id) ?? []) {
        if (i.day < day && within(s.bounds, i)) count++;
      }
    }
    return count;
  }

  /**
   * Each series' instances over the local dates `[fromDay, toDay)`, without an object per
   * instance: the definition's instances of those dates (listed once per definition, shared
   * by its series), and the index range of them that may be the series'; `covers` tells
   * which are. For a walk over many instances (the KPI report); `between` sorts them.
   */
  runs(fromDay: number, toDay: number): SeriesRun<D>[] {
    const out: SeriesRun<D>[] = [];
    const listed = new Map<number, DatedInstance[]>();
    const lowerBound = (list: readonly DatedInstance[], day: number) => {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((list[mid]?.day ?? Number.POSITIVE_INFINITY) < day) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    for (const s of this.series) {
      // Around a skipped date the day bounds may be a date off: the instant bounds decide.
      const a = Math.max(fromDay, s.fromDay - 3);
      const b = Math.min(toDay, s.toDay + 3);
      if (b <= a) continue;
      let list = listed.get(s.definition.id);
      if (!list) {
        list = this.listDays(
          s.definition,
          Math.max(fromDay, this.fromDay - 3),
          Math.min(toDay, this.toDay + 3),
        );
        listed.set(s.definition.id, list);
      }
      const { machineId, definition, bounds } = s;
      out.push({
        machineId,
        definition,
        bounds,
        listed: list,
        from: lowerBound(list, a),
        to: lowerBound(list, b),
      });
    }
    return out;
  }

  /** Whether an instance listed in a run is one of its series' (within its bounds). */
  covers(run: SeriesRun<D>, instance: DatedInstance): boolean {
    return within(run.bounds, instance);
  }

  /**
   * The covered instances whose local date lies in `[fromDay, toDay)`, in report order (start,
   * then machine). Zone work: the instances of those dates, once per definition.
   */
  between(fromDay: number, toDay: number): CoveredInstance<D>[] {
    const out: CoveredInstance<D>[] = [];
    for (const run of this.runs(fromDay, toDay)) {
      for (let k = run.from; k < run.to; k++) {
        const i = run.listed[k] as DatedInstance;
        if (within(run.bounds, i)) {
          out.push({ ...i, machineId: run.machineId, definition: run.definition });
        }
      }
    }
    return out.sort(
      (x, y) => x.start - y.start || x.machineId - y.machineId || x.definition.id - y.definition.id,
    );
  }

  /**
   * The covered instances at positions `[offset, offset + limit)` of the report order: a
   * binary search on the date for the first and the last, then the instances of those dates.
   */
  page(offset: number, limit: number): CoveredInstance<D>[] {
    if (offset >= this.total || limit <= 0) return [];
    const end = Math.min(this.total, offset + limit);
    // The last date with at most `offset` instances before it, the first with `end`.
    let lo = this.fromDay;
    let hi = this.toDay;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (this.countBefore(mid) <= offset) lo = mid;
      else hi = mid - 1;
    }
    const first = lo;
    lo = first;
    hi = this.toDay;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.countBefore(mid) >= end) hi = mid;
      else lo = mid + 1;
    }
    const skip = offset - this.countBefore(first);
    return this.between(first, lo).slice(skip, skip + (end - offset));
  }
}
