/**
 * Shift instances from shift definitions, in the company's time zone.
 *
 * Source: `docs/metrics.md`, "Shifts": a definition has local wall-clock
 * `startTime`/`endTime` (`HH:MM`) in the company's IANA zone; `endTime <=
 * startTime` ends the next day; `weekdays` are ISO weekdays (1 = Monday ... 7 =
 * Sunday) of the instance's start. Instances are DST-correct: each boundary is
 * the instant of that wall-clock time on its own local date, so a shift across
 * a DST change lasts 7 or 9 hours. Zone arithmetic is `@date-fns/tz`'s.
 */
import { TZDate, tzOffset } from "@date-fns/tz";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../time/units";

export interface ShiftDefinitionTimes {
  /** `HH:MM`, local. */
  startTime: string;
  /** `HH:MM`, local; `<= startTime` means the next day. */
  endTime: string;
  /** ISO weekdays of the start, 1 = Monday ... 7 = Sunday. */
  weekdays: readonly number[];
}

export interface InstanceWindow {
  /** ms since the epoch. */
  start: number;
  /** ms since the epoch. */
  end: number;
}

/**
 * Whether the instant `t` (ms) lies in the instance: W = [start, end), its start included,
 * its end not (docs/metrics.md). The one statement of "t is in the shift" for every layer:
 * the shift of a log or a stop, the shift a machine runs now, a realtime write's start.
 */
export function instanceContains(w: InstanceWindow, t: number): boolean {
  return w.start <= t && t < w.end;
}

/**
 * Whether the half-open span `[span.start, span.end)` shares an instant with the instance.
 */
export function overlapsInstance(w: InstanceWindow, span: InstanceWindow): boolean {
  return span.start < w.end && span.end > w.start;
}

/** Parses `HH:MM` (00:00 to 23:59) into hours and minutes; throws on anything else. */
export function parseClock(clock: string): { hours: number; minutes: number } {
  const match = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(clock);
  if (!match) throw new RangeError(`Not a HH:MM time: ${clock}`);
  return { hours: Number(match[1]), minutes: Number(match[2]) };
}

/** A local calendar date (month 0-based, day possibly past the month's end: `Date` normalizes). */
interface LocalDate {
  y: number;
  m: number;
  d: number;
}

/** The local date of an instant in a zone. */
function localDateOf(at: number, timezone: string): LocalDate {
  const local = new TZDate(at, timezone);
  return { y: local.getFullYear(), m: local.getMonth(), d: local.getDate() };
}

/** ISO weekday (1 = Monday ... 7 = Sunday) of a calendar date: calendar arithmetic, no zone. */
function isoWeekday(date: LocalDate): number {
  return ((new Date(Date.UTC(date.y, date.m, date.d)).getUTCDay() + 6) % 7) + 1;
}

/** Around an instant, no zone change within this span means its wall-clock time is plain. */
const PLAIN_SPAN_MS = 25 * HOUR_MS;

/** An offset change this large skipped (or repeated) a whole local date. */
const SKIPPED_DATE_MS = 20 * HOUR_MS;

/** The last UTC offset found per zone, ms: the next instant's first guess. */
const lastOffset = new Map<string, number>();

const offsetAt = (timezone: string, at: number) => tzOffset(timezone, new Date(at)) * MINUTE_MS;

/**
 * The instant of a local wall-clock time in a zone, ms: `TZDate`'s answer, reached with a
 * third of its zone lookups where nothing is special. The wall time less the zone's last
 * offset is the instant when the zone has that offset there and no change within 25 hours
 * on either side (then the wall time exists and is unambiguous: every zone change since 1970
 * is shorter than that); otherwise (a day around a change) `TZDate` decides, as everywhere
 * before. Shift instances of years are computed this way (`instancesBetween`).
 *
 * @returns the instant, and whether it was plain (no zone change near it).
 */
