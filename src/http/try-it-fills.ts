/**
 * How "Try it out" on `/docs` leaves the demo as it found it: a create example's answer gives
 * its kind's DELETE example the created id, and the realtime read's answer gives the two
 * realtime writes what the machine already does (its running segment with its own `start`,
 * its first operator), so pressing them changes nothing. Applied by src/http/docs-page.ts.
 * docs/demo-data.md ("The records the examples of /docs name").
 */

/** One fill: what is read, what is filled in, and from where in the answer. */
export interface TryItFill {
  /** The operation whose 2XX answer is read (method in lower case, templated path). */
  from: { method: "get" | "post"; path: string };
  /** The operation filled in. */
  to: { method: "post" | "delete"; path: string };
  /** A path parameter, set to the value at `value` in the answer (`0.id`: the first row's id). */
  param?: { name: string; value: string };
  /**
   * A JSON body whose properties are the values at these places of the answer (null when
   * absent); nothing is filled when the first one is absent (the machine makes nothing now).
   */
  body?: Record<string, string>;
}

/** A create example and the DELETE example of its kind. */
const createThenDelete = (collection: string, param: string): TryItFill => ({
  from: { method: "post", path: collection },
  to: { method: "delete", path: `${collection}/{${param}}` },
  param: { name: param, value: "0.id" },
});

const REALTIME = "/v1/realtime/{machine_id}";

/** Every fill of the public `/docs` page. */
export const TRY_IT_FILLS: readonly TryItFill[] = [
  createThenDelete("/v1/skus", "sku_id"),
  createThenDelete("/v1/operators", "operator_id"),
  createThenDelete("/v1/simple-work-orders", "simple_work_order_id"),
  createThenDelete("/v1/nominal-speeds", "nominal_speed_id"),
  createThenDelete("/v1/production-logs", "production_log_id"),
  {
    from: { method: "get", path: REALTIME },
    to: { method: "post", path: `${REALTIME}/sku` },
    body: {
      skuId: "current.sku.id",
      simpleWorkOrderId: "current.simpleWorkOrder.id",
      quantity: "current.quantity",
      custom: "current.custom",
      start: "current.start",
    },
  },
  {
    from: { method: "get", path: REALTIME },
    to: { method: "post", path: `${REALTIME}/operator` },
    body: { operatorId: "operators.0.id", start: "operators.0.start" },
  },
];

/**
 * The value at a dotted place of a JSON answer (`0.id`, `current.sku.id`).
 *
 * @returns the value, or undefined when any step is missing.
 */
export function valueAtPlace(answer: unknown, place: string): unknown {
  let value = answer;
  for (const step of place.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

/**
 * The body a fill gives, from an answer.
 *
 * @returns the body, or undefined when the first value is absent.
 */
export function filledBody(fill: TryItFill, answer: unknown): Record<string, unknown> | undefined {
  const entries = Object.entries(fill.body ?? {});
  const [first] = entries;
  if (!first || valueAtPlace(answer, first[1]) == null) return undefined;
  return Object.fromEntries(
    entries.map(([name, place]) => [name, valueAtPlace(answer, place) ?? null]),
  );
}
