/**
 * Instants (integer ms since the Unix epoch) as the API writes them: ISO 8601
 * in UTC with milliseconds, exactly as `Date.prototype.toISOString` does
 * (`2022-09-05T13:04:05.000Z`); and as it reads them, with one rule for
 * instants before 1970.
 */
import { z } from "@hono/zod-openapi";

/**
 * The rule for a date-time without an offset, as the OpenAPI descriptions state it: the
 * same in a path, a query and a body.
 */
export const NO_OFFSET_IS_UTC =
  "A date-time without an offset (`2022-09-05T06:00:00`) is read as UTC.";

/** The refusal of an instant before 1970 (every stored instant is after it). */
export const BEFORE_EPOCH = "Must be a date-time on or after 1970-01-01T00:00:00Z";

/**
 * Reads a date-time that zod has already checked (ISO 8601) as ms since the epoch,
 * for a zod `.transform`: one without an offset is read as UTC, and one before 1970
 * adds the {@link BEFORE_EPOCH} issue.
 *
 * @param s the date-time text.
 * @param ctx the transform's context, which receives the issue.
 * @returns integer ms since the epoch, or `z.NEVER` after an issue.
 */
export function epochMsOf(s: string, ctx: z.RefinementCtx): number {
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: "custom", message: BEFORE_EPOCH });
    return z.NEVER;
  }
  return ms;
}

const DAY_MS = 86_400_000;

/** The last day formatted: answers hold runs of instants of the same few days. */
let cachedDay = Number.NaN;
let cachedPrefix = "";

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * Formats an instant as `toISOString` does.
 *
 * Why not `new Date(ms).toISOString()` alone: in workerd each call costs several
 * microseconds, which for a 7,000-point signal answer was most of the request's CPU
 * (measured with the DevTools profiler). Here the date part comes from
 * `toISOString` once per day and the time of day is plain arithmetic.
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
  const hours = Math.floor(rest / 3_600_000);
  const minutes = Math.floor(rest / 60_000) % 60;
  const seconds = Math.floor(rest / 1000) % 60;
  return `${cachedPrefix}${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(rest % 1000)}Z`;
}
