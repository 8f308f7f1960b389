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
import { TZDate } from "@date-fns/tz";

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

const DAY_MS = 86_400_000;

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

/**
 * The instances of a definition whose start lies in `[from, to)`.
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
  const start = parseClock(def.startTime);
  const end = parseClock(def.endTime);
  const crossesMidnight = def.endTime <= def.startTime;
  const weekdays = new Set(def.weekdays);
  const out: InstanceWindow[] = [];
  // Walk local dates from the day before `from` (a shift that started then may be
  // the first) to the day after `to`, one calendar day at a time.
  const first = new TZDate(from - DAY_MS, timezone);
  let y = first.getFullYear();
  let m = first.getMonth();
  let d = first.getDate();
  for (;;) {
    const dayStart = new TZDate(y, m, d, start.hours, start.minutes, timezone);
    const startMs = dayStart.getTime();
    if (startMs >= to) break;
    const isoWeekday = ((dayStart.getDay() + 6) % 7) + 1;
    if (startMs >= from && weekdays.has(isoWeekday)) {
      const endMs = new TZDate(
        y,
        m,
        d + (crossesMidnight ? 1 : 0),
        end.hours,
        end.minutes,
        timezone,
      ).getTime();
      out.push({ start: startMs, end: endMs });
    }
    const next = new TZDate(y, m, d + 1, 12, 0, timezone);
    y = next.getFullYear();
    m = next.getMonth();
    d = next.getDate();
  }
  return out;
}
