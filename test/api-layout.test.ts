/**
 * One layout for the public and operator APIs (docs/architecture.md, "Layout"): a resource is
 * a folder of src/resources/ or src/operator/ with its router in `routes.ts`, and a
 * sub-resource's router sits beside it as `<sub>-routes.ts`; no router lives anywhere else, so
 * a reader finds an operation's route by the same path pattern in both APIs, and the
 * dependency rule `routes-are-leaves` (which names those two patterns) sees every router.
 */
import { describe, expect, it } from "vitest";

const sources = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>("../src/**/*.ts", { query: "?raw", import: "default", eager: true }),
  ).map(([path, text]) => [path.replace(/^\.\.\//, ""), text]),
);

/** Where routers are composed, or `createRouter` itself is defined: not resource routers. */
const COMPOSITION = ["src/app.ts", "src/operator/index.ts", "src/http/openapi.ts"];
const ROUTER_FILE = /\/(routes|[^/]+-routes)\.ts$/;

/**
 * The layout's breaches in a set of source files (path -> text): a file that makes a router
 * (`createRouter()`, or `new Hono` as MCP's door) but is not named as one, a file named as a router that makes none, and an
 * API resource folder (a folder of src/resources/ or src/operator/) without its `routes.ts`.
 */
function layoutBreaches(files: Record<string, string>): string[] {
  const breaches: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (COMPOSITION.includes(file)) continue;
    const makesRouter = /\bcreateRouter\(|\bnew (OpenAPI)?Hono\b/.test(text);
    if (makesRouter && !ROUTER_FILE.test(file))
      breaches.push(`${file}: a router outside routes.ts`);
    if (!makesRouter && ROUTER_FILE.test(file))
      breaches.push(`${file}: named a router, makes none`);
  }
  const resources = new Set(
    Object.keys(files)
      .map((file) => /^src\/(resources|operator)\/[^/]+\//.exec(file)?.[0])
      .filter((folder) => folder !== undefined),
  );
  for (const folder of resources) {
    if (!(`${folder}routes.ts` in files)) breaches.push(`${folder}: no routes.ts`);
  }
  return breaches.sort();
}

describe("one layout for both APIs", () => {
  it("keeps every router in a resource's routes.ts or a sub-resource's <sub>-routes.ts", () => {
    expect(
      Object.keys(sources).filter((f) => f.startsWith("src/operator/")).length,
    ).toBeGreaterThan(20);
    expect(layoutBreaches(sources)).toEqual([]);
  });

  it("finds a router out of place, a misnamed file and a resource without its router", () => {
    const { "src/operator/stops/causes-routes.ts": causes = "", ...rest } = sources;
    const broken = {
      ...rest,
      "src/operator/stop-causes.ts": causes,
      "src/operator/shifts/detection-routes.ts": "export const rules = 1;\n",
      "src/resources/downtime/queries.ts": "export const q = 1;\n",
    };
    expect(layoutBreaches(broken)).toEqual([
      "src/operator/shifts/detection-routes.ts: named a router, makes none",
      "src/operator/stop-causes.ts: a router outside routes.ts",
      "src/resources/downtime/: no routes.ts",
    ]);
  });
});
