/**
 * Inputs are bounded so that the metrics report can compute them: a rate below
 * MIN_RATE or a count above MAX_COUNT is a 422 naming the field, and for any accepted
 * production log every number of the report row is finite (fast-check).
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { OEE_FIGURES } from "../../src/reports/oee";
import { MAX_RATE, MIN_RATE } from "../../src/resources/nominal-speeds/schemas";
import { MAX_COUNT, MAX_SENSOR_COUNT } from "../../src/resources/production-logs/schemas";
import { nastyNumber } from "../fixtures/hostile-arbitraries";
import { inServiceSince } from "../fixtures/machine-history";
import { api, createCompany, createMachines, operatorJson, type TestCompany } from "../harness";

const SEED = 20_261_123;
const RUNS = 25;
const MIN = 60_000;
const SHIFT_START = Date.parse("2026-03-02T06:00:00Z");
const SHIFT_END = Date.parse("2026-03-02T14:00:00Z");

let co: TestCompany;
let skuId: string;

beforeAll(async () => {
  co = await createCompany({ timezone: "UTC" });
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Morning", startTime: "06:00", endTime: "14:00" },
  ]);
  const res = await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "F-1" }] });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  skuId = ((await res.json()) as { id: string }[])[0]?.id ?? "";
});

async function newMachine(): Promise<number> {
  const [m] = await createMachines(co.id, [{ name: `Finite ${crypto.randomUUID()}` }]);
  if (!m) throw new Error("no machine");
  await inServiceSince(co.id, [m.id]);
  return m.id;
}

function logAt(machineId: number, fields: Record<string, unknown>, startMs = SHIFT_START) {
  return {
    start: new Date(startMs).toISOString(),
    end: new Date(startMs + 30 * MIN).toISOString(),
    machine: { id: machineId },
    sku: { id: skuId },
    count: 10,
    nominalSpeed: 5,
    ...fields,
  };
}

async function expect422At(res: Response, loc: (string | number)[]): Promise<void> {
  const body = (await res.json()) as { detail: { loc: unknown[] }[] };
  expect(res.status, JSON.stringify(body)).toBe(422);
  expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
}

describe("numeric bounds", () => {
  it("refuses rates below MIN_RATE or above MAX_RATE and counts above MAX_COUNT, naming the field", async () => {
    const machineId = await newMachine();
    const post = (fields: Record<string, unknown>) =>
      api(co.key, "/v1/production-logs", { method: "POST", json: [logAt(machineId, fields)] });
    await expect422At(await post({ nominalSpeed: 1e-300 }), ["body", 0, "nominalSpeed"]);
    await expect422At(await post({ nominalSpeed: MIN_RATE / 2 }), ["body", 0, "nominalSpeed"]);
    await expect422At(await post({ countingFactor: 1e-300 }), ["body", 0, "countingFactor"]);
    await expect422At(await post({ count: 1e10 }), ["body", 0, "count"]);
    await expect422At(await post({ count: MAX_COUNT + 1 }), ["body", 0, "count"]);
    await expect422At(await post({ sensorCount: MAX_SENSOR_COUNT + 1 }), [
      "body",
      0,
      "sensorCount",
    ]);
    const speeds = (nominalSpeed: number) =>
      api(co.key, "/v1/nominal-speeds", {
        method: "POST",
        json: [{ machine: { id: machineId }, sku: { id: skuId }, nominalSpeed }],
      });
    await expect422At(await speeds(1e-300), ["body", 0, "nominalSpeed"]);
    // The bounds themselves are accepted.
    expect((await post({ nominalSpeed: MIN_RATE, count: MAX_COUNT })).status).toBeLessThan(300);
    expect((await speeds(MIN_RATE)).status).toBeLessThan(300);
  });
});

/** A number from the hostile edges, the bounds, or anywhere between. */
const rate = fc.oneof(
  nastyNumber,
  fc.constantFrom(MIN_RATE, MAX_RATE, 1e-300, 5e-324, MIN_RATE * 0.999),
  fc.double({ min: MIN_RATE, max: MAX_RATE, noNaN: true }),
);
const count = fc.oneof(
  nastyNumber,
  fc.constantFrom(0, MAX_COUNT, 1e10, MAX_COUNT + 1),
  fc.integer({ min: 0, max: MAX_COUNT }),
);
const logSpec = fc.record({
  type: fc.constantFrom("total", "correct", "defects"),
  count,
  nominalSpeed: rate,
  countingFactor: fc.option(rate, { nil: undefined }),
  offsetMin: fc.integer({ min: 0, max: 479 }),
  // As short as 1 ms: a tiny run time makes effectiveness large.
  durationMs: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 8 * 60 * MIN })),
});

describe("the metrics report of any accepted input", () => {
  it("has only finite numbers in every row", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(logSpec, { minLength: 1, maxLength: 6 }), async (specs) => {
        const machineId = await newMachine();
        for (const spec of specs) {
          const start = SHIFT_START + spec.offsetMin * MIN;
          const end = Math.min(SHIFT_END, start + spec.durationMs);
          const { offsetMin: _o, durationMs: _d, ...fields } = spec;
          const log = {
            ...logAt(machineId, fields, start),
            end: new Date(end).toISOString(),
          };
          const res = await api(co.key, "/v1/production-logs", { method: "POST", json: [log] });
          // Refused or accepted; either way the report must compute what was kept.
          expect([200, 201, 422], await res.clone().text()).toContain(res.status);
        }
        const res = await api(co.key, "/v1/reports/metrics", {
          method: "POST",
          json: {
            machines: { include: [machineId] },
            startDate: { equal: new Date(SHIFT_START).toISOString() },
          },
        });
        expect(res.status).toBe(200);
        const page = (await res.json()) as {
          metrics: {
            shiftIndicators: Record<string, unknown>;
            productionMetrics: Record<string, unknown>;
          }[];
        };
        expect(page.metrics).toHaveLength(1);
        for (const row of page.metrics) {
          for (const [name, value] of Object.entries({
            ...row.shiftIndicators,
            ...row.productionMetrics,
          })) {
            if (name === "indicatorId") continue;
            if (name === "aboveNominalSpeed") {
              // The flag says what effectiveness says (docs/metrics.md, "Speed above nominal").
              const effectiveness = row.productionMetrics.effectiveness as number | null;
              expect(value).toBe(effectiveness !== null && effectiveness > 1);
              continue;
            }
            // A ratio without a denominator is null (docs/metrics.md); every number is finite.
            const allowed = value === null ? name in OEE_FIGURES : Number.isFinite(value);
            expect(typeof value === "number" || value === null, `${name}: ${value}`).toBe(true);
            expect(allowed, `${name}: ${value}`).toBe(true);
          }
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});
