/**
 * The plant board's formatting. Every time is written in the company's time zone, whatever
 * the browser's: Intl.DateTimeFormat with `timeZone`. Figures keep their unit on the same
 * line (a no-break space).
 */
import { HOUR_MS } from "../../time/units";

const NBSP = "\u00a0";

/** The zone every time is shown in; set once the company's is known. */
let zone = "UTC";
const formatters = new Map<string, Intl.DateTimeFormat>();

/** An Intl.DateTimeFormat in the company's zone, 24-hour clock, cached by options. */
function formatter(options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${zone}|${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", { timeZone: zone, hourCycle: "h23", ...options });
    formatters.set(key, f);
  }
  return f;
}

/** An instant: ms since the epoch, or an ISO 8601 date-time as the API writes them. */
export type Instant = number | string;

/** An instant's ms since the epoch. */
const instantMs = (t: Instant): number => (typeof t === "number" ? t : Date.parse(t));

/** Sets the zone every later time is written in (an IANA name, or `UTC`). */
export function setZone(name: string): void {
  zone = name;
}

/** The zone times are written in. */
export function zoneName(): string {
  return zone;
}

/** `0.815` -> `81.5 %` (no-break space), `–` when not a number. */
export function percent(x: number | null | undefined): string {
  return typeof x === "number" ? `${(x * 100).toFixed(1)}${NBSP}%` : "–";
}

/**
 * A figure that needs production (effectiveness, quality): its percent, or `no production`
 * when the API gives none (null: nothing ran, nothing was made; not 0 %).
 */
export function perProduction(x: number | null | undefined): string {
  if (typeof x === "number") return percent(x);
  return x === null ? "no production" : "–";
}

/** A number with at most `digits` decimals, grouped; `–` when not a number. */
export function number(x: number | null | undefined, digits = 0): string {
  return typeof x === "number"
    ? x.toLocaleString("en-GB", { maximumFractionDigits: digits, minimumFractionDigits: 0 })
    : "–";
}

/** `14:05` in the company's zone. */
export function clock(t: Instant): string {
  return formatter({ hour: "2-digit", minute: "2-digit" }).format(instantMs(t));
}

/** `14:05:09` in the company's zone. */
export function clockSeconds(t: Instant): string {
  return formatter({ hour: "2-digit", minute: "2-digit", second: "2-digit" }).format(instantMs(t));
}

/** `Thu 14:05` in the company's zone. */
export function dayClock(t: Instant): string {
  return formatter({ weekday: "short", hour: "2-digit", minute: "2-digit" }).format(instantMs(t));
}

/** A duration in minutes as a person reads it: `45 min`, `2 h 05 min`. */
export function duration(minutes: number): string {
  const whole = Math.max(0, Math.round(minutes));
  if (whole < 60) return `${whole}${NBSP}min`;
  const m = whole % 60;
  return `${Math.floor(whole / 60)}${NBSP}h${m ? ` ${String(m).padStart(2, "0")}${NBSP}min` : ""}`;
}

/**
 * A shift instance as a person reads it: `Morning, 06:00–14:00`; a 24-hour shift is
 * `Day, 24 h from Thu 00:00`, not `00:00–00:00`.
 */
export function shiftSpan(shift: { name: string; start: string; end: string }): string {
  const start = Date.parse(shift.start);
  const end = Date.parse(shift.end);
  const hours = Math.round((end - start) / HOUR_MS);
  if (hours >= 24) return `${shift.name}, ${hours}${NBSP}h from ${dayClock(start)}`;
  return `${shift.name}, ${clock(start)}–${clock(end)}`;
}
