import { describe, expect, it } from "vitest";
import readme from "../README.md?raw";
import { call } from "./harness";

interface OpenApiDocument {
  paths: Record<
    string,
    Record<
      string,
      { "x-required-scope"?: string; "x-required-scope-by"?: { scopes: Record<string, string> } }
    >
  >;
}

describe("README", () => {
  it("publishes the scope of every public operation exactly as /openapi.json does", async () => {
    const doc = (await (await call("/openapi.json")).json()) as OpenApiDocument;
    // An operation whose scope a request field picks (the exports) lists each scope once.
    const fromDocument = Object.entries(doc.paths)
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, op]) => {
          const scopes = op["x-required-scope-by"]
            ? [...new Set(Object.values(op["x-required-scope-by"].scopes))].sort().join(" ")
            : (op["x-required-scope"] ?? "-");
          return `${method.toUpperCase()} ${path} ${scopes}`;
        }),
      )
      .sort();
    const fromReadme = [
      ...readme.matchAll(/^\| (GET|POST|PATCH|PUT|DELETE) \| `([^`]+)` \| (.+) \|$/gm),
    ]
      .map((m) => {
        const scopes = [...(m[3] ?? "").matchAll(/`([a-z_]+\.[a-z]+)`/g)].map((s) => s[1]).sort();
        return `${m[1]} ${m[2]} ${scopes.join(" ")}`;
      })
      .sort();
    expect(fromReadme).toEqual(fromDocument);
  });
});
