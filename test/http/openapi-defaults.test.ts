/**
 * The OpenAPI document carries every default and bound the contract gives, so that a
 * client generated from it sends and expects what the service does.
 */
import { describe, expect, it } from "vitest";
import { call } from "../harness";

type Schema = {
  $ref?: string;
  type?: string | string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  anyOf?: Schema[];
  oneOf?: Schema[];
};
interface Parameter {
  name: string;
  in: string;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: { "application/json": { schema: Schema } } };
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

async function document(): Promise<OpenApiDocument> {
  const res = await call("/openapi.json");
  expect(res.status).toBe(200);
  return (await res.json()) as OpenApiDocument;
}

/** A schema with `$ref`s followed and a nullable `anyOf` reduced to its non-null branch. */
function resolve(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  let s = schema ?? {};
  for (let i = 0; i < 10; i += 1) {
    if (s.$ref) {
      s = doc.components.schemas[s.$ref.replace("#/components/schemas/", "")] ?? {};
    } else if (s.anyOf ?? s.oneOf) {
      const branches = (s.anyOf ?? s.oneOf ?? []).filter((b) => b.type !== "null");
      if (branches.length !== 1) return s;
      s = { ...branches[0], ...(s.default !== undefined ? { default: s.default } : {}) };
    } else {
      return s;
    }
  }
  return s;
}

function queryParameter(doc: OpenApiDocument, path: string, name: string): Schema {
  const parameter = doc.paths[path]?.get?.parameters?.find(
    (p) => p.in === "query" && p.name === name,
  );
  expect(parameter, `${path} ${name}`).toBeDefined();
  return resolve(doc, parameter?.schema);
}

describe("the OpenAPI document's defaults and bounds", () => {
  it("gives the signal data parameters the spec's defaults and bounds", async () => {
    const doc = await document();
    const path = "/v1/machines/{machine_uuid}/signals/{public_id}";
    expect(queryParameter(doc, path, "agg_unit")).toMatchObject({ default: "s" });
    expect(queryParameter(doc, path, "agg_period")).toMatchObject({
      type: "integer",
      minimum: 1,
      default: 1,
    });
    expect(queryParameter(doc, path, "agg_function")).toMatchObject({ default: "avg" });
    expect(queryParameter(doc, path, "transpose")).toMatchObject({
      type: "boolean",
      default: false,
    });
    expect(queryParameter(doc, "/v1/machines/{machine_uuid}/signals", "language")).toMatchObject({
      default: "en",
    });
  });

  it("gives page and limit of every search and report their minimum, default and maximum", async () => {
    const doc = await document();
    const paged = Object.entries(doc.paths).filter(
      ([path]) => path.endsWith("/filters") || path.startsWith("/v1/reports/"),
    );
    expect(paged.length).toBeGreaterThanOrEqual(7);
    for (const [path, operations] of paged) {
      const body = resolve(doc, operations.post?.requestBody?.content["application/json"].schema);
      const page = resolve(doc, body.properties?.page);
      const limit = resolve(doc, body.properties?.limit);
      // Nullable (the spec's "optional nullable" filters): null is the default too.
      expect([page.type].flat(), `${path} page`).toContain("integer");
      expect([limit.type].flat(), `${path} limit`).toContain("integer");
      expect(page, `${path} page`).toMatchObject({ minimum: 1, default: 1 });
      expect(limit, `${path} limit`).toMatchObject({
        minimum: 1,
        default: 10,
        maximum: 100,
      });
    }
  });

  it("gives every error status of every operation an example of its own", async () => {
    const res = await call("/openapi.json");
    const doc = (await res.json()) as {
      paths: Record<
        string,
        Record<
          string,
          { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }
        >
      >;
    };
    const seen = new Map<string, Set<string>>();
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const example = response.content?.["application/json"]?.example;
          expect(example, `${method} ${path} ${status}`).toBeDefined();
          const text = JSON.stringify(example);
          if (!seen.has(status)) seen.set(status, new Set());
          seen.get(status)?.add(text);
        }
      }
    }
    // No two statuses share an example text (a 404 does not read "Not authenticated").
    const owners = new Map<string, string>();
    for (const [status, texts] of seen) {
      for (const text of texts) {
        expect(owners.get(text) ?? status, `${text} under ${status}`).toBe(status);
        owners.set(text, status);
      }
    }
    expect(seen.get("401")).toEqual(new Set([JSON.stringify({ detail: "Not authenticated" })]));
  });
});