function instantOf(
  date: LocalDate,
  clock: { hours: number; minutes: number },
  timezone: string,
): { at: number; plain: boolean } {
  const wall = Date.UTC(date.y, date.m, date.d, clock.hours, clock.minutes);
  let guess = lastOffset.get(timezone);
  if (guess === undefined) {
    guess = offsetAt(timezone, wall);
    lastOffset.set(timezone, guess);
  }
  const at = wall - guess;
  if (
    offsetAt(timezone, at) === guess &&
    offsetAt(timezone, at - PLAIN_SPAN_MS) === guess &&
    offsetAt(timezone, at + PLAIN_SPAN_MS) === guess
  ) {
    return { at, plain: true };
  }
  const exact = new TZDate(date.y, date.m, date.d, clock.hours, clock.minutes, timezone).getTime();
  lastOffset.set(timezone, offsetAt(timezone, exact));
  return { at: exact, plain: false };
}

/**
 * The instant of a local wall-clock time in a zone, ms (as `new TZDate(y, m, d, hours,
 * minutes, timezone).getTime()`, with fewer zone lookups: see `instantOf`).
 *
 * @param m month, 0-based; `d` may run past the month's end (the next month's days).
 */
export function wallClockInstant(
  y: number,
  m: number,
  d: number,
  hours: number,
  minutes: number,
  timezone: string,
): number {
  return instantOf({ y, m, d }, { hours, minutes }, timezone).at;
}

/** The definition's start on a local date, ms (the zone's instant of that wall-clock time). */
function startOn(date: LocalDate, clock: { hours: number; minutes: number }, timezone: string) {
  return instantOf(date, clock, timezone).at;
}

/** Whether an instant's local date is this date (`d` possibly past the month's end). */
function isOnDate(at: number, date: LocalDate, timezone: string): boolean {
  const local = localDateOf(at, timezone);
  return Date.UTC(local.y, local.m, local.d) === Date.UTC(date.y, date.m, date.d);
}

/**
 * Work done by `instancesBetween` since the isolate started: the local dates it visited (each
 * costs a zone computation). For the tests and benchmarks that bound planning by what it
 * lists (docs/bounded-work.md, "Time arithmetic").
 */
export const instanceWork = { dates: 0 };

/**
 * For each ISO weekday (index 0 = Monday), the days from it to the next date whose weekday
 * is one of `weekdays` (1 to 7; 7 when it is the only one).
 *
 * @returns the seven steps, or null when `weekdays` names no day.
 */
function daysToNextWeekday(weekdays: readonly number[]): number[] | null {
  const days = new Set(weekdays.filter((w) => w >= 1 && w <= 7));
  if (days.size === 0) return null;
  return [1, 2, 3, 4, 5, 6, 7].map((w) => {
    for (let step = 1; ; step++) if (days.has(((w - 1 + step) % 7) + 1)) return step;
  });
}

/** Days from one calendar date to another (negative when before). */
function daysBetween(a: LocalDate, b: LocalDate): number {
  return Math.round((Date.UTC(b.y, b.m, b.d) - Date.UTC(a.y, a.m, a.d)) / DAY_MS);
}

/** An instance with the local date it starts on, as a day number (days since 1970-01-01). */
export interface DatedInstance extends InstanceWindow {
  /** The local date of its start: `Date.UTC(y, m, d) / 86,400,000`. */
  day: number;
}

/**
 * The instances of a definition whose start lies in `[from, to)`.
 *
 * Work: the zone's instants (the costly part, `@date-fns/tz`) are computed for the
 * instances only (and a date or two at each end); the dates in between are skipped by
 * calendar arithmetic, from one of the definition's weekdays to the next. The list itself
 * grows with the window: callers bound the window by what exists (docs/bounded-work.md,
 * "Time arithmetic").
 *
 * @param def the definition's local times and weekdays.
 * @param timezone IANA zone of the company.
 * @param from window start, ms.
 * @param to window end, ms.
 * @returns instances in ascending start order.
 */
export function instancesBetween(
  def: ShiftDefinitionTimes,
  timezone: string,
  from: number,
  to: number,
): InstanceWindow[] {
  return datedInstancesBetween(def, timezone, from, to).map(({ start, end }) => ({ start, end }));
}

/**
 * `instancesBetween` with the local date of each instance's start (its `day`), which a
 * report groups by and counts with (`./instance-series.ts`).
 *
 * @returns instances in ascending start order (and so of ascending day).
 */
