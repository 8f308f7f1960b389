/**
 * The window rules of a signal-data query, shared by the public route
 * (`GET /v1/machines/{machine_uuid}/signals/{public_id}`) and the operator diagnostics
 * (`GET /operator/v1/signals/{public_id}/aggregate`), so that both take the same query
 * parameters, apply the same limits and refuse with the same messages.
 */
import { z } from "@hono/zod-openapi";
import { unprocessable } from "../../http/errors";
import { EXAMPLE_WINDOW } from "../../http/examples";
import { epochMsOf, INSTANT_PATTERN } from "../../http/instants";
import { textInteger } from "../../http/schemas";
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS } from "../../time/units";
import { AGG_FUNCTIONS, type AggFunction } from "./aggregate";

/** Longest window of one signal-data query. */
export const MAX_WINDOW_MS = 14 * DAY_MS;
/** Most points one signal-data query may produce. */
export const MAX_POINTS = 10_000;

/** A bucket unit's width, ms (a `d` bucket is a UTC day). */
export const AGG_UNIT_MS = { s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS } as const;
const AGG_UNITS = ["s", "m", "h", "d"] as const;

const isoDateTime = z.iso
  .datetime({ offset: true, local: true })
  .openapi({ format: "date-time", pattern: INSTANT_PATTERN, example: "2022-09-05T00:00:00Z" })
  // A date-time without an offset is read as UTC.
  .transform(epochMsOf);

/** The query parameters of a signal-data window: `start_time`, `end_time` (ms once parsed) and the bucket. */
export const signalWindowQueryShape = {
  start_time: isoDateTime.openapi({
    description: "Window start (inclusive), ISO 8601; no offset = UTC.",
    example: EXAMPLE_WINDOW.start,
  }),
  end_time: isoDateTime.openapi({
    description: "Window end (exclusive); at most 14 days after `start_time`.",
    example: EXAMPLE_WINDOW.end,
  }),
  agg_unit: z.enum(AGG_UNITS).default("s").openapi({
    description: "Bucket unit; a `d` bucket is a UTC day.",
    example: EXAMPLE_WINDOW.aggUnit,
  }),
  agg_period: textInteger(1, 1_000_000)
    .default(1)
    .openapi({ default: 1, description: "Bucket width = agg_period x agg_unit." }),
  agg_function: z.enum(AGG_FUNCTIONS).default("avg"),
};

/**
 * How many buckets a window touches: buckets are aligned to multiples of their width since
 * the epoch, so a window that does not start on a bucket boundary can touch one bucket
 * more than `ceil(window / width)` (10,000.0 s from 00:00:00.5 touches 10,001 one-second
 * buckets). That is the most points the answer can hold.
 *
 * @param from window start, ms (inclusive); `to` its end, ms (exclusive, > from).
 * @param width the bucket width, ms.
 */
export function bucketsTouched(from: number, to: number, width: number): number {
  return Math.floor((to - 1) / width) - Math.floor(from / width) + 1;
}

/** A parsed window query. */
export interface SignalWindowQuery {
  start_time: number;
  end_time: number;
  agg_unit: (typeof AGG_UNITS)[number];
  agg_period: number;
  agg_function: AggFunction;
}

/**
 * Checks a parsed window against the limits and gives the query the store runs.
 *
 * @param q the parsed query parameters (instants in ms).
 * @returns the window `[from, to)` in ms and the bucket width in ms.
 * @throws ApiError 422 at `["query", "end_time"]` when `end_time <= start_time` or the
 *   window exceeds 14 days, at `["query", "agg_period"]` when the window touches more than
 *   `MAX_POINTS` buckets (`bucketsTouched`).
 */
export function checkWindow(q: SignalWindowQuery): {
  from: number;
  to: number;
  bucketWidthMs: number;
} {
  const width = q.agg_period * AGG_UNIT_MS[q.agg_unit];
  if (q.end_time <= q.start_time) {
    throw unprocessable(["query", "end_time"], "end_time must be later than start_time");
  }
  if (q.end_time - q.start_time > MAX_WINDOW_MS) {
    throw unprocessable(
      ["query", "end_time"],
      "The window between start_time and end_time exceeds 14 days",
    );
  }
  const pointCount = bucketsTouched(q.start_time, q.end_time, width);
  if (pointCount > MAX_POINTS) {
    throw unprocessable(
      ["query", "agg_period"],
      `The query would produce ${pointCount} points; at most ${MAX_POINTS} are allowed: widen the bucket (agg_unit, agg_period) or shorten the window`,
    );
  }
  return { from: q.start_time, to: q.end_time, bucketWidthMs: width };
}
