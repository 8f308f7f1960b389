/**
 * The scenarios of the end-to-end suite: a plant seeded through the operator API, then
 * every public operation called with realistic requests through the typed client (so
 * through Prism), the successes and the documented failures (401, 403, 404, 409, 422,
 * 429, an idempotent replay).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { ok } from "../scripts/lib/http";
import { connectOperator, type Scope } from "../scripts/lib/operator-api";
import { ALL_SCOPES, READ_SCOPES } from "../scripts/lib/scopes";
import { publicClient, type ViolationRecorder } from "./public-client";
import {
  DAY,
  expectData,
  expectError,
  expectStatus,
  HOUR,
  iso,
  MINUTE,
  type State,
  type Step,
  type World,
} from "./scenario-kit";
import { STOP_AND_EXPORT_STEPS } from "./scenarios-stops-exports";

/**
 * Seeds one company through the operator API (straight to the Worker: the operator API
 * is not in the public document): keys, three machines, signals and samples, a 24-hour
 * shift on two machines, stops (one classified).
 */
async function seed(
  workerUrl: string,
  prismUrl: string,
  operatorToken: string,
  recorder: ViolationRecorder,
): Promise<World> {
  const { api: operator } = connectOperator(workerUrl, operatorToken);
  const runId = randomUUID().slice(0, 8);
  const now = Date.now();
  const [company] = ok(
    "POST",
    await operator.POST("/companies", {
      body: [{ name: `E2E Plant ${runId}`, timezone: "Europe/Madrid" }],
    }),
  );
  assert.ok(company, "no company created");
  const [fullKey, readKey, limitedKey] = ok(
    "POST",
    await operator.POST("/companies/{company_id}/api-keys", {
      params: { path: { company_id: company.id } },
      body: [
        { name: "e2e-full", scopes: [...ALL_SCOPES] as Scope[] },
        { name: "e2e-read-only", scopes: [...READ_SCOPES] as Scope[] },
        {
          name: "e2e-limited",
          scopes: ["machines.read"],
          rateLimit: { requests: 2, periodSeconds: 60 },
        },
      ],
    }),
  );
  assert.ok(fullKey && readKey && limitedKey, "keys not created");

  const created = ok(
    "POST",
    await operator.POST("/companies/{company_id}/machines", {
      params: { path: { company_id: company.id } },
      body: [
        { name: "Line 1 filler", externalName: "FIL-01", isCountEnabled: true },
        { name: "Line 2 capper", externalName: "CAP-02", isCountEnabled: true },
        { name: "Packer (no shifts)" },
        // No uuid: listed, but without signals access (a nullable field of the document).
        { name: "Legacy labeler", uuid: null },
      ],
    }),
  );
  const [line1, line2, packer] = created.map((m) => ({
    id: m.id,
    uuid: m.uuid ?? "",
    name: m.name,
  }));
  assert.ok(line1?.uuid && line2?.uuid && packer?.uuid, "machines not created with uuids");

  const signals = ok(
    "POST",
    await operator.POST("/machines/{machine_id}/signals", {
      params: { path: { machine_id: line1.id } },
      body: [
        {
          name: "power",
          displayName: "Main motor power",
          kind: "analog",
          description: { en: "Active power of the main motor, kW", es: "Potencia activa, kW" },
        },
        { name: "count", displayName: "Bottle counter", kind: "counter" },
      ],
    }),
  );
  const power = signals.find((s) => s.name === "power")?.publicId;
  const count = signals.find((s) => s.name === "count")?.publicId;
  assert.ok(power && count, "signals not created");
  const start = Math.floor((now - 3 * HOUR) / MINUTE) * MINUTE;
  const minutes = Array.from({ length: 180 }, (_, i) => start + i * MINUTE);
  const addSamples = async (publicId: string, samples: { timestamp: string; value: number }[]) =>
    ok(
      "POST",
      await operator.POST("/signals/{public_id}/samples", {
        params: { path: { public_id: publicId } },
        body: { samples },
      }),
    );
  await addSamples(
    power,
    minutes.map((t, i) => ({ timestamp: iso(t), value: 40 + 5 * Math.sin(i / 10) })),
  );
  await addSamples(
    count,
    minutes.map((t) => ({ timestamp: iso(t), value: 12 })),
  );

  // A 24-hour shift (start = end) on the two lines: they always run a shift instance.
  ok(
    "POST",
    await operator.POST("/companies/{company_id}/shifts", {
      params: { path: { company_id: company.id } },
      body: [
        { name: "All day", startTime: "00:00", endTime: "00:00", machineIds: [line1.id, line2.id] },
      ],
    }),
  );
  const yesterday = now - DAY;
  const [stop] = ok(
    "POST",
    await operator.POST("/machines/{machine_id}/stops", {
      params: { path: { machine_id: line1.id } },
      body: [
        {
          startTime: iso(yesterday),
          endTime: iso(yesterday + 25 * MINUTE),
          isProgrammed: false,
        },
        {
          startTime: iso(yesterday + 2 * HOUR),
          endTime: iso(yesterday + 2 * HOUR + 10 * MINUTE),
          isProgrammed: true,
        },
      ],
    }),
  );
  assert.ok(stop, "stops not created");
  ok(
    "PUT",
    await operator.PUT("/stops/{stop_id}/classification", {
      params: { path: { stop_id: stop.id } },
      body: {
        description: "Jam at the infeed star wheel",
        component: { name: "Infeed star wheel" },
        specificCause: { name: "Bottle jam" },
        generalCause: { name: "Mechanical" },
      },
    }),
  );
  // A stop of a machine without shifts: the stops report shows it with `shift: null`.
  ok(
    "POST",
    await operator.POST("/machines/{machine_id}/stops", {
      params: { path: { machine_id: packer.id } },
      body: [
        {
          startTime: iso(yesterday + HOUR),
          endTime: iso(yesterday + HOUR + 5 * MINUTE),
          isProgrammed: false,
        },
      ],
    }),
  );

  return {
    full: publicClient(prismUrl, fullKey.key, recorder),
    readOnly: publicClient(prismUrl, readKey.key, recorder),
    badKey: publicClient(prismUrl, `${fullKey.prefix}-not-a-real-key`, recorder),
    limited: publicClient(prismUrl, limitedKey.key, recorder),
    now,
    runId,
    machines: { line1, line2, packer },
    machineIds: created.map((m) => m.id),
    signals: { power, count },
  };
}

