/**
 * The layering rules of docs/architecture.md that a reader can check by import lines:
 * no public-API code imports from src/operator/ (the operator API is mounted by src/app.ts
 * only), and every router of a public route is made by `createRouter()`.
 */
import { describe, expect, it } from "vitest";

const sources = import.meta.glob<string>("../src/**/*.ts", {
  query: "?raw",
  import: "default",
  eager: true,
});

/** The module paths a source file imports (static `import ... from` and `export ... from`). */
function importsOf(text: string): string[] {
  return [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)";/gms)].map(
    (m) => m[1] ?? "",
  );
}

describe("the layers", () => {
  it("keep public-API code free of imports from src/operator/", () => {
    const files = Object.keys(sources);
    expect(files.length).toBeGreaterThan(50);
    const offenders: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      if (file.startsWith("../src/operator/") || file === "../src/app.ts") continue;
      for (const spec of importsOf(text)) {
        if (/(^|\/)operator(\/|$)/.test(spec)) offenders.push(`${file} imports ${spec}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("make every public router with createRouter()", () => {
    const publicRouters = Object.entries(sources).filter(
      ([file, text]) =>
        !file.startsWith("../src/operator/") &&
        file !== "../src/http/openapi.ts" &&
        /\.openapi\(/.test(text),
    );
    expect(publicRouters.length).toBeGreaterThan(8);
    for (const [file, text] of publicRouters) {
      expect(text, file).not.toMatch(/new OpenAPIHono/);
    }
  });
});
