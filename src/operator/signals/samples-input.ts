/**
 * The body of `POST /operator/v1/signals/{public_id}/samples`: at most `MAX_SAMPLES_PER_CALL`
 * samples, as `samples` (`[{timestamp, value}]`) or as parallel `timestamps` and `values`.
 * Checked in two steps so that a full call stays cheap: zod checks the shape, then one pass
 * checks each instant with zod's own ISO 8601 regex (no offset = UTC), converts it to ms and
 * holds it to the bounds (1970, and `MAX_SAMPLE_AHEAD_MS` after the server's clock), with the
 * messages and paths a per-element schema gives (docs/signal-storage.md, "Writes" under "Format").
 */
import { z } from "@hono/zod-openapi";
import { BEFORE_EPOCH, INSTANT, INSTANT_PATTERN, NO_OFFSET_IS_UTC } from "../../http/instants";
import { MAX_ABS_SAMPLE_VALUE, MAX_SAMPLES_PER_CALL } from "../../resources/signals/ingest";
import { latestSampleAt, MAX_SAMPLE_AHEAD_MS } from "../../resources/signals/sample-bounds";
import { MINUTE_MS } from "../../time/units";

/** A sample value: finite, within the bound that keeps every bucket's sum finite. */
const sampleValue = z
  .number()
  .min(-MAX_ABS_SAMPLE_VALUE, "A sample value must lie between -1e300 and 1e300")
  .max(MAX_ABS_SAMPLE_VALUE, "A sample value must lie between -1e300 and 1e300");

/**
 * zod's regex of `z.iso.datetime({ offset: true, local: true })`, as `DateTimeMs` of the
 * other bodies: `Z`, `±HH:MM`, or no offset (read as UTC).
 */
const DATE_TIME = z.regexes.datetime({ offset: true, local: true });
/** A date-time that ends with its offset (or `Z`); the others are read as UTC. */
const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;
const INVALID_DATE_TIME = "Invalid ISO datetime";

const digit = (s: string, i: number) => s.charCodeAt(i) - 48;
const two = (s: string, i: number) => digit(s, i) * 10 + digit(s, i + 1);

/**
 * Ms since the epoch of an ISO 8601 date-time that `DATE_TIME` accepts.
 *
 * The two forms `toISOString` writes (`YYYY-MM-DDTHH:MM:SSZ` and `...SS.sssZ`) are read
 * digit by digit, faster than `Date.parse` (docs/signal-storage.md, "Writes" under "Format");
 * every other accepted form (offsets, other fraction lengths) goes to `Date.parse`. The
 * regex has already checked the calendar (month lengths, leap days), so `Date.UTC`
 * never rolls a day over.
 *
 * @param s a string matching `DATE_TIME`.
 * @returns integer ms since the epoch, equal to `Date.parse(s)`.
 */
export function parseDateTime(s: string): number {
  const n = s.length;
  const year = two(s, 0) * 100 + two(s, 2);
  // Date.UTC reads years 0-99 as 1900-1999: those (all before the epoch) go to Date.parse.
  if (
    year >= 100 &&
    (n === 20 || (n === 24 && s.charCodeAt(19) === 46)) &&
    s.charCodeAt(n - 1) === 90
  ) {
    return Date.UTC(
      year,
      two(s, 5) - 1,
      two(s, 8),
      two(s, 11),
      two(s, 14),
      two(s, 17),
      n === 24 ? digit(s, 20) * 100 + two(s, 21) : 0,
    );
  }
  // Date.parse reads a date-time without an offset in the process's zone: UTC is the rule.
  return Date.parse(HAS_OFFSET.test(s) ? s : `${s}Z`);
}

/** Minutes a sample may lie after the server's clock, in words. */
const AHEAD_MINUTES = MAX_SAMPLE_AHEAD_MS / MINUTE_MS;

/**
 * The refusal of a sample after `latest` (the server's clock plus `MAX_SAMPLE_AHEAD_MS`).
 *
 * @param latest the latest instant accepted, ms.
 */
