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
 * `SEED` below to them to replay it. Each route gets `RUNS` runs.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { call } from "../fixtures/direct-client";
import { type BodySpec, bodySpec, oddSegment, queryString } from "../fixtures/hostile-input";
import { expectDocumentedAnswer, operation, publicOperations } from "./contract";
import { ROUTE_CASES, routeCase } from "./routes";
import { buildWorld, fillPath, pathIds, type World } from "./world";

/**
 * Fixed so that a run can be replayed (a failure prints fast-check's seed and
 * path); change it, or raise `RUNS`, to explore other inputs. Environment
 * variables do not reach the tests, which run inside workerd.
 */
const SEED = 20_260_426;
const RUNS = 40;

let foreign: World;

beforeAll(async () => {
  foreign = await buildWorld("foreign");
});

describe("the hardening cases cover the document", () => {
  it("has a case for every documented public operation, and none for an undocumented one", async () => {
    const documented = (await publicOperations()).map((o) => `${o.method} ${o.path}`).sort();
    expect(Object.keys(ROUTE_CASES).sort()).toEqual(documented);
  });
});

describe.each(Object.keys(ROUTE_CASES))("%s with hostile input", (key) => {
  const [method = "", path = ""] = key.split(" ");

  it("answers a documented status with the documented body, never a 500, and a refusal writes nothing", async () => {
    const op = await operation(method as "GET", path);
    const rc = routeCase(method, path);
    const world = await buildWorld();
    const own = pathIds(world);
    const theirs = pathIds(foreign);

    const segments = fc.record(
      Object.fromEntries(
        op.pathParams.map((name) => [
          name,
          fc.oneof(
            { weight: 4, arbitrary: fc.constant(encodeURIComponent(own[name] ?? "")) },
            { weight: 1, arbitrary: fc.constant(encodeURIComponent(theirs[name] ?? "")) },
            { weight: 3, arbitrary: oddSegment },
          ),
        ]),
      ),
    );
    const query = queryString(rc.query?.(world) ?? {});
    const body: fc.Arbitrary<BodySpec> = op.hasBody
      ? bodySpec(rc.body?.(world) ?? {})
      : fc.constant<BodySpec>({});

    const statuses: number[] = [];
    // The state after the last call: a refusal must leave it as it is; a success may change it.
    let known = await rc.state?.(world);
    await fc.assert(
      fc.asyncProperty(segments, query, body, async (seg, qs, spec) => {
        const url = `${fillPath(op.path, seg)}${qs}`;
        const headers: Record<string, string> = { "x-api-key": world.co.key };
        if (spec.contentType !== undefined) headers["content-type"] = spec.contentType;
        const res = await call(url, { method: op.method, headers, body: spec.text });
        const answer = await expectDocumentedAnswer(op, res, {
          method: op.method,
          url,
          contentType: spec.contentType,
          body: spec.text,
        });
        statuses.push(answer.status);
        if (!rc.state) return;
        const after = await rc.state(world);
        if (answer.status >= 300) {
          expect(after, `a ${answer.status} changed data: ${url}`).toEqual(known);
        }
        known = after;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The runs reached both sides: valid requests that succeed, hostile ones refused
    // (an operation without path, query or body input has nothing to refuse).
    const succeeded = statuses.some((s) => s < 300);
    expect(succeeded, `no success among ${statuses.join(",")}`).toBe(true);
    if (op.pathParams.length + op.queryParams.length > 0 || op.hasBody) {
      const refused = statuses.some((s) => s >= 400);
      expect(refused, `no refusal among ${statuses.join(",")}`).toBe(true);
    }
  }, 60_000);
});
