/**
 * Local calendar days of a company, for the reports that group by day, ISO
 * week or month (docs/metrics.md, "KPIs by any dimension"). A day is the
 * company's local date in its IANA zone, so a DST day lasts 23 or 25 hours.
 * Zone arithmetic is `@date-fns/tz`'s, as for shift instances.
 */
import { TZDate } from "@date-fns/tz";
import { wallClockInstant } from "../shifts/instances";
import { DAY_MS } from "../time/units";

/** One local day: its first instant (ms) and its date `YYYY-MM-DD`. */
interface LocalDay {
  start: number;
  /** First instant of the next local day, ms. */
  end: number;
  date: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** A date `YYYY-MM-DD` from its day number (days since 1970-01-01): calendar arithmetic. */
export function dateOfDay(day: number): string {
  const date = new Date(day * DAY_MS);
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}

/** The local day after or before one, walked to instead of looked up (ms of span). */
const WALK_MS = 3 * DAY_MS;

/**
 * The local days of `timezone`, found on demand: the work grows with the days looked up,
 * not with the span between the first and the last (a report whose records lie decades
 * apart looks up a handful of days). A lookup near the last day found (instances or stops
 * in start order) walks to it a day at a time, two wall-clock instants per day; a lookup
 * far from it finds the instant's local date first.
 */
export class LocalCalendar {
  private last: LocalDay | undefined;

  /** @param timezone IANA zone. */
  constructor(private readonly timezone: string) {}

  /** The local day of a date; `d` may run past the month's end. */
  private dayAt(y: number, m: number, d: number): LocalDay {
    // The date itself by calendar arithmetic (no zone involved).
    const date = new Date(Date.UTC(y, m, d));
    const [yy, mm, dd] = [date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()];
    return {
      start: wallClockInstant(yy, mm, dd, 0, 0, this.timezone),
      end: wallClockInstant(yy, mm, dd + 1, 0, 0, this.timezone),
      date: `${pad(yy, 4)}-${pad(mm + 1)}-${pad(dd)}`,
    };
  }

  /** The day `k` days from a day (by its date). */
  private dayFrom(day: LocalDay, k: number): LocalDay {
    const [y, m, d] = day.date.split("-").map(Number) as [number, number, number];
    return this.dayAt(y, m - 1, d + k);
  }

  /** The local day containing `at` (ms). */
  dayOf(at: number): LocalDay {
    let day = this.last;
    if (day && at >= day.start && at < day.end) return day;
    if (day && at >= day.end && at < day.end + WALK_MS) {
      while (at >= day.end) day = this.dayFrom(day, 1);
    } else if (day && at < day.start && at >= day.start - WALK_MS) {
      while (at < day.start) day = this.dayFrom(day, -1);
    } else {
      const local = new TZDate(at, this.timezone);
      day = this.dayAt(local.getFullYear(), local.getMonth(), local.getDate());
      // A wall-clock midnight the zone skipped: the instant's date starts later than it.
      while (at < day.start) day = this.dayFrom(day, -1);
      while (at >= day.end) day = this.dayFrom(day, 1);
    }
    this.last = day;
    return day;
  }
}

/**
 * The ISO 8601 week of a date `YYYY-MM-DD`, as `YYYY-Www` (weeks start on
 * Monday; week 1 holds the year's first Thursday, so 2026-12-31 is `2026-W53`
 * and 2027-01-01 is `2026-W53` too).
 */
export function isoWeekOf(date: string): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const t = Date.UTC(y, m - 1, d);
  const weekday = (new Date(t).getUTCDay() + 6) % 7; // Monday = 0
  const thursday = t + (3 - weekday) * DAY_MS;
  const weekYear = new Date(thursday).getUTCFullYear();
  const week = Math.floor((thursday - Date.UTC(weekYear, 0, 1)) / (7 * DAY_MS)) + 1;
  return `${pad(weekYear, 4)}-W${pad(week)}`;
}

/** The month `YYYY-MM` of a date `YYYY-MM-DD`. */
export function monthOf(date: string): string {
  return date.slice(0, 7);
}
