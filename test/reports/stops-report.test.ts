/**
 * The stops report through HTTP, with stops, classifications and shifts made
 * through the operator API.
 */

import { describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import type { Api } from "../fixtures/api-types";
import {
  api,
  call,
  createCompany,
  createKey,
  createMachines,
  operator,
  operatorJson,
  type TestCompany,
} from "../harness";

type StopsRow = Api["StopsReportRow"];

type StopsPage = Api["StopsReportPage"];

async function report(key: string, body: unknown = {}): Promise<StopsPage> {
  const res = await api(key, "/v1/reports/stops", { method: "POST", json: body });
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as StopsPage;
}

async function addStops(machineId: number, items: Record<string, unknown>[]): Promise<number[]> {
  const created = await operatorJson<{ id: number }[]>(
    "POST",
    `/machines/${machineId}/stops`,
    items,
  );
  return created.map((s) => s.id);
}

const stop = (start: string, end: string | null, extra: Record<string, unknown> = {}) => ({
  startTime: start,
  ...(end === null ? {} : { endTime: end }),
  isProgrammed: false,
  ...extra,
});

/** A company (Rome) with two machines, a day shift and a few stops on 2026-03-02. */
async function scenario(): Promise<{
  co: TestCompany;
  press: number;
  lathe: number;
  ids: { early: number; jam: number; night: number; hidden: number; lathe: number; same: number };
}> {
  const co = await createCompany();
  const [press, lathe] = (
    await createMachines(co.id, [{ name: "Prensa Número 1" }, { name: "Lathe" }])
  ).map((m) => m.id) as [number, number];
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Day", startTime: "06:00", endTime: "18:00" },
  ]);
  const [early, jam, night, hidden] = (await addStops(press, [
    stop("2026-03-02T07:00:00+01:00", "2026-03-02T07:30:00+01:00", { isProgrammed: true }),
    stop("2026-03-02T09:00:00+01:00", "2026-03-02T09:45:00+01:00"),
    // 03:00: outside every shift instance.
    stop("2026-03-03T03:00:00+01:00", "2026-03-03T03:10:00+01:00"),
    stop("2026-03-02T10:00:00+01:00", "2026-03-02T10:05:00+01:00", { isIncludedInStops: false }),
  ])) as [number, number, number, number];
  const [latheStop, same] = (await addStops(lathe, [
    stop("2026-03-02T09:00:00+01:00", "2026-03-02T09:20:00+01:00", {
      isIncludedInAvailability: false,
    }),
    stop("2026-03-02T09:00:00+01:00", "2026-03-02T09:10:00+01:00", { isManual: true }),
  ])) as [number, number];
  return { co, press, lathe, ids: { early, jam, night, hidden, lathe: latheStop, same } };
}