const STEPS: Step[] = [
  {
    name: "machines: list",
    async run({ full, machineIds }) {
      const list = expectData(await full.GET("/v1/machines"), 200);
      assert.deepEqual(
        list.map((m) => m.id),
        machineIds,
      );
      assert.equal(list[3]?.uuid, null);
    },
  },
  {
    name: "signals: list",
    async run({ full, machines }) {
      const { signals } = expectData(
        await full.GET("/v1/machines/{machine_uuid}/signals", {
          params: { path: { machine_uuid: machines.line1.uuid }, query: { language: "es" } },
        }),
        200,
      );
      assert.deepEqual(signals.map((s) => s.name).sort(), ["count", "power"]);
    },
  },
  {
    name: "signals: aggregated data",
    async run({ full, machines, signals, now }) {
      const path = { machine_uuid: machines.line1.uuid, public_id: signals.power };
      const avg = expectData(
        await full.GET("/v1/machines/{machine_uuid}/signals/{public_id}", {
          params: {
            path,
            query: {
              start_time: iso(now - 2 * HOUR),
              end_time: iso(now),
              agg_unit: "m",
              agg_period: 15,
              agg_function: "avg",
            },
          },
        }),
        200,
      );
      assert.ok((avg.data?.length ?? 0) >= 8, "expected 15-minute buckets of power");
      const counts = expectData(
        await full.GET("/v1/machines/{machine_uuid}/signals/{public_id}", {
          params: {
            path: { ...path, public_id: signals.count },
            query: {
              start_time: iso(now - 4 * HOUR),
              end_time: iso(now),
              agg_unit: "h",
              agg_function: "sum",
              transpose: true,
            },
          },
        }),
        200,
      );
      assert.equal(
        counts.values?.reduce((a, b) => a + b, 0),
        180 * 12,
        "hourly sums of the counter add up to every sample",
      );
    },
  },
  {
    name: "skus: create, search, get, update, delete",
    async run({ full, runId }, state) {
      const created = expectData(
        await full.POST("/v1/skus", {
          body: [
            { sku: `WTR-500-${runId}`, name: "Still water 500 ml", unit: "bottles" },
            { sku: `WTR-1500-${runId}`, name: "Still water 1.5 l", description: "6-pack" },
            { sku: `SPARE-${runId}`, name: null, unit: null },
          ],
        }),
        200,
      );
      assert.equal(created.length, 3);
      state.skuIds = created.map((s) => s.id);
      const [water500, water1500, spare] = state.skuIds;
      assert.ok(water500 && water1500 && spare);
      const page = expectData(
        await full.POST("/v1/skus/filters", {
          body: { skus: { search: `wtr-` }, page: 1, limit: 10 },
        }),
        200,
      );
      assert.equal(page.totalCount, 2);
      const one = expectData(
        await full.GET("/v1/skus/{sku_id}", { params: { path: { sku_id: water500 } } }),
        200,
      );
      assert.equal(one.unit, "bottles");
      expectStatus(
        await full.PATCH("/v1/skus/{sku_id}", {
          params: { path: { sku_id: water1500 } },
          body: { description: "6-pack, shrink-wrapped", archived: false },
        }),
        204,
      );
      expectStatus(
        await full.DELETE("/v1/skus/{sku_id}", { params: { path: { sku_id: spare } } }),
        204,
      );
      expectError(
        await full.GET("/v1/skus/{sku_id}", { params: { path: { sku_id: spare } } }),
        404,
      );
    },
  },
  {
    name: "operators: create (idempotent replay), search, get, update, delete",
    async run({ full }, state) {
      const key = randomUUID();
      const body = [
        { firstName: "Ana", lastName: "Pérez" },
        { firstName: "José", lastName: "Núñez" },
        { firstName: "Temp", lastName: null },
      ];
      const first = await full.POST("/v1/operators", {
        params: { header: { "Idempotency-Key": key } },
        body,
      });
      const created = expectData(first, 200);
      const replay = await full.POST("/v1/operators", {
        params: { header: { "Idempotency-Key": key } },
        body,
      });
      assert.deepEqual(expectData(replay, 200), created);
      assert.equal(replay.response.headers.get("Idempotent-Replayed"), "true");
      state.operatorIds = created.map((o) => o.id);
      const [ana, jose, temp] = state.operatorIds;
      assert.ok(ana && jose && temp);
      const page = expectData(
        await full.POST("/v1/operators/filters", { body: { firstName: { search: "jose" } } }),
        200,
      );
      assert.deepEqual(
        page.operators.map((o) => o.id),
        [jose],
      );
      expectData(
        await full.GET("/v1/operators/{operator_id}", { params: { path: { operator_id: ana } } }),
        200,
      );
      expectStatus(
        await full.PATCH("/v1/operators/{operator_id}", {
          params: { path: { operator_id: temp } },
          body: { lastName: "Substitute" },
        }),
        204,
      );
      expectStatus(
        await full.DELETE("/v1/operators/{operator_id}", {
          params: { path: { operator_id: temp } },
        }),
        204,
      );
    },
  },
  {
    name: "simple work orders: create, search, get, update, delete",
    async run({ full, runId }, state) {
      const created = expectData(
        await full.POST("/v1/simple-work-orders", {
          body: [{ name: `WO-${runId}-001` }, { name: `WO-${runId}-002` }],
        }),
        200,
      );
      state.workOrderIds = created.map((w) => w.id);
      const [first, second] = state.workOrderIds;
      assert.ok(first && second);
      const page = expectData(
        await full.POST("/v1/simple-work-orders/filters", {
          body: { names: { search: `WO-${runId}-00%` }, page: 1, limit: 50 },
        }),
        200,
      );
      assert.equal(page.totalCount, 2);
      expectData(
        await full.GET("/v1/simple-work-orders/{simple_work_order_id}", {
          params: { path: { simple_work_order_id: first } },
        }),
        200,
      );
      expectStatus(
        await full.PATCH("/v1/simple-work-orders/{simple_work_order_id}", {
          params: { path: { simple_work_order_id: first } },
          body: { name: `WO-${runId}-001-A` },
        }),
        204,
      );
      expectStatus(
        await full.DELETE("/v1/simple-work-orders/{simple_work_order_id}", {
          params: { path: { simple_work_order_id: second } },
        }),
        204,
      );
    },
  },
  {
    name: "nominal speeds: create, search, get, update, delete",
    async run({ full, machines, runId }, state) {
      const [water500, water1500] = state.skuIds;
      assert.ok(water500 && water1500);
      const created = expectData(
        await full.POST("/v1/nominal-speeds", {
          body: [
            { machine: { id: machines.line1.id }, sku: { id: water500 }, nominalSpeed: 120 },
            {
              machine: { name: machines.line2.name },
              sku: { name: `WTR-1500-${runId}` },
              nominalSpeed: 45.5,
              countingFactor: 6,
            },
            { machine: { id: machines.line1.id }, sku: { id: water1500 }, nominalSpeed: 60 },
          ],
        }),
        200,
      );
      state.nominalSpeedIds = created.map((n) => n.id);
      const [, line2Speed, spare] = state.nominalSpeedIds;
      assert.ok(line2Speed && spare);
      const page = expectData(
        await full.POST("/v1/nominal-speeds/filters", {
          body: { machines: { include: [machines.line1.id] }, nominalSpeed: { greaterThan: 100 } },
        }),
        200,
      );
      assert.equal(page.totalCount, 1);
      const speed = expectData(
        await full.GET("/v1/nominal-speeds/{nominal_speed_id}", {
          params: { path: { nominal_speed_id: line2Speed } },
        }),
        200,
      );
      assert.equal(speed.countingFactor, 6);
      expectStatus(
        await full.PATCH("/v1/nominal-speeds/{nominal_speed_id}", {
          params: { path: { nominal_speed_id: line2Speed } },
          body: { nominalSpeed: 48 },
        }),
        204,
      );
      expectStatus(
        await full.DELETE("/v1/nominal-speeds/{nominal_speed_id}", {
          params: { path: { nominal_speed_id: spare } },
        }),
        204,
      );
    },
  },
  {
    name: "production logs: create, search, get, update, delete",
    async run({ full, machines, now, runId }, state) {
      const [water500] = state.skuIds;
      assert.ok(water500);
      const yesterday = now - DAY;
      const created = expectData(
        await full.POST("/v1/production-logs", {
          body: [
            {
              machine: { id: machines.line1.id },
              sku: { id: water500 },
              start: iso(yesterday),
              end: iso(yesterday + HOUR),
              count: 6800,
              type: "total",
              operator: { firstName: "Ana", lastName: "Pérez" },
              workOrder: `WO-${runId}-001-A`,
              isReviewed: false,
            },
            {
              machine: { name: machines.line1.name },
              sku: { name: `WTR-500-${runId}` },
              start: iso(yesterday),
              end: iso(yesterday + HOUR),
              count: 35,
              type: "defects",
            },
          ],
        }),
        200,
      );
      state.productionLogIds = created.map((l) => l.id);
      const [total, defects] = state.productionLogIds;
      assert.ok(total && defects);
      const page = expectData(
        await full.POST("/v1/production-logs/filters", {
          body: {
            machines: { include: [machines.line1.id] },
            start: { between: { start: iso(yesterday - HOUR), end: iso(yesterday + HOUR) } },
            type: "total",
            page: 1,
            limit: 100,
          },
        }),
        200,
      );
      assert.ok(page.productionLogs.some((l) => l.id === total));
      const log = expectData(
        await full.GET("/v1/production-logs/{production_log_id}", {
          params: { path: { production_log_id: total } },
        }),
        200,
      );
      assert.equal(log.operator?.firstName, "Ana");
      expectStatus(
        await full.PATCH("/v1/production-logs/{production_log_id}", {
          params: { path: { production_log_id: total } },
          body: { isReviewed: true, count: 6790 },
        }),
        204,
      );
      expectStatus(
        await full.DELETE("/v1/production-logs/{production_log_id}", {
          params: { path: { production_log_id: defects } },
        }),
        204,
      );
    },
  },
  {
    name: "realtime: set SKU, add operator, read state",
    async run({ full, machines, runId, now }, state) {
      const [ana] = state.operatorIds;
      const [water500] = state.skuIds;
      assert.ok(ana && water500);
      const machine_id = machines.line1.id;
      expectStatus(
        await full.POST("/v1/realtime/{machine_id}/sku", {
          params: { path: { machine_id }, header: { "Idempotency-Key": randomUUID() } },
          body: {
            skuId: water500,
            simpleWorkOrderName: `WO-${runId}-RT`,
            quantity: 12000,
            custom: { lot: "L-2026-042", line_speed_setpoint: 118 },
          },
        }),
        204,
      );
      expectStatus(
        await full.POST("/v1/realtime/{machine_id}/operator", {
          params: { path: { machine_id } },
          body: { operatorId: ana, start: iso(Math.max(now, Date.now() - 1_000)) },
        }),
        204,
      );
      const realtime = expectData(
        await full.GET("/v1/realtime/{machine_id}", { params: { path: { machine_id } } }),
        200,
      );
      assert.equal(realtime.current?.sku.id, water500);
      assert.deepEqual(
        realtime.operators.map((o) => o.id),
        [ana],
      );
      // A browser's ticket for the stream-event streams (the streams themselves: see run.ts).
      const ticket = expectData(await full.POST("/v1/realtime/tickets"), 201);
      assert.ok(ticket.ticket.length > 20);
    },
  },
  {
    name: "reports: metrics, stops, downtime and KPIs",
    async run({ full, machines, now }) {
      const window = { between: { start: iso(now - 2 * DAY), end: iso(now + DAY) } };
      const metrics = expectData(
        await full.POST("/v1/reports/metrics", {
          body: { machines: { include: [machines.line1.id] }, startDate: window, limit: 100 },
        }),
        200,
      );
      assert.ok(metrics.totalCount >= 1, "expected shift instances of line 1");
      const stops = expectData(
        await full.POST("/v1/reports/stops", { body: { startDate: window, limit: 100 } }),
        200,
      );
      assert.equal(stops.totalCount, 3);
      const packerStop = stops.stops.find((row) => row.machine.id === machines.packer.id);
      assert.equal(packerStop?.shift, null, "a machine without shifts has stops with no shift");
      assert.ok(
        stops.stops.some((row) => row.classification.generalCause.name === "Mechanical"),
        "the classified stop shows its causes",
      );
      const downtime = expectData(
        await full.POST("/v1/reports/downtime", {
          body: { startDate: window, groupBy: ["generalCause", "machine"], limit: 100 },
        }),
        200,
      );
      assert.equal(
        downtime.downtime.reduce((n, row) => n + row.stops, 0),
        3,
        "the Pareto counts the stops report's stops",
      );
      const kpis = expectData(
        await full.POST("/v1/reports/kpis", {
          body: {
            machines: { include: [machines.line1.id] },
            startDate: window,
            groupBy: ["machine", "sku"],
          },
        }),
        200,
      );
      assert.ok(kpis.kpis.every((row) => row.machine?.id === machines.line1.id));
    },
  },
  ...STOP_AND_EXPORT_STEPS,
  {
    name: "errors: 401, 403, 404, 409, 422, 429",
    async run({ full, readOnly, badKey, limited, machines, signals, now }) {
      expectError(await badKey.GET("/v1/machines"), 401, /^Not authenticated$/);
      expectError(
        await readOnly.POST("/v1/skus", { body: [{ sku: "NOT-ALLOWED" }] }),
        403,
        /Missing scope: skus\.create$/,
      );
      expectError(
        await full.GET("/v1/simple-work-orders/{simple_work_order_id}", {
          params: { path: { simple_work_order_id: randomUUID() } },
        }),
        404,
      );
      expectError(
        await full.GET("/v1/machines/{machine_uuid}/signals", {
          params: { path: { machine_uuid: randomUUID() } },
        }),
        404,
      );
      expectError(
        await full.GET("/v1/realtime/{machine_id}", {
          params: { path: { machine_id: machines.packer.id } },
        }),
        409,
        /is not running a shift now$/,
      );
      // Valid for the schema, refused by a rule the schema cannot state: 20 days > 14.
      expectError(
        await full.GET("/v1/machines/{machine_uuid}/signals/{public_id}", {
          params: {
            path: { machine_uuid: machines.line1.uuid, public_id: signals.power },
            query: { start_time: iso(now - 20 * DAY), end_time: iso(now), agg_unit: "h" },
          },
        }),
        422,
      );
      expectError(
        await full.POST("/v1/realtime/{machine_id}/sku", {
          params: { path: { machine_id: machines.line1.id } },
          body: { sku: "NO-SUCH-SKU" },
        }),
        422,
      );
      expectStatus(await limited.GET("/v1/machines"), 200);
      expectStatus(await limited.GET("/v1/machines"), 200);
      const limitedOut = await limited.GET("/v1/machines");
      expectError(limitedOut, 429, /^Rate limit exceeded$/);
      assert.ok(Number(limitedOut.response.headers.get("Retry-After")) >= 1);
    },
  },
];

/**
 * Runs every step in order; stops at the first failed assertion.
 *
 * @param options the Worker (for seeding) and Prism (for the public calls) origins.
 * @returns the names of the steps that passed.
 * @throws the first failed assertion, its message prefixed with the step name.
 */
export async function runScenarios(options: {
  workerUrl: string;
  prismUrl: string;
  operatorToken: string;
  recorder: ViolationRecorder;
}): Promise<string[]> {
  const { recorder } = options;
  recorder.step = "seed";
  const world = await seed(options.workerUrl, options.prismUrl, options.operatorToken, recorder);
  const state: State = {
    skuIds: [],
    operatorIds: [],
    workOrderIds: [],
    nominalSpeedIds: [],
    productionLogIds: [],
  };
  const passed: string[] = [];
  for (const step of STEPS) {
    recorder.step = step.name;
    try {
      await step.run(world, state);
    } catch (error) {
      if (error instanceof Error) error.message = `[${step.name}] ${error.message}`;
      throw error;
    }
    passed.push(step.name);
    console.log(`  ✓ ${step.name}`);
  }
  return passed;
}
