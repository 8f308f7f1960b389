/**
 * "Try it out" on /docs: every operation, called in the document's order with the examples
 * of /openapi.json and nothing else, answers 2XX on a plant that has the demo's fixed ids;
 * and those examples are the demo's ids (scripts/lib/demo-ids.ts).
 */
import { describe, expect, it } from "vitest";
import {
  ASSET_0_POWER_ID,
  ASSET_0_UUID,
  DOCS_RECORDS,
  DOCS_STOP_REASON,
} from "../../scripts/lib/demo-ids";
import {
  DISPOSABLE_OPERATOR_ID,
  EXAMPLE_BENCH_MACHINE_ID,
  EXAMPLE_MACHINE_ID,
  EXAMPLE_MACHINE_UUID,
  EXAMPLE_OPERATOR_ID,
  EXAMPLE_RECORDS,
  EXAMPLE_SECOND_MACHINE_ID,
  EXAMPLE_SIGNAL_ID,
  EXAMPLE_STOP_REASON,
} from "../../src/http/examples";
import { finishExport } from "../exports/export-harness";
import { api, call, createCompany, ingest, operatorJson } from "../harness";

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema?: { example?: unknown; default?: unknown };
}
interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  example?: unknown;
  required?: string[];
  properties?: Record<string, Schema>;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  responses?: Record<string, { content?: Record<string, unknown> }>;
  requestBody?: {
    required?: boolean;
    content: { "application/json": { example?: unknown; schema?: Schema } };
  };
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * The body Swagger UI builds from a schema without a body example: each property's example,
 * and for a required `date-time` without one, the current instant (as Swagger UI does).
 */
function bodyFromSchema(doc: Doc, schema: Schema | undefined): Record<string, unknown> {
  const resolved = schema?.$ref
    ? doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")]
    : schema;
  const body: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(resolved?.properties ?? {})) {
    if (property.example !== undefined) body[name] = property.example;
    else if (property.format === "date-time" && resolved?.required?.includes(name)) {
      body[name] = new Date().toISOString();
    }
  }
  return body;
}

