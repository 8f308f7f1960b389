/**
 * Property-based tests of every public route with hostile input (fast-check):
 * mutated and arbitrary JSON bodies, wrong types, huge numbers, NaN-like
 * strings, Unicode, very long strings, deep nesting, malformed JSON, wrong
 * content types, odd path ids and query strings.
 *
 * Each answer must keep the OpenAPI document served at `/openapi.json`: a
 * documented status (never a 500), the documented error body, and a refused
 * call (any non-2XX) leaves the company's data as it was.
 *
 * Runs are seeded: a failure prints fast-check's `seed` and `path`; set
 * `SEED` in hostile-input.ts to them to replay it. Each route gets `RUNS` runs.
 * This file holds the catalog's operations (machines, SKUs, operators, simple work orders,
 * nominal speeds); properties-facts.test.ts every other one, so that the two run side by side.
 */
import { describe, expect, it } from "vitest";
import { publicOperations } from "./contract";
import { describeHostileInput, hostileInputRoutes } from "./hostile-input";
import { ROUTE_CASES } from "./routes";

describe("the hardening cases cover the document", () => {
  it("has a case for every documented public operation, and none for an undocumented one", async () => {
    const documented = (await publicOperations()).map((o) => `${o.method} ${o.path}`).sort();
    expect(Object.keys(ROUTE_CASES).sort()).toEqual(documented);
    // The two files' halves are every case, each once.
    const halves = [...hostileInputRoutes("catalog"), ...hostileInputRoutes("facts")].sort();
    expect(halves).toEqual(Object.keys(ROUTE_CASES).sort());
  });
});

describeHostileInput(hostileInputRoutes("catalog"));
