/**
 * Local calendar days of a company, for the reports that group by day, ISO
 * week or month (docs/metrics.md, "KPIs by any dimension"). A day is the
 * company's local date in its IANA zone, so a DST day lasts 23 or 25 hours.
 * Zone arithmetic is `@date-fns/tz`'s, as for shift instances.
 */
import { TZDate } from "@date-fns/tz";

const DAY_MS = 86_400_000;

/** One local day: its first instant (ms) and its date `YYYY-MM-DD`. */
export interface LocalDay {
  start: number;
  /** First instant of the next local day, ms. */
  end: number;
  date: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * The local days of `timezone`, found on demand: the work grows with the days looked up,
 * not with the span between the first and the last (a report whose records lie decades
 * apart looks up a handful of days). Consecutive lookups (instances or stops in start
 * order) step from one day to the next without a zone lookup of the instant.
 */
export class LocalCalendar {
  private readonly byDate = new Map<string, LocalDay>();
  private last: LocalDay | undefined;

  /** @param timezone IANA zone. */
  constructor(private readonly timezone: string) {}

  /** The local day of a date, and the next day's date; `d` may run past the month's end. */
  private dayAt(y: number, m: number, d: number): LocalDay {
    const start = new TZDate(y, m, d, this.timezone).getTime();
    // The next date from midday: midday steps never skip a date.
    const next = new TZDate(y, m, d + 1, 12, 0, this.timezone);
    const end = new TZDate(
      next.getFullYear(),
      next.getMonth(),
      next.getDate(),
      this.timezone,
    ).getTime();
    // The date itself by calendar arithmetic (no zone involved).
    const date = new Date(Date.UTC(y, m, d));
    return {
      start,
      end,
      date: `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`,
    };
  }

  /** The local day containing `at` (ms). */
  dayOf(at: number): LocalDay {
    const last = this.last;
    if (last && at >= last.start && at < last.end) return last;
    const local = new TZDate(at, this.timezone);
    const key = `${local.getFullYear()}-${local.getMonth()}-${local.getDate()}`;
    let day = this.byDate.get(key);
    if (!day) {
      day = this.dayAt(local.getFullYear(), local.getMonth(), local.getDate());
      this.byDate.set(key, day);
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
