/**
 * Production logs through HTTP: create (defaults, references, all-or-nothing
 * 422s with the item index), the expanded GET, PATCH, soft DELETE, every
 * filter, the running-shift rule, cross-company isolation, scopes, and the
 * metrics report following a log's creation and deletion.
 */

import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import { inServiceSince } from "../fixtures/machine-history";
import { describeSecurity } from "../fixtures/security";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operatorJson,
  shardD1,
  type TestCompany,
  type TestMachine,
} from "../harness";

type ProductionLog = Api["ProductionLog"];

type LogPage = Api["ProductionLogPage"];

type ValidationBody = Api["ValidationError"];

type Sku = Api["Sku"];

const BASE = "/v1/production-logs";
const MIN = 60_000;
const HOUR = 60 * MIN;

const post = (co: TestCompany, items: unknown) =>
  api(co.key, BASE, { method: "POST", json: items });

async function createLogs(co: TestCompany, items: unknown[]): Promise<ProductionLog[]> {
  const res = await post(co, items);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ProductionLog[];
}

async function createLog(co: TestCompany, item: Record<string, unknown>): Promise<ProductionLog> {
  const [log] = await createLogs(co, [item]);
  if (!log) throw new Error("no log created");
  return log;
}

async function expect422(res: Response): Promise<ValidationBody> {
  expect(res.status, await res.clone().text()).toBe(422);
  return (await res.json()) as ValidationBody;
}

