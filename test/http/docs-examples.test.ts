/**
 * "Try it out" on /docs: every operation, called in the document's order with the examples
 * of /openapi.json, filled in as the page fills them from earlier answers (a create's id into
 * its DELETE, the realtime read into the realtime writes: src/http/try-it-fills.ts), answers
 * 2XX on a plant that has the demo's fixed ids, and leaves its records and its running
 * machine as they were; and those examples are the demo's ids (scripts/lib/demo-ids.ts).
 */
import { describe, expect, it } from "vitest";
import {
  ASSET_0_POWER_ID,
  ASSET_0_UUID,
  DOCS_RECORDS,
  DOCS_STOP_REASON,
} from "../../scripts/lib/demo-ids";
import { compareWith, takeSnapshot } from "../../scripts/lib/requests-restore";
import {
  EXAMPLE_BENCH_MACHINE_ID,
  EXAMPLE_MACHINE_ID,
  EXAMPLE_MACHINE_UUID,
  EXAMPLE_OPERATOR_ID,
  EXAMPLE_RECORDS,
  EXAMPLE_SECOND_MACHINE_ID,
  EXAMPLE_SIGNAL_ID,
  EXAMPLE_STOP_REASON,
} from "../../src/http/examples";
import { filledBody, TRY_IT_FILLS, valueAtPlace } from "../../src/http/try-it-fills";
import { bodyText } from "../fixtures/body-text";
import { finishExport } from "../fixtures/export-harness";
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

/** A realtime write of the set-up (204, no body). */
const post204 = (key: string, path: string, json: unknown) =>
  api(key, path, { method: "POST", json });

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
    ]);
    expect(operators.map((o) => o.id)).toEqual([EXAMPLE_OPERATOR_ID, 2, 3]);
    const [sku] = await post<{ id: string }[]>("/v1/skus", [{ sku: "P00", unit: "pieces" }]);
    const [order] = await post<{ id: string }[]>("/v1/simple-work-orders", [
      { name: "WO-2022-W35" },
    ]);
    const fix = (type: string, id: string | undefined, newId: string) => ({ type, id, newId });
    await operatorJson("POST", `/companies/${co.id}/record-ids`, [
      fix("sku", sku?.id, EXAMPLE_RECORDS.sku),
      fix("simpleWorkOrder", order?.id, EXAMPLE_RECORDS.simpleWorkOrder),
    ]);
    const skuRef = { id: EXAMPLE_RECORDS.sku };
    const [speed] = await post<{ id: string }[]>("/v1/nominal-speeds", [
      { nominalSpeed: 1.6, machine: { id: EXAMPLE_MACHINE_ID }, sku: skuRef },
    ]);
    const [log] = await post<{ id: string }[]>("/v1/production-logs", [
      {
        start: "2022-09-05T06:00:00Z",
        end: "2022-09-05T06:05:00Z",
        count: 4,
        machine: { id: 1 },
        sku: skuRef,
        isReviewed: true,
      },
    ]);
    await operatorJson("POST", `/companies/${co.id}/record-ids`, [
      fix("nominalSpeed", speed?.id, EXAMPLE_RECORDS.nominalSpeed),
      fix("productionLog", log?.id, EXAMPLE_RECORDS.productionLog),
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
    // A 24-hour shift, so that the realtime state of the example machine exists now, and the
    // machine running a SKU with an operator, as the demo's replay leaves it.
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);
    const running = await api(co.key, `/v1/realtime/${EXAMPLE_MACHINE_ID}`);
    const shiftStart = ((await running.json()) as { shift: { start: string } }).shift.start;
    const segment = { sku: "P00", start: shiftStart, quantity: 500, custom: { lot: "L1" } };
    expect((await post204(co.key, `/v1/realtime/${EXAMPLE_MACHINE_ID}/sku`, segment)).status).toBe(
      204,
    );
    const assignment = { operatorId: 2, start: shiftStart };
    expect(
      (await post204(co.key, `/v1/realtime/${EXAMPLE_MACHINE_ID}/operator`, assignment)).status,
    ).toBe(204);
    const target = {
      baseUrl: "http://worker",
      key: co.key,
      fetch: (url: string, init: RequestInit) => {
        const { pathname, search } = new URL(url);
        return call(`${pathname}${search}`, init);
      },
    };
    const before = await takeSnapshot(target, EXAMPLE_MACHINE_ID);

    const doc = (await (await call("/openapi.json")).json()) as Doc;
    const tried: string[] = [];
    // What the page filled in from earlier answers, by `method template`.
    const filled = new Map<string, { param?: [string, string]; body?: unknown }>();
    // An export's id (and its file's name) have no example: a user pastes them from the
    // answer of `POST /v1/exports` (and of `GET /v1/exports/{export_id}` once it is done).
    const pasted: Record<string, string> = {};
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const params = op.parameters ?? [];
        const fill = filled.get(`${method} ${template}`);
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
            const value = fill?.param?.[0] === p.name ? fill.param[1] : example;
            path = path.replace(`{${p.name}}`, String(value));
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
          json = fill?.body ?? media.example ?? bodyFromSchema(doc, media.schema);
          const generated = media.example === undefined;
          // Only a body with a `start` that must be now is left to Swagger UI to build.
          if (generated) expect(op.operationId).toBe("addRealtimeOperator");
        }
        const res = await api(co.key, url, { method: method.toUpperCase(), json, headers });
        const streams = op.responses?.["200"]?.content?.["text/event-stream"] !== undefined;
        const text = streams ? "(event stream)" : await bodyText(res);
        if (op.operationId === "createExport")
          pasted.export_id = (JSON.parse(text) as { id: string }).id;
        if (streams) await res.body?.cancel();
        expect(res.status, `${method.toUpperCase()} ${url}: ${text}`).toBeLessThan(300);
        expect(res.status, `${method.toUpperCase()} ${url}`).toBeGreaterThanOrEqual(200);
        tried.push(`${method.toUpperCase()} ${template}`);
        // The page reads the answer and fills later operations in (src/http/docs-page.ts).
        const answer = text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : null;
        for (const f of TRY_IT_FILLS) {
          if (f.from.method !== method || f.from.path !== template) continue;
          const id = f.param ? valueAtPlace(answer, f.param.value) : undefined;
          filled.set(`${f.to.method} ${f.to.path}`, {
            ...(f.param && id != null ? { param: [f.param.name, String(id)] } : {}),
            ...(f.body ? { body: filledBody(f, answer) } : {}),
          });
        }
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
    // Every DELETE deleted what its create made, and the realtime writes repeated the machine's
    // segment and operator: the plant is as it was.
    expect(await compareWith(target, before, { replayRuns: false })).toMatchObject({
      differences: [],
    });
  });
});
