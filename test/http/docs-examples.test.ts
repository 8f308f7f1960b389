/**
 * "Try it out" on /docs: every read operation (GET, searches, reports), called with the
 * examples of /openapi.json and nothing else, answers 2XX on a plant that has the demo's
 * fixed ids; and those examples are the demo's ids (scripts/lib/demo-ids.ts).
 */
import { describe, expect, it } from "vitest";
import { ASSET_0_POWER_ID, ASSET_0_UUID } from "../../scripts/lib/demo-ids";
import {
  EXAMPLE_MACHINE_ID,
  EXAMPLE_MACHINE_UUID,
  EXAMPLE_OPERATOR_ID,
  EXAMPLE_SIGNAL_ID,
} from "../../src/http/examples";
import { api, call, createCompany, ingest, operatorJson } from "../harness";

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema?: { example?: unknown; default?: unknown };
}
interface Operation {
  parameters?: Parameter[];
  responses?: Record<string, { content?: Record<string, unknown> }>;
  requestBody?: { content: { "application/json": { example?: unknown } } };
  "x-required-scope"?: string;
}

/** Path parameters that name records whose ids a fresh install generates: no example works. */
const GENERATED_IDS = new Set([
  "sku_id",
  "simple_work_order_id",
  "nominal_speed_id",
  "production_log_id",
]);

describe("the /docs examples", () => {
  it("are the demo's fixed ids", () => {
    expect(EXAMPLE_MACHINE_UUID).toBe(ASSET_0_UUID);
    expect(EXAMPLE_SIGNAL_ID).toBe(ASSET_0_POWER_ID);
  });

  it("answer every read operation with 2XX on a plant with the demo's ids", async () => {
    // This file's storage is its own: the first machine and operator get id 1.
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [machine] = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/machines`, [
      { name: "Asset 0", uuid: EXAMPLE_MACHINE_UUID },
    ]);
    expect(machine?.id).toBe(EXAMPLE_MACHINE_ID);
    await operatorJson("POST", `/machines/${EXAMPLE_MACHINE_ID}/signals`, [
      { name: "power", displayName: "Power", kind: "analog", publicId: EXAMPLE_SIGNAL_ID },
    ]);
    const t0 = Date.parse("2022-09-05T06:00:00Z");
    await ingest(EXAMPLE_SIGNAL_ID, [
      [t0, 2],
      [t0 + 3_600_000, 3],
    ]);
    const operators = await api(co.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "Giulia" }],
    });
    expect(((await operators.json()) as { id: number }[])[0]?.id).toBe(EXAMPLE_OPERATOR_ID);
    // A 24-hour shift, so that the realtime state of the example machine exists now.
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);

    const doc = (await (await call("/openapi.json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const tried: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const isSearch =
          method === "post" &&
          (template.endsWith("/filters") || template.startsWith("/v1/reports/"));
        if (method !== "get" && !isSearch) continue;
        // Event streams never end (test/events/ reads them).
        if (op.responses?.["200"]?.content?.["text/event-stream"]) continue;
        const params = op.parameters ?? [];
        if (params.some((p) => p.in === "path" && GENERATED_IDS.has(p.name))) continue;
        let path = template;
        const query = new URLSearchParams();
        for (const p of params) {
          const example = p.example ?? p.schema?.example;
          if (p.in === "path") {
            expect(example, `${method} ${template} ${p.name}`).toBeDefined();
            path = path.replace(`{${p.name}}`, String(example));
          } else if (p.in === "query" && example !== undefined) {
            query.set(p.name, String(example));
          } else if (p.in === "query") {
            expect(p.required, `${method} ${template} ?${p.name} needs an example`).not.toBe(true);
          }
        }
        const url = query.size ? `${path}?${query}` : path;
        const body = op.requestBody?.content["application/json"].example;
        if (isSearch) expect(body, `${template} example body`).toEqual({});
        const res = await api(co.key, url, isSearch ? { method: "POST", json: body } : {});
        expect(
          res.status,
          `${method.toUpperCase()} ${url}: ${await res.clone().text()}`,
        ).toBeLessThan(300);
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
      ]),
    );
  });
});