function afterClockMessage(latest: number): string {
  return (
    `Must be at most ${AHEAD_MINUTES} minutes after the server's clock (at most ` +
    `${new Date(latest).toISOString()} for this request): a sample cannot be from the future`
  );
}

/** The bounds of a sample's instant, as the OpenAPI document states them. */
export const SAMPLE_INSTANT_BOUNDS =
  `On or after 1970-01-01T00:00:00Z (the \`pattern\`) and at most ${AHEAD_MINUTES} minutes ` +
  "after the server's clock when the request arrives (a gateway's clock may run a little " +
  "ahead; a sample from the future is refused with a 422 at its index).";

const dateTimeString = z.string().openapi({
  format: "date-time",
  pattern: INSTANT_PATTERN,
  example: "2024-01-01T00:00:00Z",
  description: `${SAMPLE_INSTANT_BOUNDS} ${NO_OFFSET_IS_UTC}`,
});

/** Validated samples in the store's form: `values[i]` at `ts[i]` (ms), in the body's order. */
interface ParsedSamples {
  ts: number[];
  values: number[];
}

/**
 * The samples body. One object with both forms optional (not a union), so that a 422 names
 * the real problem (for example `["body", "timestamps"]` too long) instead of "Invalid input".
 * Parses to `ParsedSamples`.
 */
export const SamplesBody = z
  .object({
    samples: z
      .array(z.object({ timestamp: dateTimeString, value: sampleValue }).strict())
      .max(MAX_SAMPLES_PER_CALL)
      .optional(),
    timestamps: z.array(dateTimeString).max(MAX_SAMPLES_PER_CALL).optional(),
    values: z.array(sampleValue).max(MAX_SAMPLES_PER_CALL).optional(),
  })
  .strict()
  // The one-form rule as JSON Schema: `samples` alone, or `timestamps` and `values` together
  // (`not: {}` matches nothing: that property is absent).
  .openapi({
    anyOf: [
      { required: ["samples"], properties: { timestamps: { not: {} }, values: { not: {} } } },
      { required: ["timestamps", "values"], properties: { samples: { not: {} } } },
    ],
  })
  .transform((b, ctx): ParsedSamples => {
    const parallel = b.timestamps !== undefined || b.values !== undefined;
    const fail = (path: (string | number)[], message: string) =>
      ctx.addIssue({ code: "custom", path, message });
    if (b.samples !== undefined && parallel) {
      fail(["samples"], "Send either samples or timestamps/values, not both");
      return z.NEVER;
    }
    if (b.samples === undefined && !parallel) {
      // At the body: the document's anyOf (one form or the other) is what it breaks.
      fail([], "Field required: samples, or timestamps and values");
      return z.NEVER;
    }
    if (parallel && (b.timestamps?.length ?? -1) !== (b.values?.length ?? -1)) {
      fail(["values"], "timestamps and values must have the same length");
      return z.NEVER;
    }
    const samples = b.samples;
    const strings = samples ? samples.map((s) => s.timestamp) : (b.timestamps ?? []);
    const values = samples ? samples.map((s) => s.value) : (b.values ?? []);
    const ts: number[] = new Array(strings.length);
    const latest = latestSampleAt(Date.now());
    let valid = true;
    for (let i = 0; i < strings.length; i++) {
      const s = strings[i] ?? "";
      // One regex for a valid instant; the second only tells a refused one's reason.
      const ms = INSTANT.test(s) ? parseDateTime(s) : DATE_TIME.test(s) ? -1 : Number.NaN;
      if (ms >= 0 && ms <= latest) {
        ts[i] = ms;
        continue;
      }
      valid = false;
      const path = samples ? ["samples", i, "timestamp"] : ["timestamps", i];
      if (ms > latest) fail(path, afterClockMessage(latest));
      else if (Number.isNaN(ms)) {
        ctx.addIssue({
          code: "invalid_format",
          format: "datetime",
          path,
          message: INVALID_DATE_TIME,
        });
      } else fail(path, BEFORE_EPOCH);
    }
    return valid ? { ts, values } : z.NEVER;
  });