describe("POST /v1/reports/stops", () => {
  it("returns the row shape of the spec, ordered by start then id, without hidden stops", async () => {
    const { co, press, lathe, ids } = await scenario();
    await operatorJson("PUT", `/stops/${ids.jam}/classification`, {
      description: "Belt jam",
      component: { name: "Feeder" },
      specificCause: { name: "Jammed belt" },
      generalCause: { name: "Mechanical" },
    });
    const page = await report(co.key);
    expect(page).toMatchObject({ totalCount: 5, totalPages: 1, currentPage: 1 });
    expect(page.stops.map((r) => r.stop.id)).toEqual([
      ids.early,
      ids.jam,
      ids.lathe,
      ids.same,
      ids.night,
    ]);
    const [early, jam, , same, night] = page.stops as [
      StopsRow,
      StopsRow,
      StopsRow,
      StopsRow,
      StopsRow,
    ];
    expect(early.company).toEqual({ id: co.id, name: co.name });
    expect(early.machine).toEqual({ id: press, name: "Prensa Número 1" });
    expect(early.classification).toEqual({
      id: null,
      createdAt: null,
      updatedAt: null,
      description: null,
      component: { id: null, name: null },
      specificCause: { id: null, name: null },
      generalCause: { id: null, name: null },
    });
    expect(early.stop).toMatchObject({
      id: ids.early,
      startTime: "2026-03-02T06:00:00.000Z",
      endTime: "2026-03-02T06:30:00.000Z",
      isProgrammed: true,
      isIncludedInAvailability: true,
      isIncludedInStops: true,
      isManual: false,
      deletedAt: null,
      durationInMinutes: 30,
    });
    expect(early.stop.createdAt).toMatch(/Z$/);
    expect(early.shift).toMatchObject({
      name: "Day",
      startTime: "2026-03-02T05:00:00.000Z",
      endTime: "2026-03-02T17:00:00.000Z",
      isActive: false,
    });
    expect(jam.shift?.id).toBe(early.shift?.id);
    expect(jam.classification).toMatchObject({
      description: "Belt jam",
      component: { name: "Feeder" },
      specificCause: { name: "Jammed belt" },
      generalCause: { name: "Mechanical" },
    });
    expect(jam.classification.id).toEqual(expect.any(Number));
    expect(jam.classification.component.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(jam.stop.durationInMinutes).toBe(45);
    // Each machine has its own instance of the same definition.
    expect(same.machine.id).toBe(lathe);
    expect(same.shift?.id).not.toBe(early.shift?.id);
    expect(same.stop.isManual).toBe(true);
    // No shift runs at 03:00.
    expect(night.shift).toBeNull();
  });

  it("runs an open stop's duration to now, and shows edits, deletions and flags at once", async () => {
    const { co, press, ids } = await scenario();
    const start = Date.now() - 90 * 60_000;
    const [open] = await addStops(press, [stop(new Date(start).toISOString(), null)]);
    const before = Date.now();
    const page = await report(co.key, { stopId: { include: [open] } });
    const after = Date.now();
    const row = page.stops[0] as StopsRow;
    expect(row.stop.endTime).toBeNull();
    expect(row.stop.durationInMinutes).toBeGreaterThanOrEqual((before - start) / 60_000 - 1e-6);
    expect(row.stop.durationInMinutes).toBeLessThanOrEqual((after - start) / 60_000 + 1e-6);

    await operator("PATCH", `/stops/${ids.jam}`, { endTime: "2026-03-02T10:00:00+01:00" });
    await operator("PATCH", `/stops/${ids.hidden}`, { isIncludedInStops: true });
    await operator("PATCH", `/stops/${ids.early}`, { isIncludedInStops: false });
    await operator("DELETE", `/stops/${ids.lathe}`);
    const next = await report(co.key, { stopId: { lessThan: open } });
    expect(next.stops.map((r) => r.stop.id)).toEqual([ids.jam, ids.same, ids.hidden, ids.night]);
    expect(next.stops[0]?.stop.durationInMinutes).toBe(60);

    await operator("DELETE", `/stops/${ids.jam}/classification`).then((r) =>
      expect(r.status).toBe(404),
    );
    await operatorJson("PUT", `/stops/${ids.jam}/classification`, { component: { name: "Motor" } });
    expect(
      (await report(co.key, { stopId: { equal: ids.jam } })).stops[0]?.classification.component
        .name,
    ).toBe("Motor");
    await operator("DELETE", `/stops/${ids.jam}/classification`);
    expect(
      (await report(co.key, { stopId: { equal: ids.jam } })).stops[0]?.classification.id,
    ).toBeNull();
  });

  it("filters by machines: fuzzy name, include, exclude", async () => {
    const { co, press, lathe } = await scenario();
    const machinesOf = async (machines: unknown) => [
      ...new Set((await report(co.key, { machines })).stops.map((r) => r.machine.id)),
    ];
    expect(await machinesOf({ search: "NUMERO" })).toEqual([press]);
    expect(await machinesOf({ search: "lat" })).toEqual([lathe]);
    expect(await machinesOf({ search: "drill" })).toEqual([]);
    expect(await machinesOf({ include: [lathe] })).toEqual([lathe]);
    expect(await machinesOf({ exclude: [lathe] })).toEqual([press]);
    expect(await machinesOf({ search: "a", include: [press, lathe], exclude: [press] })).toEqual([
      lathe,
    ]);
  });

  it("filters by stopId: include, exclude and every comparison", async () => {
    const { co, ids } = await scenario();
    const idsOf = async (stopId: unknown) =>
      (await report(co.key, { stopId })).stops.map((r) => r.stop.id).sort((a, b) => a - b);
    const all = [ids.early, ids.jam, ids.night, ids.lathe, ids.same].sort((a, b) => a - b);
    expect(await idsOf({ include: [ids.jam, ids.night, ids.hidden] })).toEqual([
      ids.jam,
      ids.night,
    ]);
    expect(await idsOf({ exclude: [ids.jam] })).toEqual(all.filter((i) => i !== ids.jam));
    expect(await idsOf({ greaterThan: ids.night })).toEqual(all.filter((i) => i > ids.night));
    expect(await idsOf({ greaterThanOrEqual: ids.night })).toEqual(
      all.filter((i) => i >= ids.night),
    );
    expect(await idsOf({ lessThan: ids.night })).toEqual(all.filter((i) => i < ids.night));
    expect(await idsOf({ lessThanOrEqual: ids.night })).toEqual(all.filter((i) => i <= ids.night));
    expect(await idsOf({ equal: ids.lathe })).toEqual([ids.lathe]);
    expect(await idsOf({ notEqual: ids.lathe })).toEqual(all.filter((i) => i !== ids.lathe));
    expect(
      await idsOf({ greaterThan: ids.early, lessThan: ids.night, exclude: [ids.jam] }),
    ).toEqual([]);
  });

  it("filters by startDate and endDate with after, before, between and equal", async () => {
    const { co, press, ids } = await scenario();
    const [open] = await addStops(press, [stop("2026-03-02T12:00:00+01:00", null)]);
    const idsOf = async (body: Record<string, unknown>) =>
      (await report(co.key, body)).stops.map((r) => r.stop.id);
    // Starts (UTC): early 06:00, jam 08:00, lathe and same 08:00, open 11:00, night 02:00 next day.
    expect(await idsOf({ startDate: { after: "2026-03-02T08:00:00Z" } })).toEqual([
      open,
      ids.night,
    ]);
    expect(await idsOf({ startDate: { before: "2026-03-02T08:00:00Z" } })).toEqual([ids.early]);
    expect(
      await idsOf({
        startDate: { between: { start: "2026-03-02T06:00:00Z", end: "2026-03-02T08:00:00Z" } },
      }),
    ).toEqual([ids.early]); // half-open, [start, end): the stops starting at 08:00 are out
    expect(await idsOf({ startDate: { equal: "2026-03-02T08:00:00Z" } })).toEqual([
      ids.jam,
      ids.lathe,
      ids.same,
    ]);
    // Ends (UTC): early 06:30, jam 08:45, lathe 08:20, same 08:10, night 02:10; open has none.
    expect(await idsOf({ endDate: { after: "2026-03-02T08:20:00Z" } })).toEqual([
      ids.jam,
      ids.night,
    ]);
    expect(await idsOf({ endDate: { before: "2026-03-02T08:20:00Z" } })).toEqual([
      ids.early,
      ids.same,
    ]);
    expect(
      await idsOf({
        endDate: { between: { start: "2026-03-02T08:10:00Z", end: "2026-03-02T08:20:00Z" } },
      }),
    ).toEqual([ids.same]); // the lathe's, ending at 08:20, is out
    expect(await idsOf({ endDate: { equal: "2026-03-02T08:45:00Z" } })).toEqual([ids.jam]);
    expect(
      await idsOf({
        startDate: { after: "2026-03-02T07:00:00Z" },
        endDate: { before: "2026-03-02T08:15:00Z" },
      }),
    ).toEqual([ids.same]);
  });

  it("pages with page and limit", async () => {
    const { co, ids } = await scenario();
    const p2 = await report(co.key, { limit: 2, page: 2 });
    expect(p2).toMatchObject({ totalCount: 5, totalPages: 3, currentPage: 2 });
    expect(p2.stops.map((r) => r.stop.id)).toEqual([ids.lathe, ids.same]);
    const past = await report(co.key, { limit: 2, page: 4 });
    expect(past).toMatchObject({ totalCount: 5, totalPages: 3, currentPage: 4, stops: [] });
    for (const body of [
      { limit: 0 },
      { page: -1 },
      { stopId: { greaterThan: "1" } },
      { startDate: { equal: 5 } },
    ]) {
      const res = await api(co.key, "/v1/reports/stops", { method: "POST", json: body });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
  });

  it("never shows another company's stops, and needs reports.read", async () => {
    const a = await scenario();
    const b = await createCompany();
    const page = await report(b.key, {
      machines: { include: [a.press, a.lathe] },
      stopId: { include: Object.values(a.ids) },
    });
    expect(page).toMatchObject({ totalCount: 0, stops: [] });

    const key = await createKey(
      a.co.id,
      ALL_SCOPES.filter((s) => s !== "reports.read"),
    );
    const res = await api(key, "/v1/reports/stops", { method: "POST", json: {} });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({
      detail: "Not enough permissions. Missing scope: reports.read",
    });
    expect((await call("/v1/reports/stops", { method: "POST" })).status).toBe(401);
  });
});