export function datedInstancesBetween(
  def: ShiftDefinitionTimes,
  timezone: string,
  from: number,
  to: number,
): DatedInstance[] {
  const out: DatedInstance[] = [];
  if (to <= from) return out;
  const start = parseClock(def.startTime);
  const end = parseClock(def.endTime);
  const crossesMidnight = def.endTime <= def.startTime;
  const ahead = daysToNextWeekday(def.weekdays);
  if (ahead === null) return out;
  // A start on local date D lies in [midnight of D, midnight of D + 1), so the dates that can
  // hold a start in [from, to) run from the one before `from`'s to the one after `to`'s.
  const first = localDateOf(from, timezone);
  const last = localDateOf(to, timezone);
  const days = daysBetween(first, last);
  const firstDay = Date.UTC(first.y, first.m, first.d) / DAY_MS;
  // Only the dates of the definition's weekdays are visited: from one to the next by
  // calendar arithmetic, so the work is the instances listed plus a few at the two ends.
  let weekday = isoWeekday({ y: first.y, m: first.m, d: first.d - 1 });
  let k = -1;
  if (!def.weekdays.includes(weekday)) {
    const step = ahead[weekday - 1] as number;
    k += step;
    weekday = ((weekday - 1 + step) % 7) + 1;
  }
  while (k <= days + 1) {
    instanceWork.dates += 1;
    const day = firstDay + k;
    const date = { y: first.y, m: first.m, d: first.d + k };
    const step = ahead[weekday - 1] as number;
    k += step;
    weekday = ((weekday - 1 + step) % 7) + 1;
    const { at: startMs, plain } = instantOf(date, start, timezone);
    if (startMs < from) continue;
    if (startMs >= to) break;
    // Near a zone change, a date the zone skipped (Samoa's 2011-12-30) gives another date's
    // instant: no instance that day.
    if (!plain && !isOnDate(startMs, date, timezone)) continue;
    const endMs = startOn({ ...date, d: date.d + (crossesMidnight ? 1 : 0) }, end, timezone);
    out.push({ start: startMs, end: endMs, day });
  }
  return out;
}

/**
 * How many instances `instancesBetween` lists for the same arguments, without listing them:
 * the first and last local dates whose start lies in `[from, to)` (a few zone computations
 * at the two ends: starts grow with the date), then the matching weekdays between them by
 * calendar arithmetic. A report plans decades this way at the cost of a day.
 *
 * @param def the definition's local times and weekdays.
 * @param timezone IANA zone of the company.
 * @param from window start, ms.
 * @param to window end, ms.
 */
export function countInstancesBetween(
  def: ShiftDefinitionTimes,
  timezone: string,
  from: number,
  to: number,
): number {
  if (to <= from || def.weekdays.length === 0) return 0;
  // A zone that skipped a whole date in or next to the window (its offset moved by a day):
  // calendar arithmetic would count the date that never was. The window is halved until the
  // skip lies in a week, which is listed; the other halves are counted (a few dozen zone
  // computations for any window, never a listing of its years).
  if (
    Math.abs(offsetAt(timezone, to + 2 * DAY_MS) - offsetAt(timezone, from - 2 * DAY_MS)) >=
    SKIPPED_DATE_MS
  ) {
    if (to - from <= 7 * DAY_MS) return instancesBetween(def, timezone, from, to).length;
    const mid = from + Math.floor((to - from) / 2);
    return (
      countInstancesBetween(def, timezone, from, mid) +
      countInstancesBetween(def, timezone, mid, to)
    );
  }
  const start = parseClock(def.startTime);
  const startAt = (date: LocalDate, k: number) =>
    startOn({ ...date, d: date.d + k }, start, timezone);
  // The first date (as an offset from `from`'s local date) whose start is >= from, the last
  // (from `to`'s) whose start is < to.
  const a = localDateOf(from, timezone);
  const b = localDateOf(to, timezone);
  let firstK = -1;
  while (startAt(a, firstK) < from) firstK++;
  let lastK = 1;
  while (startAt(b, lastK) >= to) lastK--;
  const span = daysBetween(a, b) + lastK - firstK + 1;
  if (span <= 0) return 0;
  const weekdays = new Set(def.weekdays);
  const firstDate = { y: a.y, m: a.m, d: a.d + firstK };
  let count = Math.floor(span / 7) * weekdays.size;
  const firstWeekday = isoWeekday(firstDate);
  for (let i = 0; i < span % 7; i++) {
    if (weekdays.has(((firstWeekday - 1 + i) % 7) + 1)) count++;
  }
  return count;
}
