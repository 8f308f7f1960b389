/**
 * The JSON text of a signal-data answer, written in one pass from the store's series rather
 * than through an object per point (docs/signal-storage.md, "The read route"). The text is
 * byte for byte what `JSON.stringify` writes for the object form: a finite number as
 * `String(v)` (shortest round-trip digits, so values come back bit for bit), others `null`.
 */
import type { Context, TypedResponse } from "hono";
import { isoInstant } from "../../http/instants";
import type { Series } from "./aggregate";

/** A number as `JSON.stringify` writes it. */
const num = (v: number): string => (Number.isFinite(v) ? String(v) : "null");

/**
 * Serializes an answer: `head`'s fields, then the points.
 *
 * @param head the answer's scalar fields (serialized with `JSON.stringify`, in their order).
 * @param series bucket starts (ms) and values, parallel.
 * @param transpose false: `data: [{timestamp, value}]`; true: `timestamps` and `values`.
 * @returns the JSON text, equal to `JSON.stringify({...head, data})` (or the transposed
 *   form) with timestamps as `isoInstant` writes them.
 */
export function seriesJson(head: object, series: Series, transpose: boolean): string {
  const open = JSON.stringify(head);
  let out = open.length > 2 ? `${open.slice(0, -1)},` : "{";
  const { buckets, values } = series;
  const n = buckets.length;
  if (transpose) {
    out += '"timestamps":[';
    for (let i = 0; i < n; i++) out += `${i ? "," : ""}"${isoInstant(buckets[i] ?? 0)}"`;
    out += '],"values":[';
    for (let i = 0; i < n; i++) out += `${i ? "," : ""}${num(values[i] ?? 0)}`;
    return `${out}]}`;
  }
  out += '"data":[';
  for (let i = 0; i < n; i++) {
    out += `${i ? "," : ""}{"timestamp":"${isoInstant(buckets[i] ?? 0)}","value":${num(values[i] ?? 0)}}`;
  }
  return `${out}]}`;
}

/**
 * A 200 answer with JSON text already written, typed as the route's `c.json` answer would
 * be (the OpenAPI handler's type accepts only that; the text is the same JSON).
 *
 * @param text JSON whose shape is `T`, for example from `seriesJson`.
 */
export function jsonText<T>(c: Context, text: string): TypedResponse<T, 200, "json"> {
  const res = c.body(text, 200, { "content-type": "application/json" });
  // The cast only renames the body's type: `res` is a Response whose body is JSON of `T`.
  return res as unknown as TypedResponse<T, 200, "json">;
}
