/**
 * The example values of the OpenAPI document: records of the demo that `npm start` loads,
 * whose ids are the same on every install (scripts/lib/demo-ids.ts, docs/demo-data.md), so
 * that "Try it out" on `/docs` answers 2XX with the demo key on every operation, as pasted.
 * test/scripts/demo-ids.test.ts keeps these equal to the demo's ids, and
 * test/http/docs-examples.test.ts calls every operation with them.
 */

/** Demo Plant A's "Asset 0": its uuid (signals routes) and integer id (realtime routes). */
export const EXAMPLE_MACHINE_UUID = "a0000000-0000-4000-8000-000001000000";
export const EXAMPLE_MACHINE_ID = 1;
/** Demo Plant A's "Asset 1" (integer id on a fresh install): it has no nominal speed for P00. */
export const EXAMPLE_SECOND_MACHINE_ID = 2;
/** Demo Plant A's manual packing bench (integer id on a fresh install). */
export const EXAMPLE_BENCH_MACHINE_ID = 4;
/** Asset 0's `power` signal. */
export const EXAMPLE_SIGNAL_ID = "a5000000-0000-4000-8000-000001000001";
/** A day of the recorded data with production on every machine: a one-day window at 1 h. */
export const EXAMPLE_WINDOW = {
  start: "2022-09-05T00:00:00Z",
  end: "2022-09-06T00:00:00Z",
  aggUnit: "h",
} as const;
/**
 * The reason the stop-reason example gives the manual packing bench's last stop: the reason
 * the demo gave it already (scripts/lib/demo-ids.ts `DOCS_STOP_REASON`), so "Try it out"
 * answers 200 and changes nothing, however often it is pressed.
 */
export const EXAMPLE_STOP_REASON = {
  generalCause: "Material shortage",
  specificCause: "Waiting for cartons",
} as const;
/** The first demo operator of Demo Plant A (integer id on a fresh install). */
export const EXAMPLE_OPERATOR_ID = 1;
/**
 * The DELETE example's operator: the id the create example gets on a fresh install; the page
 * puts there the id its create answered (./try-it-fills.ts).
 */
const DISPOSABLE_OPERATOR_ID = 4;

/**
 * Demo Plant A's records with fixed ids (scripts/lib/demo-ids.ts `DOCS_RECORDS`): the first
 * of each kind is a record of the data (GET and PATCH); the `disposable` one is the DELETE
 * example's placeholder, which no record has: the page puts there the id its create example
 * answered (./try-it-fills.ts), so that trying both leaves nothing behind.
 */
export const EXAMPLE_RECORDS = {
  sku: "a1000000-0000-4000-8000-000000000001",
  disposableSku: "a1000000-0000-4000-8000-000000000002",
  simpleWorkOrder: "a2000000-0000-4000-8000-000000000001",
  disposableSimpleWorkOrder: "a2000000-0000-4000-8000-000000000002",
  nominalSpeed: "a3000000-0000-4000-8000-000000000001",
  disposableNominalSpeed: "a3000000-0000-4000-8000-000000000002",
  productionLog: "a4000000-0000-4000-8000-000000000001",
  disposableProductionLog: "a4000000-0000-4000-8000-000000000002",
} as const;

/** What "Try it out" sends for one operation, besides the parameters' own examples. */
interface OperationExample {
  /** Path and query parameter values, by name. */
  params?: Record<string, string | number>;
  /** The JSON body, as pasted. */
  body?: unknown;
  /**
   * Examples of properties of the body's schema, for a body that must be built at the
   * moment of the call; `null` removes a property's example. Swagger UI fills a property
   * without an example from its schema (a `date-time` becomes the current instant), so a
   * `start` that must be inside the shift running now is right when the button is pressed.
   */
  bodyProperties?: Record<string, unknown>;
}

const R = EXAMPLE_RECORDS;

/**
 * Every operation's example that its schemas do not give, by `operationId`. A create
 * answers 2XX when pasted again, except `createNominalSpeeds` (one nominal speed not deleted per
 * machine/SKU pair: the second time is a 409 naming the first).
 */
