/**
 * Instants (integer ms since the Unix epoch) as the API writes them: ISO 8601
 * in UTC with milliseconds, exactly as `Date.prototype.toISOString` does
 * (`2022-09-05T13:04:05.000Z`); and as it reads them, with one rule for
 * instants before 1970.
 */
import { z } from "@hono/zod-openapi";
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from "../time/units";

/**
 * The rule for a date-time without an offset, as the OpenAPI descriptions state it: the
 * same in a path, a query and a body.
 */
export const NO_OFFSET_IS_UTC =
  "A date-time without an offset (`2022-09-05T06:00:00`) is read as UTC.";

/** The refusal of an instant before 1970 (every stored instant is after it). */
export const BEFORE_EPOCH =
  "Must be a date-time on or after 1970-01-01T00:00:00Z (on 1970-01-01 itself: `Z`, no " +
  "offset, or an offset of zero or less)";

// zod's ISO 8601 date-time (`z.iso.datetime({ offset: true, local: true })`: month lengths and
// leap days checked, seconds required with an offset, a fraction of any length), with the
// years from 1970 only.
const HHMM = "(?:[01]\\d|2[0-3]):[0-5]\\d";
const FRACTION = "(?:\\.\\d+)?";
const MONTH_DAY =
  "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))";
const LEAP_YEAR_1970 =
  "(?:19(?:[79][26]|8[048])|[2-9]\\d(?:[2468][048]|[13579][26]|0[48])|[2468][048]00|[3579][26]00)";
const YEAR_1971 = "(?:197[1-9]|19[89]\\d|[2-9]\\d{3})";
/** 1970 but its first day (on which an offset can put an instant before the epoch). */
const IN_1970 =
  "1970-(?:01-(?:0[2-9]|[12]\\d|3[01])|(?:0[3578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|02-(?:0[1-9]|1\\d|2[0-8]))";
const DATE_1970 = `(?:${LEAP_YEAR_1970}-02-29|${YEAR_1971}-${MONTH_DAY}|${IN_1970})`;
const TIME_WITH_OFFSET = `${HHMM}:[0-5]\\d${FRACTION}(?:Z|[+-]${HHMM})`;
const TIME_WITHOUT_OFFSET = `${HHMM}(?::[0-5]\\d${FRACTION})?`;
/** 1970-01-01 itself: a positive offset would put the instant before the epoch. */
const FIRST_DAY_TIME = `${HHMM}:[0-5]\\d${FRACTION}(?:Z|-${HHMM}|\\+00:00)|${TIME_WITHOUT_OFFSET}`;

/**
 * The date-times a request may carry, as a regular expression (ECMA-262, no lookaround, so
 * that generators read it): ISO 8601 as zod reads it (`2022-09-05T06:00:00Z`, an offset
 * `+02:00`, or none, which is UTC; a fraction of a second of any length), on or after
 * 1970-01-01T00:00:00Z, years to 9999. The OpenAPI document states it as the `pattern` of
 * every request date-time, and {@link epochMsOf} refuses what it does not match.
 */
export const INSTANT_PATTERN =
  `^(?:${DATE_1970}T(?:${TIME_WITH_OFFSET}|${TIME_WITHOUT_OFFSET})` +
  `|1970-01-01T(?:${FIRST_DAY_TIME}))$`;

/** {@link INSTANT_PATTERN}, compiled. */
export const INSTANT = new RegExp(INSTANT_PATTERN);

/**
 * Reads a date-time that zod has already checked (ISO 8601) as ms since the epoch,
 * for a zod `.transform`: one without an offset is read as UTC, and one that
 * {@link INSTANT_PATTERN} refuses (before 1970) adds the {@link BEFORE_EPOCH} issue.
 *
 * @param s the date-time text.
 * @param ctx the transform's context, which receives the issue.
 * @returns integer ms since the epoch, or `z.NEVER` after an issue.
 */
export function epochMsOf(s: string, ctx: z.RefinementCtx): number {
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
  if (!Number.isFinite(ms) || !INSTANT.test(s)) {
    ctx.addIssue({ code: "custom", message: BEFORE_EPOCH });
    return z.NEVER;
  }
  return ms;
}

/**
 * An instant of a response body in the OpenAPI document: a string of `format: date-time`
 * (written by {@link isoInstant}), with its description when given. The one schema of an
 * answered instant; an instant a client sends is parsed by `DateTimeMs` (http/filters.ts).
 *
 * @param description what the instant is, for the document.
 */
export const dateTime = (description?: string) =>
  z
    .string()
    .openapi(
      description === undefined ? { format: "date-time" } : { format: "date-time", description },
    );

/** The last day formatted: answers hold runs of instants of the same few days. */
let cachedDay = Number.NaN;
let cachedPrefix = "";

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Formats an instant as `toISOString` does.
 *
 * The date part comes from `toISOString` once per day and the time of day is plain
 * arithmetic: `toISOString` per instant is costly in workerd (docs/benchmarks.md, "Costs
 * behind choices in the code").
 *
 * @param ms instant, integer ms since the epoch (any instant `Date` accepts).
 * @returns the ISO 8601 string, identical to `new Date(ms).toISOString()`.
 * @throws RangeError for an instant `Date` cannot represent (as `toISOString` does).
 */
export function isoInstant(ms: number): string {
  // Outside Date's range (or NaN): toISOString throws the RangeError.
  if (!(Math.abs(ms) <= 8.64e15)) return new Date(ms).toISOString();
  const day = Math.floor(ms / DAY_MS);
  if (day !== cachedDay) {
    cachedPrefix = new Date(day * DAY_MS).toISOString().slice(0, -13); // "YYYY-MM-DDT"
    cachedDay = day;
  }
  const rest = ms - day * DAY_MS;
  if (!Number.isInteger(rest)) return new Date(ms).toISOString(); // fractional ms: truncated there
  const hours = Math.floor(rest / HOUR_MS);
  const minutes = Math.floor(rest / MINUTE_MS) % 60;
  const seconds = Math.floor(rest / SECOND_MS) % 60;
  return `${cachedPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest % SECOND_MS)}Z`;
}
