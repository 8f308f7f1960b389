import { describe, expect, it } from "vitest";
import readme from "../README.md?raw";
import { call } from "./harness";

interface OpenApiDocument {
  paths: Record<string, Record<string, { "x-required-scope"?: string }>>;
}

describe("README", () => {
  it("publishes the scope of every public operation exactly as /openapi.json does", async () => {
    const doc = (await (await call("/openapi.json")).json()) as OpenApiDocument;
    const fromDocument = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(
          ([method, op]) => `${method.toUpperCase()} ${path} ${op["x-required-scope"] ?? "-"}`,
        ),
      )
      .sort();
    const fromReadme = [
      ...readme.matchAll(/^\| (GET|POST|PATCH|PUT|DELETE) \| `([^`]+)` \| `([^`]+)` \|$/gm),
    ]
      .map((m) => `${m[1]} ${m[2]} ${m[3]}`)
      .sort();
    expect(fromReadme).toEqual(fromDocument);
  });
});