const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  createSkus: { body: [{ sku: "P-NEW", name: "New product", unit: "pieces" }] },
  getSku: { params: { sku_id: R.sku } },
  updateSku: { params: { sku_id: R.sku }, body: { unit: "pieces" } },
  deleteSku: { params: { sku_id: R.disposableSku } },
  createOperators: { body: [{ firstName: "Ana", lastName: "Costa" }] },
  updateOperator: { params: { operator_id: EXAMPLE_OPERATOR_ID }, body: { lastName: "Rossi" } },
  deleteOperator: { params: { operator_id: DISPOSABLE_OPERATOR_ID } },
  createSimpleWorkOrders: { body: [{ name: "WO-2022-W39" }] },
  getSimpleWorkOrder: { params: { simple_work_order_id: R.simpleWorkOrder } },
  updateSimpleWorkOrder: {
    params: { simple_work_order_id: R.simpleWorkOrder },
    body: { name: "WO-2022-W35" },
  },
  deleteSimpleWorkOrder: { params: { simple_work_order_id: R.disposableSimpleWorkOrder } },
  createNominalSpeeds: {
    body: [
      {
        nominalSpeed: 1.5,
        countingFactor: 1,
        machine: { id: EXAMPLE_SECOND_MACHINE_ID },
        sku: { id: R.sku },
      },
    ],
  },
  getNominalSpeed: { params: { nominal_speed_id: R.nominalSpeed } },
  updateNominalSpeed: { params: { nominal_speed_id: R.nominalSpeed }, body: { countingFactor: 1 } },
  deleteNominalSpeed: { params: { nominal_speed_id: R.disposableNominalSpeed } },
  createProductionLogs: {
    body: [
      {
        start: "2022-09-05T08:00:00Z",
        end: "2022-09-05T09:00:00Z",
        count: 90,
        nominalSpeed: 1.6,
        machine: { id: EXAMPLE_BENCH_MACHINE_ID },
        sku: { id: R.sku },
      },
    ],
  },
  getProductionLog: { params: { production_log_id: R.productionLog } },
  updateProductionLog: {
    params: { production_log_id: R.productionLog },
    body: { isReviewed: true },
  },
  deleteProductionLog: { params: { production_log_id: R.disposableProductionLog } },
  // No `start`: the SKU runs from the moment of the call. No property example of `start` or
  // `end` either: a fixed instant is never inside the shift running when it is sent.
  setRealtimeSku: { body: { skuId: R.sku }, bodyProperties: { start: null, end: null } },
  addRealtimeOperator: { bodyProperties: { operatorId: EXAMPLE_OPERATOR_ID, start: null } },
  // The example machine's power over the example day; the export's id comes from its answer.
  createExport: {
    body: {
      dataset: "signals",
      format: "parquet",
      filters: {
        signals: [EXAMPLE_SIGNAL_ID],
        start_time: EXAMPLE_WINDOW.start,
        end_time: EXAMPLE_WINDOW.end,
        agg_unit: "m",
      },
    },
  },
  // The bench's last stop, which the demo keeps recent (docs/demo-data.md).
  setRealtimeStopReason: {
    params: { machine_id: EXAMPLE_BENCH_MACHINE_ID },
    body: {
      generalCause: { name: EXAMPLE_STOP_REASON.generalCause },
      specificCause: { name: EXAMPLE_STOP_REASON.specificCause },
    },
  },
};

/** The parts of an OpenAPI document this module reads and writes. */
interface Document {
  paths?: Record<string, Record<string, unknown>>;
  components?: { schemas?: Record<string, unknown> };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A copy of an OpenAPI document with {@link OPERATION_EXAMPLES} written in: a parameter's
 * `example`, the JSON body's `example`, or the examples of the body schema's properties.
 *
 * @param doc the document as @hono/zod-openapi generates it.
 * @returns the document with the examples (the input is not changed).
 * @throws Error when an example names an operation, parameter or body the document lacks,
 *   so that a renamed operation cannot silently lose its example.
 */
export function withOperationExamples<T extends object>(doc: T): T {
  // Through JSON, not structuredClone: the generator may share one parameter object between
  // operations (GET and DELETE of the same id), and each operation needs its own example.
  const out: Document = JSON.parse(JSON.stringify(doc));
  const seen = new Set<string>();
  for (const operations of Object.values(out.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      if (!isObject(operation) || typeof operation.operationId !== "string") continue;
      const example = OPERATION_EXAMPLES[operation.operationId];
      if (!example) continue;
      seen.add(operation.operationId);
      applyExample(out, operation, operation.operationId, example);
    }
  }
  const missing = Object.keys(OPERATION_EXAMPLES).filter((id) => !seen.has(id));
  if (missing.length > 0) throw new Error(`Examples of unknown operations: ${missing.join(", ")}`);
  // The same JSON document as `doc`, with examples added: its type still describes it.
  return out as unknown as T;
}

function applyExample(
  doc: Document,
  operation: Record<string, unknown>,
  operationId: string,
  example: OperationExample,
): void {
  const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
  for (const [name, value] of Object.entries(example.params ?? {})) {
    const parameter = parameters.find((p) => isObject(p) && p.name === name && p.in !== "header");
    if (!isObject(parameter)) throw new Error(`${operationId} has no parameter ${name}`);
    parameter.example = value;
    // Swagger UI reads a parameter's example before its schema's; both say the same.
    if (isObject(parameter.schema)) parameter.schema.example = value;
  }
  if (example.body === undefined && example.bodyProperties === undefined) return;
  const media = isObject(operation.requestBody) ? operation.requestBody.content : undefined;
  const json = isObject(media) ? media["application/json"] : undefined;
  if (!isObject(json)) throw new Error(`${operationId} has no JSON body`);
  if (example.body !== undefined) json.example = example.body;
  if (example.bodyProperties) {
    const ref = isObject(json.schema) ? json.schema.$ref : undefined;
    const name = typeof ref === "string" ? ref.replace("#/components/schemas/", "") : "";
    const schema = doc.components?.schemas?.[name];
    const properties = isObject(schema) ? schema.properties : undefined;
    for (const [property, value] of Object.entries(example.bodyProperties)) {
      const target = isObject(properties) ? properties[property] : undefined;
      if (!isObject(target)) throw new Error(`${operationId} body has no property ${property}`);
      if (value === null) delete target.example;
      else target.example = value;
    }
  }
}
