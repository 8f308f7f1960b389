/**
 * docs/operator-api.md lists every route of the operator API exactly as
 * `/operator/v1/openapi.json` has it (`METHOD /path`, path relative to `/operator/v1`), and
 * no route that does not exist.
 */
import { describe, expect, it } from "vitest";
import doc from "../../docs/operator-api.md?raw";
import { operator } from "../harness";

const METHODS = ["get", "post", "put", "patch", "delete"];

describe("docs/operator-api.md", () => {
  it("lists every operator route of /operator/v1/openapi.json, and only those", async () => {
    const res = await operator("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const spec = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    const fromSpec = Object.entries(spec.paths)
      .flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method) => METHODS.includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    const fromDoc = [...doc.matchAll(/^\| `(GET|POST|PUT|PATCH|DELETE) (\/[^`]*)` \|/gm)]
      .map((m) => `${m[1]} ${m[2]}`)
      .sort();
    expect(fromDoc).toEqual(fromSpec);
  });
});
