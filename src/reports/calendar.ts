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
 * The local days of `timezone` from the one containing `from` to the one
 * containing `to`, ascending, with a lookup by instant.
 */
export class LocalCalendar {
  readonly days: LocalDay[] = [];

  /**
   * @param timezone IANA zone.
   * @param from first instant to cover, ms.
   * @param to last instant to cover, ms (inclusive).
   */
  constructor(timezone: string, from: number, to: number) {
    const first = new TZDate(from, timezone);
    let y = first.getFullYear();
    let m = first.getMonth();
    let d = first.getDate();
    let start = new TZDate(y, m, d, timezone).getTime();
    // One day at a time until the day containing `to`; midday steps never skip a date.
    while (start <= to) {
      const next = new TZDate(y, m, d + 1, 12, 0, timezone);
      const ny = next.getFullYear();
      const nm = next.getMonth();
      const nd = next.getDate();
      const end = new TZDate(ny, nm, nd, timezone).getTime();
      this.days.push({ start, end, date: `${pad(y, 4)}-${pad(m + 1)}-${pad(d)}` });
      y = ny;
      m = nm;
      d = nd;
      start = end;
    }
  }

  /** The local day containing `at` (ms); throws when outside the calendar's range. */
  dayOf(at: number): LocalDay {
    let lo = 0;
    let hi = this.days.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.days[mid]?.start ?? Number.POSITIVE_INFINITY) <= at) lo = mid;
      else hi = mid - 1;
    }
    const day = this.days[lo];
    if (!day || at < day.start || at >= day.end) {
      throw new RangeError(`Instant ${at} is outside the calendar`);
    }
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
