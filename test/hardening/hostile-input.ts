/**
 * The hostile-input property of test/hardening/properties.test.ts (its header says what it
 * checks), for a part of the public operations: the operations are split over two test files,
 * properties.test.ts (the catalog: machines, SKUs, operators, simple work orders, nominal
 * speeds) and properties-facts.test.ts (everything else: production logs, reports, exports,
 * realtime), so that the two halves run side by side on two cores. This file alone was the
 * longest of `npm test` (docs/testing.md, "How long `npm test` takes").
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type BodySpec, bodySpec, oddSegment, queryString } from "./arbitraries";
import { call } from "./client";
import { expectDocumentedAnswer, operation } from "./contract";
import { ROUTE_CASES, routeCase } from "./routes";
import { buildWorld, fillPath, pathIds, type World } from "./world";

/**
 * Fixed so that a run can be replayed (a failure prints fast-check's seed and
 * path); change it, or raise `RUNS`, to explore other inputs. Environment
 * variables do not reach the tests, which run inside workerd.
 */
const SEED = 20_260_426;
const RUNS = 40;

/** The catalog's operations: their paths start with one of these. */
const CATALOG = /^[A-Z]+ \/v1\/(machines|skus|operators|simple-work-orders|nominal-speeds)(\/|$)/;

/**
 * The operations (`METHOD path`, keys of ROUTE_CASES) of one half: `catalog` those of
 * CATALOG, `facts` every other one, so that the two halves together are every operation.
 */
export function hostileInputRoutes(half: "catalog" | "facts"): string[] {
  return Object.keys(ROUTE_CASES).filter((key) => CATALOG.test(key) === (half === "catalog"));
}

/**
 * Declares, for each operation of `keys`, the property: every answer to hostile input is a
 * documented status with the documented body, never a 500, and a refusal writes nothing;
 * the runs reach a success and (where there is input to refuse) a refusal. Each operation
 * gets a world of its own; another company's ids come from one `foreign` world per file.
 */
export function describeHostileInput(keys: string[]): void {
  let foreign: World;

  beforeAll(async () => {
    foreign = await buildWorld("foreign");
  });

  describe.each(keys)("%s with hostile input", (key) => {
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
}