async function filter(co: TestCompany, body: unknown): Promise<LogPage> {
  const res = await api(co.key, `${BASE}/filters`, { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LogPage;
}

const getLog = (co: TestCompany, id: string) => api(co.key, `${BASE}/${id}`);
const patchLog = (co: TestCompany, id: string, body: unknown) =>
  api(co.key, `${BASE}/${id}`, { method: "PATCH", json: body });
const deleteLog = (co: TestCompany, id: string) =>
  api(co.key, `${BASE}/${id}`, { method: "DELETE" });

async function readLog(co: TestCompany, id: string): Promise<ProductionLog> {
  const res = await getLog(co, id);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as ProductionLog;
}

async function createSkus(co: TestCompany, items: unknown[]): Promise<Sku[]> {
  const res = await api(co.key, "/v1/skus", { method: "POST", json: items });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Sku[];
}

async function defineShifts(
  companyId: number,
  items: Record<string, unknown>[],
): Promise<{ id: number; name: string }[]> {
  return operatorJson("POST", `/companies/${companyId}/shifts`, items);
}

interface Plant {
  co: TestCompany;
  m1: TestMachine;
  m2: TestMachine;
  a: Sku;
  b: Sku;
}

/**
 * A company (Europe/Rome) with two machines, two SKUs, and a nominal speed of
 * 15 units/min with counting factor 12 for (m1, a) only.
 */
async function plant(options: { timezone?: string } = {}): Promise<Plant> {
  const co = await createCompany(options);
  const [m1, m2] = await createMachines(co.id, [{ name: "Prensa Línea 1" }, { name: "Filler 2" }]);
  if (!m1 || !m2) throw new Error("no machines");
  const [a, b] = await createSkus(co, [
    { sku: "P-A", name: "Alpha", description: "First product", unit: "boxes" },
    { sku: "P-B", name: "Beta" },
  ]);
  if (!a || !b) throw new Error("no skus");
  const res = await api(co.key, "/v1/nominal-speeds", {
    method: "POST",
    json: [{ machine: { id: m1.id }, sku: { id: a.id }, nominalSpeed: 15, countingFactor: 12 }],
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return { co, m1, m2, a, b };
}

/** A valid item on (m1, a) for 2026-03-02 (a past Monday), `hour` local Rome time (UTC+1). */
function item(p: Plant, hour: number, extra: Record<string, unknown> = {}) {
  const start = new Date(Date.UTC(2026, 2, 2, hour - 1)).toISOString();
  const end = new Date(Date.UTC(2026, 2, 2, hour)).toISOString();
  return { start, end, count: 120, machine: { id: p.m1.id }, sku: { id: p.a.id }, ...extra };
}

describe("POST /v1/production-logs", () => {
  it("creates a log with the pair's nominal speed and counting factor, expanded like GET", async () => {
    const p = await plant();
    const res = await post(p.co, [item(p, 7)]);
    expect(res.status).toBe(200);
    const [log] = (await res.json()) as ProductionLog[];
    if (!log) throw new Error("no log");
    expect(log).toMatchObject({
      type: "total",
      count: 120,
      sensorCount: 10,
      nominalSpeed: 15,
      countingFactor: 12,
      start: "2026-03-02T06:00:00.000Z",
      end: "2026-03-02T07:00:00.000Z",
      isReviewed: false,
      isAutomated: false,
      live: false,
      machineId: p.m1.id,
      deletedAt: null,
      machine: { id: p.m1.id, name: "Prensa Línea 1", isCountEnabled: true, externalName: null },
      company: { id: p.co.id, name: p.co.name, timezone: "Europe/Rome" },
      shift: null,
      operator: null,
      sku: { id: p.a.id, name: "Alpha", description: "First product", unit: "boxes" },
      workOrder: null,
      simpleWorkOrder: null,
    });
    expect(log.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(log.createdAt)).toBeGreaterThan(0);
    expect(await readLog(p.co, log.id)).toEqual(log);
  });

  it("derives sensorCount as count / countingFactor rounded half up, or keeps the one given", async () => {
    const p = await plant();
    const logs = await createLogs(p.co, [
      item(p, 7, { count: 125 }), // 10.42 -> 10
      item(p, 8, { count: 126 }), // 10.5 -> 11
      item(p, 9, { count: 126, countingFactor: 4 }), // given factor wins: 31.5 -> 32
      item(p, 10, { count: 126, sensorCount: 7 }),
      // No nominal speed for (m2, b): nominalSpeed given, countingFactor defaults to 1.
      item(p, 11, { count: 50, machine: { id: p.m2.id }, sku: { id: p.b.id }, nominalSpeed: 3 }),
    ]);
    expect(logs.map((l) => [l.sensorCount, l.countingFactor, l.nominalSpeed])).toEqual([
      [10, 12, 15],
      [11, 12, 15],
      [32, 4, 15],
      [7, 12, 15],
      [50, 1, 3],
    ]);
  });

  it("without count, takes the pulses the machine's count signal measured in [start, end)", async () => {
    const p = await plant();
    const countSignal = await createSignal(p.m1.id, { name: "count" });
    // A sample every 10 s from 05:30 to 07:30 UTC (values 0, 1, 2, 0, ...), plus a second
    // signal of another name that must not count.
    const t0 = Date.UTC(2026, 2, 2, 5, 30);
    const samples = Array.from({ length: 721 }, (_, i) => [t0 + i * 10_000, i % 3] as const);
    await ingest(countSignal, samples);
    await ingest(await createSignal(p.m1.id, { name: "power" }), [[t0 + 3_600_000, 1_000]]);
    const measured = (start: number, end: number) =>
      samples.filter(([t]) => t >= start && t < end).reduce((sum, [, v]) => sum + v, 0);
    const iso = (ms: number) => new Date(ms).toISOString();
    // 06:00 to 07:00: whole hour (the sample at 07:00 is out); 05:30:05 to 05:59:59.5: raw edges
    // and whole minutes.
    const hour = [Date.UTC(2026, 2, 2, 6), Date.UTC(2026, 2, 2, 7)] as const;
    const edges = [t0 + 5_000, Date.UTC(2026, 2, 2, 5, 59, 59, 500)] as const;
    const logs = await createLogs(p.co, [
      item(p, 7, { count: undefined }),
      { ...item(p, 7, { count: null }), start: iso(edges[0]), end: iso(edges[1]) },
      item(p, 8, { count: undefined, sensorCount: 7 }),
      // m2 has no count signal: 0.
      item(p, 9, { count: undefined, machine: { id: p.m2.id }, nominalSpeed: 3 }),
    ]);
    const hourPulses = measured(...hour);
    const edgePulses = measured(...edges);
    expect(hourPulses).toBe(360);
    expect(logs.map((l) => [l.sensorCount, l.count, l.countingFactor])).toEqual([
      [hourPulses, hourPulses * 12, 12],
      [edgePulses, edgePulses * 12, 12],
      [7, 84, 12],
      [0, 0, 1],
    ]);
    expect(await readLog(p.co, logs[0]?.id ?? "")).toMatchObject({ count: hourPulses * 12 });
  });

  it("resolves machine and SKU by name (SKU name or code) and keeps the type given", async () => {
    const p = await plant();
    const logs = await createLogs(p.co, [
      item(p, 7, { machine: { name: "Prensa Línea 1" }, sku: { name: "Alpha" }, type: "defects" }),
      item(p, 8, { machine: { name: "Filler 2" }, sku: { name: "P-B" }, nominalSpeed: 2 }),
    ]);
    expect(logs.map((l) => [l.machine.id, l.sku?.id, l.type])).toEqual([
      [p.m1.id, p.a.id, "defects"],
      [p.m2.id, p.b.id, "total"],
    ]);
  });

  it("reports every rule failure with its item index and creates nothing", async () => {
    const p = await plant();
    const body = await expect422(
      await post(p.co, [
        item(p, 7, { end: item(p, 7).start }), // start == end
        item(p, 8, { machine: { id: 999_999 } }),
        item(p, 9, { sku: { id: p.b.id } }), // (m1, b) has no nominal speed, none given
        item(p, 10, { machine: { name: "Nope" } }),
        item(p, 11, { sku: { name: "Nothing" } }),
        item(p, 12), // valid, but the batch is all-or-nothing
      ]),
    );
    expect(body.detail.map((d) => d.loc)).toEqual([
      ["body", 0, "end"],
      ["body", 1, "machine"],
      ["body", 2, "nominalSpeed"],
      ["body", 3, "machine"],
      ["body", 4, "sku"],
    ]);
    expect(body.detail[2]?.msg).toMatch(/No nominal speed/);
    expect((await filter(p.co, {})).totalCount).toBe(0);
  });

  it("rejects malformed items with the index in loc", async () => {
    const p = await plant();
    const cases: [unknown, (string | number)[]][] = [
      [
        [item(p, 7), item(p, 8, { count: -1 })],
        ["body", 1, "count"],
      ],
      [[item(p, 7, { count: 1.5 })], ["body", 0, "count"]],
      [[{ ...item(p, 7), start: undefined }], ["body", 0, "start"]],
      [[item(p, 7, { start: "yesterday" })], ["body", 0, "start"]],
      [[item(p, 7, { type: "good" })], ["body", 0, "type"]],
      [[item(p, 7, { nominalSpeed: 0 })], ["body", 0, "nominalSpeed"]],
      [[item(p, 7, { countingFactor: -2 })], ["body", 0, "countingFactor"]],
      [[item(p, 7, { colour: "red" })], ["body", 0, "colour"]],
      [[item(p, 7, { operator: { firstName: "Ana" } })], ["body", 0, "operator", "lastName"]],
      [[item(p, 7, { workOrder: "  " })], ["body", 0, "workOrder"]],
    ];
    for (const [items, loc] of cases) {
      const body = await expect422(await post(p.co, items));
      expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
    }
    await expect422(await post(p.co, []));
    await expect422(await post(p.co, item(p, 7)));
    await expect422(
      await post(
        p.co,
        Array.from({ length: 1001 }, () => item(p, 7)),
      ),
    );
    expect((await filter(p.co, {})).totalCount).toBe(0);
  });

  it("finds or creates the operator by name and the work order by name", async () => {
    const p = await plant();
    const existing = await api(p.co.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "Ana", lastName: "García" }],
    });
    expect(existing.status).toBe(200);
    const [ana] = (await existing.json()) as { id: number }[];
    const logs = await createLogs(p.co, [
      item(p, 7, { operator: { firstName: "Ana", lastName: "García" }, workOrder: "WO-1" }),
      item(p, 8, { operator: { firstName: " Luis ", lastName: "Pérez" }, workOrder: "WO-1" }),
      item(p, 9, { operator: { firstName: "Luis", lastName: "Pérez" }, workOrder: "WO-2" }),
    ]);
    const [first, second, third] = logs;
    if (!first || !second || !third) throw new Error("missing logs");
    expect(first.operator).toEqual({
      id: ana?.id,
      firstName: "Ana",
      lastName: "García",
      email: null,
    });
    expect(second.operator?.firstName).toBe("Luis");
    expect(second.operator?.id).not.toBe(ana?.id);
    expect(third.operator?.id).toBe(second.operator?.id);
    expect(first.workOrder).toMatchObject({
      name: "WO-1",
      status: "InProgress",
      description: null,
    });
    expect(second.workOrder?.id).toBe(first.workOrder?.id);
    expect(third.workOrder?.name).toBe("WO-2");
    expect(third.workOrder?.id).not.toBe(first.workOrder?.id);
    // The created operator is a real member of the roster.
    const roster = await api(p.co.key, `/v1/operators/${second.operator?.id}`);
    expect(roster.status).toBe(200);
  });

  it("stores the shift instance containing start, or null when no shift covers it", async () => {
    const p = await plant();
    const [morning] = await defineShifts(p.co.id, [
      { name: "Morning", startTime: "06:00", endTime: "14:00", isConsidered: false },
    ]);
    const [inShift, outside] = await createLogs(p.co, [item(p, 7), item(p, 15)]);
    expect(inShift?.shift).toMatchObject({
      name: "Morning",
      start: "2026-03-02T05:00:00.000Z",
      end: "2026-03-02T13:00:00.000Z",
      isConsidered: false,
    });
    expect(typeof inShift?.shift?.id).toBe("number");
    expect(outside?.shift).toBeNull();
    expect(morning?.name).toBe("Morning");
  });
});

describe("POST /v1/production-logs at full size", () => {
  it("creates 1,000 logs over many shift instances in one call", async () => {
    const p = await plant();
    await defineShifts(p.co.id, [
      { name: "Day", startTime: "06:00", endTime: "18:00" },
      { name: "Night", startTime: "18:00", endTime: "06:00" },
    ]);
    const base = Date.UTC(2026, 0, 1);
    const items = Array.from({ length: 1000 }, (_, i) => ({
      start: new Date(base + i * HOUR).toISOString(),
      end: new Date(base + i * HOUR + 30 * MIN).toISOString(),
      count: i,
      machine: { id: i % 2 === 0 ? p.m1.id : p.m2.id },
      sku: { id: p.a.id },
      nominalSpeed: 10,
      operator: { firstName: "Op", lastName: String(i % 3) },
      workOrder: `WO-${i % 5}`,
    }));
    const logs = await createLogs(p.co, items);
    expect(logs).toHaveLength(1000);
    expect(logs.map((l) => l.count)).toEqual(items.map((i) => i.count));
    expect(logs.every((l) => l.shift !== null)).toBe(true);
    expect(new Set(logs.map((l) => l.operator?.id)).size).toBe(3);
    expect(new Set(logs.map((l) => l.workOrder?.id)).size).toBe(5);
    const page = await filter(p.co, { limit: 100, page: 10 });
    expect(page.totalCount).toBe(1000);
    expect(page.productionLogs.map((l) => l.count)).toEqual(
      Array.from({ length: 100 }, (_, i) => 900 + i),
    );
  });
});

describe("the OpenAPI document", () => {
  it("publishes the five production-log operations with their scopes", async () => {
    const res = await api("unused", "/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { "x-required-scope"?: string }>>;
    };
    const scope = (path: string, method: string) => doc.paths[path]?.[method]?.["x-required-scope"];
    expect(scope(BASE, "post")).toBe("production_logs.create");
    expect(scope(`${BASE}/filters`, "post")).toBe("production_logs.read");
    expect(scope(`${BASE}/{production_log_id}`, "get")).toBe("production_logs.read");
    expect(scope(`${BASE}/{production_log_id}`, "patch")).toBe("production_logs.update");
    expect(scope(`${BASE}/{production_log_id}`, "delete")).toBe("production_logs.delete");
  });
});

describe("GET /v1/production-logs/{id}", () => {
  it("answers 404 for an unknown id and 422 for a malformed one", async () => {
    const p = await plant();
    expect((await getLog(p.co, crypto.randomUUID())).status).toBe(404);
    expect((await getLog(p.co, "not-a-uuid")).status).toBe(422);
  });

  it("shows operator null once the operator is deleted", async () => {
    const p = await plant();
    const log = await createLog(
      p.co,
      item(p, 7, { operator: { firstName: "Eva", lastName: "Ruiz" } }),
    );
    const operatorId = log.operator?.id;
    expect(operatorId).toEqual(expect.any(Number));
    const del = await api(p.co.key, `/v1/operators/${operatorId}`, { method: "DELETE" });
    expect(del.status).toBe(204);
    const after = await readLog(p.co, log.id);
    expect(after.operator).toBeNull();
    // Naming the same person again creates a new roster entry, not the deleted one.
    expect(
      (await patchLog(p.co, log.id, { operator: { firstName: "Eva", lastName: "Ruiz" } })).status,
    ).toBe(204);
    const renamed = await readLog(p.co, log.id);
    expect(renamed.operator?.firstName).toBe("Eva");
    expect(renamed.operator?.id).not.toBe(operatorId);
  });
});

describe("PATCH /v1/production-logs/{id}", () => {
  it("changes every listed field and answers 204", async () => {
    const p = await plant();
    const log = await createLog(p.co, item(p, 7));
    const res = await patchLog(p.co, log.id, {
      type: "correct",
      count: 240,
      nominalSpeed: 20,
      start: "2026-03-03T08:00:00Z",
      end: "2026-03-03T09:30:00+01:00",
      machine: { name: "Filler 2" },
      sku: { id: p.b.id },
      operator: { firstName: "Ana", lastName: "López" },
      workOrder: "WO-9",
      isReviewed: true,
    });
    expect(res.status, await res.clone().text()).toBe(204);
    expect(await res.text()).toBe("");
    const after = await readLog(p.co, log.id);
    expect(after).toMatchObject({
      type: "correct",
      count: 240,
      sensorCount: 20, // re-derived with the log's counting factor, 12
      countingFactor: 12,
      nominalSpeed: 20,
      start: "2026-03-03T08:00:00.000Z",
      end: "2026-03-03T08:30:00.000Z",
      machineId: p.m2.id,
      machine: { id: p.m2.id, name: "Filler 2" },
      sku: { id: p.b.id, name: "Beta" },
      operator: { firstName: "Ana", lastName: "López" },
      workOrder: { name: "WO-9", status: "InProgress" },
      isReviewed: true,
    });
    expect(Date.parse(after.updatedAt)).toBeGreaterThanOrEqual(Date.parse(log.updatedAt));
  });

  it("treats null as unchanged, except operator and workOrder which it removes", async () => {
    const p = await plant();
    const log = await createLog(
      p.co,
      item(p, 7, { operator: { firstName: "Ana", lastName: "López" }, workOrder: "WO-1" }),
    );
    const res = await patchLog(p.co, log.id, {
      count: null,
      type: null,
      start: null,
      machine: null,
      operator: null,
      workOrder: null,
    });
    expect(res.status).toBe(204);
    const after = await readLog(p.co, log.id);
    expect(after).toMatchObject({
      count: 120,
      type: "total",
      start: log.start,
      machineId: p.m1.id,
    });
    expect(after.operator).toBeNull();
    expect(after.workOrder).toBeNull();
    expect((await patchLog(p.co, log.id, {})).status).toBe(204);
  });

  it("re-derives the shift instance when start or machine changes", async () => {
    const p = await plant();
    await defineShifts(p.co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    const log = await createLog(p.co, item(p, 15));
    expect(log.shift).toBeNull();
    expect((await patchLog(p.co, log.id, { start: "2026-03-02T12:00:00Z" })).status).toBe(204);
    const moved = await readLog(p.co, log.id);
    expect(moved.shift?.start).toBe("2026-03-02T05:00:00.000Z");
    expect((await patchLog(p.co, log.id, { machine: { id: p.m2.id } })).status).toBe(204);
    const otherMachine = await readLog(p.co, log.id);
    // Same wall-clock shift, but the other machine's own instance.
    expect(otherMachine.shift?.start).toBe("2026-03-02T05:00:00.000Z");
    expect(otherMachine.shift?.id).not.toBe(moved.shift?.id);
    expect((await patchLog(p.co, log.id, { start: "2026-03-02T13:30:00Z" })).status).toBe(204);
    expect((await readLog(p.co, log.id)).shift).toBeNull();
  });

  it("rejects unknown fields, bad references and an inverted interval with 422", async () => {
    const p = await plant();
    const log = await createLog(p.co, item(p, 7));
    const cases: [unknown, (string | number)[]][] = [
      [{ colour: "red" }, ["body", "colour"]],
      [{ countingFactor: 2 }, ["body", "countingFactor"]],
      [{ count: -3 }, ["body", "count"]],
      [{ type: "good" }, ["body", "type"]],
      [{ machine: { id: 999_999 } }, ["body", "machine"]],
      [{ sku: { name: "Nothing" } }, ["body", "sku"]],
      [{ end: "2026-03-02T05:00:00Z" }, ["body", "end"]],
      [{ start: "2026-03-02T07:00:00Z" }, ["body", "start"]],
      [{ operator: { firstName: "Ana", lastName: null } }, ["body", "operator", "lastName"]],
    ];
    for (const [body, loc] of cases) {
      const res = await expect422(await patchLog(p.co, log.id, body));
      expect(res.detail.map((d) => d.loc)).toContainEqual(loc);
    }
    const unchanged = await readLog(p.co, log.id);
    expect(unchanged).toEqual(log);
  });

  it("answers 404 for an unknown id", async () => {
    const p = await plant();
    expect((await patchLog(p.co, crypto.randomUUID(), { count: 1 })).status).toBe(404);
  });
});

describe("DELETE /v1/production-logs/{id}", () => {
  it("soft-deletes: then 404 on GET, PATCH and DELETE, and gone from filters", async () => {
    const p = await plant();
    const [kept, gone] = await createLogs(p.co, [item(p, 7), item(p, 8)]);
    if (!kept || !gone) throw new Error("missing logs");
    const res = await deleteLog(p.co, gone.id);
    expect(res.status).toBe(204);
    expect((await getLog(p.co, gone.id)).status).toBe(404);
    expect((await patchLog(p.co, gone.id, { count: 1 })).status).toBe(404);
    expect((await deleteLog(p.co, gone.id)).status).toBe(404);
    const page = await filter(p.co, {});
    expect(page.productionLogs.map((l) => l.id)).toEqual([kept.id]);
    expect(page.totalCount).toBe(1);
  });
});

describe("POST /v1/production-logs/filters", () => {
  /** Six logs with distinct machines, SKUs, instants, counts, types and review states. */
  async function dataset() {
    const p = await plant();
    const at = (day: number, hour: number) => new Date(Date.UTC(2026, 2, day, hour)).toISOString();
    const logs = await createLogs(p.co, [
      { ...item(p, 0), start: at(2, 6), end: at(2, 8), count: 10, type: "total" },
      { ...item(p, 0), start: at(2, 8), end: at(2, 9), count: 20, type: "defects" },
      {
        ...item(p, 0),
        machine: { id: p.m2.id },
        sku: { id: p.b.id },
        nominalSpeed: 5,
        start: at(3, 6),
        end: at(3, 7),
        count: 30,
        type: "correct",
      },
      {
        ...item(p, 0),
        machine: { id: p.m2.id },
        nominalSpeed: 5,
        start: at(4, 6),
        end: at(4, 10),
        count: 40,
        type: "total",
      },
      {
        ...item(p, 0),
        sku: { id: p.b.id },
        nominalSpeed: 5,
        start: at(5, 6),
        end: at(5, 7),
        count: 50,
        type: "total",
      },
      { ...item(p, 0), start: at(1, 6), end: at(1, 7), count: 0, type: "total" },
    ]);
    expect((await patchLog(p.co, logs[1]?.id ?? "", { isReviewed: true })).status).toBe(204);
    expect((await patchLog(p.co, logs[3]?.id ?? "", { isReviewed: true })).status).toBe(204);
    // By start: [5] Mar 1, [0] Mar 2 06h, [1] Mar 2 08h, [2] Mar 3, [3] Mar 4, [4] Mar 5.
    const ids = (...indexes: number[]) => indexes.map((i) => logs[i]?.id);
    return { p, logs, ids, at };
  }

  const idsOf = (page: LogPage) => page.productionLogs.map((l) => l.id);

  it("lists everything by start with {} or no body, expanded like GET", async () => {
    const { p, ids, logs } = await dataset();
    const page = await filter(p.co, {});
    expect(page).toMatchObject({ totalCount: 6, totalPages: 1, currentPage: 1 });
    expect(idsOf(page)).toEqual(ids(5, 0, 1, 2, 3, 4));
    const one = logs[2];
    if (!one) throw new Error("missing log");
    expect(page.productionLogs[3]).toEqual(await readLog(p.co, one.id));
    const noBody = await api(p.co.key, `${BASE}/filters`, { method: "POST" });
    expect(noBody.status).toBe(200);
    expect(idsOf((await noBody.json()) as LogPage)).toEqual(ids(5, 0, 1, 2, 3, 4));
  });

  it("filters by machines: include, exclude and fuzzy search", async () => {
    const { p, ids } = await dataset();
    expect(idsOf(await filter(p.co, { machines: { include: [p.m2.id] } }))).toEqual(ids(2, 3));
    expect(idsOf(await filter(p.co, { machines: { exclude: [p.m2.id] } }))).toEqual(
      ids(5, 0, 1, 4),
    );
    // "linea" finds "Prensa Línea 1" (accent- and case-insensitive).
    expect(idsOf(await filter(p.co, { machines: { search: "LINEA" } }))).toEqual(ids(5, 0, 1, 4));
    expect((await filter(p.co, { machines: { search: "nothing" } })).totalCount).toBe(0);
  });

  it("filters by skus: include, exclude and fuzzy search on code or name", async () => {
    const { p, ids } = await dataset();
    expect(idsOf(await filter(p.co, { skus: { include: [p.b.id] } }))).toEqual(ids(2, 4));
    expect(idsOf(await filter(p.co, { skus: { exclude: [p.b.id] } }))).toEqual(ids(5, 0, 1, 3));
    expect(idsOf(await filter(p.co, { skus: { search: "beta" } }))).toEqual(ids(2, 4));
    expect(idsOf(await filter(p.co, { skus: { search: "p-a" } }))).toEqual(ids(5, 0, 1, 3));
  });

  it("filters by start and end with after, before, between and equal", async () => {
    const { p, ids, at } = await dataset();
    expect(idsOf(await filter(p.co, { start: { after: at(3, 6) } }))).toEqual(ids(3, 4));
    expect(idsOf(await filter(p.co, { start: { before: at(2, 8) } }))).toEqual(ids(5, 0));
    expect(
      idsOf(await filter(p.co, { start: { between: { start: at(2, 8), end: at(4, 6) } } })),
    ).toEqual(ids(1, 2)); // half-open: the log starting at `end` is out
    expect(idsOf(await filter(p.co, { start: { equal: at(2, 6) } }))).toEqual(ids(0));
    expect(idsOf(await filter(p.co, { end: { equal: at(4, 10) } }))).toEqual(ids(3));
    expect(idsOf(await filter(p.co, { end: { after: at(4, 9), before: at(5, 7) } }))).toEqual(
      ids(3),
    );
    const bad = await expect422(
      await api(p.co.key, `${BASE}/filters`, {
        method: "POST",
        json: { start: { between: { start: at(4, 6), end: at(2, 6) } } },
      }),
    );
    expect(bad.detail[0]?.loc).toEqual(["body", "start", "between", "end"]);
  });

  it("filters by count, isReviewed and type", async () => {
    const { p, ids } = await dataset();
    expect(idsOf(await filter(p.co, { count: { greaterThanOrEqual: 30 } }))).toEqual(ids(2, 3, 4));
    expect(idsOf(await filter(p.co, { count: { greaterThan: 0, lessThan: 30 } }))).toEqual(
      ids(0, 1),
    );
    expect(idsOf(await filter(p.co, { count: { equal: 0 } }))).toEqual(ids(5));
    expect(idsOf(await filter(p.co, { count: { notEqual: 0, lessThanOrEqual: 20 } }))).toEqual(
      ids(0, 1),
    );
    expect(idsOf(await filter(p.co, { isReviewed: true }))).toEqual(ids(1, 3));
    expect(idsOf(await filter(p.co, { isReviewed: false }))).toEqual(ids(5, 0, 2, 4));
    expect(idsOf(await filter(p.co, { type: "total" }))).toEqual(ids(5, 0, 3, 4));
    expect(idsOf(await filter(p.co, { type: "defects" }))).toEqual(ids(1));
    expect(idsOf(await filter(p.co, { type: null, isReviewed: null, count: null }))).toHaveLength(
      6,
    );
  });

  it("combines filters with AND", async () => {
    const { p, ids, at } = await dataset();
    expect(
      idsOf(
        await filter(p.co, {
          machines: { search: "línea" },
          skus: { exclude: [p.b.id] },
          start: { after: at(1, 23) },
          type: "total",
          isReviewed: false,
        }),
      ),
    ).toEqual(ids(0));
    expect(
      idsOf(
        await filter(p.co, {
          machines: { include: [p.m2.id] },
          count: { greaterThan: 35 },
          isReviewed: true,
        }),
      ),
    ).toEqual(ids(3));
  });

  it("pages by start then id, with totals and an empty page past the last", async () => {
    const { p, ids } = await dataset();
    // Two more logs at the same start: ties are ordered by id.
    const twins = await createLogs(p.co, [item(p, 20), item(p, 20)]);
    const twinIds = twins.map((l) => l.id).sort();
    const first = await filter(p.co, { limit: 4 });
    expect(first).toMatchObject({ totalCount: 8, totalPages: 2, currentPage: 1 });
    expect(idsOf(first)).toEqual([...ids(5, 0, 1), twinIds[0]]);
    const second = await filter(p.co, { page: 2, limit: 4 });
    expect(idsOf(second)).toEqual([twinIds[1], ...ids(2, 3, 4)]);
    const third = await filter(p.co, { page: 3, limit: 4 });
    expect(third).toMatchObject({ totalCount: 8, totalPages: 2, currentPage: 3 });
    expect(third.productionLogs).toEqual([]);
    await expect422(
      await api(p.co.key, `${BASE}/filters`, { method: "POST", json: { limit: 101 } }),
    );
    await expect422(await api(p.co.key, `${BASE}/filters`, { method: "POST", json: { page: 0 } }));
    await expect422(
      await api(p.co.key, `${BASE}/filters`, { method: "POST", json: { sort: "x" } }),
    );
  });
});

describe("the running-shift rule", () => {
  /** HH:MM in UTC of an instant. */
  const clock = (ms: number) => new Date(ms).toISOString().slice(11, 16);

  /**
   * A UTC company whose 24-hour shift started about 3 hours ago on m1 only, so
   * that m1's running instance is [now - 3h, now + 21h) (to the minute).
   */
  async function runningPlant() {
    const p = await plant({ timezone: "UTC" });
    const now = Date.now();
    const startTime = clock(now - 3 * HOUR);
    return { p, now, startTime };
  }

  const span = (p: Plant, from: number, to: number, extra: Record<string, unknown> = {}) => ({
    ...item(p, 7),
    start: new Date(from).toISOString(),
    end: new Date(to).toISOString(),
    ...extra,
  });

  it("refuses a create that overlaps the machine's running shift, pointing to the realtime endpoint", async () => {
    const { p, now, startTime } = await runningPlant();
    await defineShifts(p.co.id, [
      { name: "All day", startTime, endTime: startTime, machineIds: [p.m1.id] },
    ]);
    const inside = await expect422(
      await post(p.co, [
        span(p, now - 30 * HOUR, now - 28 * HOUR),
        span(p, now - 2 * HOUR, now - HOUR),
      ]),
    );
    expect(inside.detail).toHaveLength(1);
    expect(inside.detail[0]?.loc).toEqual(["body", 1]);
    expect(inside.detail[0]?.type).toBe("running_shift");
    expect(inside.detail[0]?.msg).toContain("POST /v1/realtime/{machine_id}/sku");
    expect(inside.detail[0]?.msg).toContain(`/v1/realtime/${p.m1.id}/sku`);
    // Straddling the instance's start, or lying later in it, overlaps it too.
    await expect422(await post(p.co, [span(p, now - 4 * HOUR, now - 2 * HOUR)]));
    await expect422(await post(p.co, [span(p, now + HOUR, now + 2 * HOUR)]));
    expect((await filter(p.co, {})).totalCount).toBe(0);

    // The previous instance, and a machine the shift does not apply to, are fine.
    const ok = await createLogs(p.co, [
      span(p, now - 26 * HOUR, now - 25 * HOUR),
      span(p, now - 2 * HOUR, now - HOUR, { machine: { id: p.m2.id }, nominalSpeed: 4 }),
    ]);
    expect(ok[0]?.shift?.name).toBe("All day");
    expect(ok[1]?.shift).toBeNull();

    // PATCH moving a log into the running shift is refused the same way.
    const moved = await expect422(
      await patchLog(p.co, ok[0]?.id ?? "", {
        start: new Date(now - HOUR).toISOString(),
        end: new Date(now - 30 * MIN).toISOString(),
      }),
    );
    expect(moved.detail[0]?.loc).toEqual(["body"]);
    expect(moved.detail[0]?.msg).toContain("POST /v1/realtime/{machine_id}/sku");
    const toM1 = await expect422(
      await patchLog(p.co, ok[1]?.id ?? "", { machine: { id: p.m1.id } }),
    );
    expect(toM1.detail[0]?.type).toBe("running_shift");
    expect((await readLog(p.co, ok[1]?.id ?? "")).machineId).toBe(p.m2.id);
  });

  it("refuses a PATCH that changes a log already inside the running shift, but allows reviewing it", async () => {
    const { p, now, startTime } = await runningPlant();
    // Written before the shift existed: now inside m1's running instance.
    const log = await createLog(p.co, span(p, now - 2 * HOUR, now - HOUR));
    await defineShifts(p.co.id, [{ name: "All day", startTime, endTime: startTime }]);
    const changed = await expect422(await patchLog(p.co, log.id, { count: 999 }));
    expect(changed.detail[0]?.msg).toContain("POST /v1/realtime/{machine_id}/sku");
    // Moving it out of the running shift changes the running shift too.
    await expect422(
      await patchLog(p.co, log.id, {
        start: new Date(now - 40 * HOUR).toISOString(),
        end: new Date(now - 39 * HOUR).toISOString(),
      }),
    );
    expect(
      (
        await patchLog(p.co, log.id, {
          isReviewed: true,
          operator: { firstName: "Ana", lastName: "Sanz" },
          workOrder: "WO-7",
        })
      ).status,
    ).toBe(204);
    const after = await readLog(p.co, log.id);
    expect(after).toMatchObject({ count: 120, isReviewed: true, workOrder: { name: "WO-7" } });
    // DELETE stays possible (a wrong log can always be removed).
    expect((await deleteLog(p.co, log.id)).status).toBe(204);
  });
  it("refuses a log that reaches into a future shift, naming the rule; ended shifts are fine", async () => {
    const p = await plant({ timezone: "UTC" });
    const now = Date.now();
    // A 2-hour shift on m1 starting in about 5 hours (it also ran yesterday at that time).
    await defineShifts(p.co.id, [
      {
        name: "Late",
        startTime: clock(now + 5 * HOUR),
        endTime: clock(now + 7 * HOUR),
        machineIds: [p.m1.id],
      },
    ]);
    const next = Math.floor((now + 5 * HOUR) / MIN) * MIN;
    const DAY = 24 * HOUR;
    const body = await expect422(
      await post(p.co, [
        span(p, now - HOUR, now - 30 * MIN),
        span(p, next + 30 * MIN, next + HOUR),
        span(p, now - HOUR, next + MIN),
        span(p, now + 40 * DAY, now + 41 * DAY),
      ]),
    );
    expect(body.detail.map((d) => [d.loc, d.type])).toEqual([
      [["body", 1], "future_shift"],
      [["body", 2], "future_shift"],
      [["body", 3], "future_shift"],
    ]);
    expect(body.detail[0]?.msg).toContain("production logs are only for shifts that have ended");
    expect(body.detail[0]?.msg).toContain(new Date(next).toISOString());
    expect((await filter(p.co, {})).totalCount).toBe(0);

    // Yesterday's instance has ended; m2 runs no shift.
    const [past, other] = await createLogs(p.co, [
      span(p, next - DAY + 10 * MIN, next - DAY + 20 * MIN),
      span(p, next + 30 * MIN, next + HOUR, { machine: { id: p.m2.id }, nominalSpeed: 4 }),
    ]);
    expect(past?.shift?.name).toBe("Late");
    // PATCH: a new start and end, a new end alone, or a machine that runs the shift.
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const [id, change] of [
      [past?.id, { start: iso(next + 10 * MIN), end: iso(next + 20 * MIN) }],
      [past?.id, { end: iso(next + 10 * MIN) }],
      [other?.id, { machine: { id: p.m1.id } }],
    ] as const) {
      const refused = await expect422(await patchLog(p.co, id ?? "", change));
      expect(refused.detail.map((d) => [d.loc, d.type])).toEqual([[["body"], "future_shift"]]);
    }
    expect(await readLog(p.co, past?.id ?? "")).toMatchObject({
      start: iso(next - DAY + 10 * MIN),
      end: iso(next - DAY + 20 * MIN),
    });
    expect((await readLog(p.co, other?.id ?? "")).machineId).toBe(p.m2.id);
  });

  it("checks the rule in the statement that writes: a stored instance the plan misses stops it, and nothing is created", async () => {
    const p = await plant({ timezone: "UTC" });
    const now = Date.now();
    const [def] = await defineShifts(p.co.id, [
      { name: "Other line", startTime: "00:00", endTime: "00:00", machineIds: [p.m2.id] },
    ]);
    // m1's running instance as another request stored it, under a plan in which the
    // definition applied to m1 (the plan this call reads does not show it).
    const db = await shardD1(p.co.id);
    await db
      .prepare(
        `INSERT INTO shift_instances (company_id, shift_definition_id, machine_id, start, "end")
         VALUES (?, ?, ?, ?, ?)`,
      )
      .bind(p.co.id, def?.id, p.m1.id, now - HOUR, now + HOUR)
      .run();
    const named = { operator: { firstName: "Nova", lastName: "Ray" }, workOrder: "WO-race" };
    const body = await expect422(
      await post(p.co, [span(p, now - 30 * MIN, now - 20 * MIN, named)]),
    );
    expect(body.detail).toEqual([
      expect.objectContaining({ loc: ["body", 0], type: "running_shift" }),
    ]);
    const count = async (sql: string) =>
      (await db.prepare(sql).bind(p.co.id).first<{ n: number }>())?.n;
    expect((await filter(p.co, {})).totalCount).toBe(0);
    expect(
      await count(
        "SELECT count(*) AS n FROM operators WHERE company_id = ? AND first_name = 'Nova'",
      ),
    ).toBe(0);
    expect(
      await count(
        "SELECT count(*) AS n FROM work_orders WHERE company_id = ? AND name = 'WO-race'",
      ),
    ).toBe(0);

    const earlier = await createLog(p.co, span(p, now - 5 * HOUR, now - 4 * HOUR));
    const moved = await expect422(
      await patchLog(p.co, earlier.id, {
        start: new Date(now - 30 * MIN).toISOString(),
        end: new Date(now - 20 * MIN).toISOString(),
        operator: { firstName: "Nova", lastName: "Ray" },
      }),
    );
    expect(moved.detail[0]?.type).toBe("running_shift");
    expect((await readLog(p.co, earlier.id)).start).toBe(new Date(now - 5 * HOUR).toISOString());
    expect(
      await count(
        "SELECT count(*) AS n FROM operators WHERE company_id = ? AND first_name = 'Nova'",
      ),
    ).toBe(0);
  });
});

describe("production logs and the metrics report", () => {
  it("a created log changes the report and deleting it changes it back", async () => {
    const p = await plant();
    await defineShifts(p.co.id, [{ name: "Morning", startTime: "06:00", endTime: "14:00" }]);
    // The machine was in service on that day: its shift is a report row with nothing recorded
    // before the log and after its deletion (docs/bounded-work.md, "Where instances exist").
    await inServiceSince(p.co.id, [p.m1.id]);
    const reportRow = async () => {
      const res = await api(p.co.key, "/v1/reports/metrics", {
        method: "POST",
        json: {
          machines: { include: [p.m1.id] },
          startDate: { equal: "2026-03-02T05:00:00Z" },
        },
      });
      expect(res.status, await res.clone().text()).toBe(200);
      const page = (await res.json()) as Api["MetricsReportPage"];
      expect(page.metrics).toHaveLength(1);
      const row = page.metrics[0];
      if (!row) throw new Error("no row");
      return row;
    };
    const before = await reportRow();
    expect(before.shiftIndicators.noDataTime).toBeCloseTo(480, 6);
    expect(before.productionMetrics.effectiveness).toBeCloseTo(0, 6);

    // 06:00-14:00 local, 5,400 items at the pair's 15 units/min: 360 ideal minutes of 480.
    const log = await createLog(p.co, {
      ...item(p, 7),
      start: "2026-03-02T06:00:00+01:00",
      end: "2026-03-02T14:00:00+01:00",
      count: 5400,
    });
    const during = await reportRow();
    expect(during.shiftIndicators.noDataTime).toBeCloseTo(0, 6);
    expect(during.shiftIndicators.availability).toBeCloseTo(1, 6);
    expect(during.productionMetrics.effectiveness).toBeCloseTo(360 / 480, 6);
    expect(during.productionMetrics.minutesLostByLowSpeed).toBeCloseTo(120, 6);

    expect((await patchLog(p.co, log.id, { count: 7200 })).status).toBe(204);
    expect((await reportRow()).productionMetrics.effectiveness).toBeCloseTo(1, 6);

    expect((await deleteLog(p.co, log.id)).status).toBe(204);
    const after = await reportRow();
    expect(after.shiftIndicators).toEqual(before.shiftIndicators);
    expect(after.productionMetrics).toEqual(before.productionMetrics);
  });
});

describe("production logs across companies", () => {
  it("never lists or resolves another company's records", async () => {
    const mine = await plant();
    const theirs = await plant();
    const foreign = await createLog(theirs.co, item(theirs, 7));
    await createLog(mine.co, item(mine, 7));
    const page = await filter(mine.co, {});
    expect(page.totalCount).toBe(1);
    expect(page.productionLogs.map((l) => l.id)).not.toContain(foreign.id);
    expect((await filter(mine.co, { machines: { include: [theirs.m1.id] } })).totalCount).toBe(0);
    // Their machine and SKU are unknown here.
    const body = await expect422(
      await post(mine.co, [
        item(mine, 8, { machine: { id: theirs.m1.id } }),
        item(mine, 9, { sku: { id: theirs.a.id } }),
      ]),
    );
    expect(body.detail.map((d) => d.loc)).toEqual([
      ["body", 0, "machine"],
      ["body", 1, "sku"],
    ]);
    const [own] = (await filter(mine.co, {})).productionLogs;
    const patched = await expect422(
      await patchLog(mine.co, own?.id ?? "", { machine: { id: theirs.m1.id } }),
    );
    expect(patched.detail[0]?.loc).toEqual(["body", "machine"]);
  });
});

const PLACEHOLDER = "00000000-0000-4000-8000-000000000000";

describeSecurity("Production logs", {
  placeholderId: PLACEHOLDER,
  routes: [
    {
      method: "POST",
      path: BASE,
      scope: "production_logs.create",
      body: [
        {
          start: "2026-03-02T06:00:00Z",
          end: "2026-03-02T07:00:00Z",
          count: 1,
          nominalSpeed: 1,
          machine: { id: 1 },
          sku: { id: PLACEHOLDER },
        },
      ],
    },
    { method: "POST", path: `${BASE}/filters`, scope: "production_logs.read", body: {} },
    { method: "GET", path: `${BASE}/{id}`, scope: "production_logs.read" },
    { method: "PATCH", path: `${BASE}/{id}`, scope: "production_logs.update", body: { count: 1 } },
    { method: "DELETE", path: `${BASE}/{id}`, scope: "production_logs.delete" },
  ],
  createForeignId: async (owner) => {
    const [machine] = await createMachines(owner.id, [{ name: "Owner press" }]);
    const [sku] = await createSkus(owner, [{ sku: "OWN" }]);
    const [log] = await createLogs(owner, [
      {
        start: "2026-03-02T06:00:00Z",
        end: "2026-03-02T07:00:00Z",
        count: 42,
        nominalSpeed: 3,
        machine: { id: machine?.id },
        sku: { id: sku?.id },
      },
    ]);
    if (!log) throw new Error("no log");
    return log.id;
  },
  checkOwnerRecord: async (owner, id) => {
    const log = await readLog(owner, String(id));
    expect(log.count).toBe(42);
    expect(log.deletedAt).toBeNull();
  },
});