describe("the /docs examples", () => {
  it("are the demo's fixed ids", () => {
    expect(EXAMPLE_MACHINE_UUID).toBe(ASSET_0_UUID);
    expect(EXAMPLE_SIGNAL_ID).toBe(ASSET_0_POWER_ID);
    expect(EXAMPLE_RECORDS).toEqual(DOCS_RECORDS);
    expect(EXAMPLE_STOP_REASON).toEqual(DOCS_STOP_REASON);
  });

  it("answer every operation with 2XX, in the document's order, on a plant with the demo's ids", async () => {
    // This file's storage is its own: machines and operators get ids from 1, as on a fresh install.
    const co = await createCompany({ timezone: "Europe/Rome" });
    const machines = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/machines`, [
      { name: "Asset 0", uuid: EXAMPLE_MACHINE_UUID },
      { name: "Asset 1" },
      { name: "Asset 2" },
      { name: "Manual packing bench", uuid: null },
    ]);
    expect(machines.map((m) => m.id)).toEqual([
      EXAMPLE_MACHINE_ID,
      EXAMPLE_SECOND_MACHINE_ID,
      3,
      EXAMPLE_BENCH_MACHINE_ID,
    ]);
    await operatorJson("POST", `/machines/${EXAMPLE_MACHINE_ID}/signals`, [
      { name: "power", displayName: "Power", kind: "analog", publicId: EXAMPLE_SIGNAL_ID },
    ]);
    const t0 = Date.parse("2022-09-05T06:00:00Z");
    await ingest(EXAMPLE_SIGNAL_ID, [
      [t0, 2],
      [t0 + 3_600_000, 3],
    ]);
    const post = async <T>(path: string, json: unknown): Promise<T> => {
      const res = await api(co.key, path, { method: "POST", json });
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
      return (await res.json()) as T;
    };
    const operators = await post<{ id: number }[]>("/v1/operators", [
      { firstName: "Giulia", lastName: "Rossi" },
      { firstName: "Marco", lastName: "Bianchi" },
      { firstName: "José", lastName: "Muñoz" },
      { firstName: "Docs", lastName: "Example" },
    ]);
    expect(operators.map((o) => o.id)).toEqual([EXAMPLE_OPERATOR_ID, 2, 3, DISPOSABLE_OPERATOR_ID]);
    const [sku, disposableSku] = await post<{ id: string }[]>("/v1/skus", [
      { sku: "P00", unit: "pieces" },
      { sku: "DOCS-DELETE-ME" },
    ]);
    const [order, disposableOrder] = await post<{ id: string }[]>("/v1/simple-work-orders", [
      { name: "WO-2022-W35" },
      { name: "WO-DOCS-DELETE-ME" },
    ]);
    const fix = (type: string, id: string | undefined, newId: string) => ({ type, id, newId });
    await operatorJson("POST", `/companies/${co.id}/record-ids`, [
      fix("sku", sku?.id, EXAMPLE_RECORDS.sku),
      fix("sku", disposableSku?.id, EXAMPLE_RECORDS.disposableSku),
      fix("simpleWorkOrder", order?.id, EXAMPLE_RECORDS.simpleWorkOrder),
      fix("simpleWorkOrder", disposableOrder?.id, EXAMPLE_RECORDS.disposableSimpleWorkOrder),
    ]);
    const skuRef = { id: EXAMPLE_RECORDS.sku };
    const [speed, disposableSpeed] = await post<{ id: string }[]>("/v1/nominal-speeds", [
      { nominalSpeed: 1.6, machine: { id: EXAMPLE_MACHINE_ID }, sku: skuRef },
      { nominalSpeed: 1, machine: { id: EXAMPLE_BENCH_MACHINE_ID }, sku: skuRef },
    ]);
    const [log, disposableLog] = await post<{ id: string }[]>("/v1/production-logs", [
      {
        start: "2022-09-05T06:00:00Z",
        end: "2022-09-05T06:05:00Z",
        count: 4,
        machine: { id: 1 },
        sku: skuRef,
      },
      {
        start: "2022-09-05T07:00:00Z",
        end: "2022-09-05T08:00:00Z",
        count: 50,
        machine: { id: 4 },
        sku: skuRef,
      },
    ]);
    await operatorJson("POST", `/companies/${co.id}/record-ids`, [
      fix("nominalSpeed", speed?.id, EXAMPLE_RECORDS.nominalSpeed),
      fix("nominalSpeed", disposableSpeed?.id, EXAMPLE_RECORDS.disposableNominalSpeed),
      fix("productionLog", log?.id, EXAMPLE_RECORDS.productionLog),
      fix("productionLog", disposableLog?.id, EXAMPLE_RECORDS.disposableProductionLog),
    ]);
    // The bench's recent stop with the example's reason, as the demo keeps it.
    const [benchStop] = await operatorJson<{ id: number }[]>(
      "POST",
      `/machines/${EXAMPLE_BENCH_MACHINE_ID}/stops`,
      [
        {
          startTime: new Date(Date.now() - 20 * 60_000).toISOString(),
          endTime: new Date(Date.now() - 10 * 60_000).toISOString(),
          isProgrammed: false,
          isManual: true,
        },
      ],
    );
    await operatorJson("PUT", `/stops/${benchStop?.id}/classification`, {
      generalCause: { name: DOCS_STOP_REASON.generalCause },
      specificCause: { name: DOCS_STOP_REASON.specificCause },
    });
    // A 24-hour shift, so that the realtime state of the example machine exists now.
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);

    const doc = (await (await call("/openapi.json")).json()) as Doc;
    const tried: string[] = [];
    // An export's id (and its file's name) have no example: a user pastes them from the
    // answer of `POST /v1/exports` (and of `GET /v1/exports/{export_id}` once it is done).
    const pasted: Record<string, string> = {};
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const params = op.parameters ?? [];
        let path = template;
        const query = new URLSearchParams();
        // Swagger UI fills every parameter that has an example, headers included.
        const headers: Record<string, string> = {};
        for (const p of params) {
          const example =
            p.example ?? p.schema?.example ?? (p.in === "path" ? pasted[p.name] : undefined);
          if (p.in === "path" && p.name === "file_name" && example === undefined) {
            const done = await finishExport(co.key, co.id, pasted.export_id ?? "");
            pasted.file_name = done.files[0]?.name ?? "";
            path = path.replace(`{${p.name}}`, pasted.file_name);
          } else if (p.in === "path") {
            expect(example, `${method} ${template} ${p.name}`).toBeDefined();
            path = path.replace(`{${p.name}}`, String(example));
          } else if (p.in === "query" && example !== undefined) {
            query.set(p.name, String(example));
          } else if (p.in === "query") {
            expect(p.required, `${method} ${template} ?${p.name} needs an example`).not.toBe(true);
          } else if (p.in === "header" && example !== undefined) {
            headers[p.name] = String(example);
          }
        }
        const url = query.size ? `${path}?${query}` : path;
        const media = op.requestBody?.content["application/json"];
        let json: unknown;
        if (media) {
          json = media.example ?? bodyFromSchema(doc, media.schema);
          const generated = media.example === undefined;
          // Only a body with a `start` that must be now is left to Swagger UI to build.
          if (generated) expect(op.operationId).toBe("addRealtimeOperator");
        }
        const res = await api(co.key, url, { method: method.toUpperCase(), json, headers });
        const streams = op.responses?.["200"]?.content?.["text/event-stream"] !== undefined;
        const text = streams ? "(event stream)" : await res.text();
        if (op.operationId === "createExport")
          pasted.export_id = (JSON.parse(text) as { id: string }).id;
        if (streams) await res.body?.cancel();
        expect(res.status, `${method.toUpperCase()} ${url}: ${text}`).toBeLessThan(300);
        expect(res.status, `${method.toUpperCase()} ${url}`).toBeGreaterThanOrEqual(200);
        tried.push(`${method.toUpperCase()} ${template}`);
      }
    }
    expect(tried).toEqual(
      expect.arrayContaining([
        "GET /v1/machines/{machine_uuid}/signals/{public_id}",
        "GET /v1/realtime/{machine_id}",
        "GET /v1/operators/{operator_id}",
        "POST /v1/reports/metrics",
        "POST /v1/skus/filters",
        "GET /v1/skus/{sku_id}",
        "DELETE /v1/production-logs/{production_log_id}",
        "POST /v1/realtime/{machine_id}/sku",
        "POST /v1/realtime/{machine_id}/operator",
        "POST /v1/realtime/{machine_id}/stop-reason",
        "GET /v1/realtime/{machine_id}/stops",
      ]),
    );
    expect(tried.length).toBe(
      Object.values(doc.paths).reduce((n, item) => n + Object.keys(item).length, 0),
    );
  });
});
