/**
 * The downtime report through HTTP: its rows checked against the stops report's rows
 * summed by the same keys, as a user would check them.
 */

import { describe, expect, it } from "vitest";
import type { Api } from "../fixtures/api-types";
import {
  api,
  apiPost,
  createCompany,
  createMachines,
  operatorJson,
  type TestCompany,
} from "../harness";
import { describeSecurity } from "../security";

type DowntimeRow = Api["DowntimeReportRow"];
type StopsRow = Api["StopsReportRow"];

async function allStops(co: TestCompany, body: Record<string, unknown>): Promise<StopsRow[]> {
  const out: StopsRow[] = [];
  for (let page = 1; ; page += 1) {
    const p = await apiPost<{ totalPages: number; stops: StopsRow[] }>(
      co.key,
      "/v1/reports/stops",
      {
        ...body,
        page,
        limit: 100,
      },
    );
    out.push(...p.stops);
    if (page >= p.totalPages) return out;
  }
}

const stop = (start: string, end: string | null, extra: Record<string, unknown> = {}) => ({
  startTime: start,
  ...(end === null ? {} : { endTime: end }),
  isProgrammed: false,
  ...extra,
});

/** Rome company, two machines, a Day shift, stops over two days, three of them classified. */
async function scenario() {
  const co = await createCompany({ timezone: "Europe/Rome" });
  const [press, lathe] = (await createMachines(co.id, [{ name: "Press" }, { name: "Lathe" }])).map(
    (m) => m.id,
  ) as [number, number];
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Day", startTime: "06:00", endTime: "18:00" },
  ]);
  const pressStops = await operatorJson<{ id: number }[]>("POST", `/machines/${press}/stops`, [
    stop("2026-03-02T07:00:00+01:00", "2026-03-02T07:30:00+01:00", { isProgrammed: true }),
    stop("2026-03-02T09:00:00+01:00", "2026-03-02T09:45:00+01:00"),
    // 00:30 local on the 3rd: still the 2nd in UTC, outside every shift.
    stop("2026-03-03T00:30:00+01:00", "2026-03-03T00:40:00+01:00"),
    stop("2026-03-03T10:00:00+01:00", "2026-03-03T10:05:00+01:00", { isIncludedInStops: false }),
    stop("2026-03-03T11:00:00+01:00", "2026-03-03T11:20:00+01:00"),
  ]);
  const latheStops = await operatorJson<{ id: number }[]>("POST", `/machines/${lathe}/stops`, [
    stop("2026-03-02T09:00:00+01:00", "2026-03-02T10:00:00+01:00"),
    stop("2026-03-03T09:00:00+01:00", "2026-03-03T09:12:00+01:00"),
  ]);
  const classify = (id: number | undefined, name: string) =>
    operatorJson("PUT", `/stops/${id}/classification`, { generalCause: { name } });
  await classify(pressStops[1]?.id, "Jam");
  await classify(latheStops[0]?.id, "Jam");
  await classify(pressStops[4]?.id, "Tooling");
  return { co, press, lathe };
}

const window = {
  startDate: { between: { start: "2026-03-01T00:00:00Z", end: "2026-03-04T00:00:00Z" } },
};

describe("POST /v1/reports/downtime", () => {
  it("ranks general causes by the stops report's minutes, with shares", async () => {
    const { co } = await scenario();
    const page = await apiPost<{ totalCount: number; downtime: DowntimeRow[] }>(
      co.key,
      "/v1/reports/downtime",
      window,
    );
    // The stops report's rows summed by general cause, independently.
    const expected = new Map<string | null, { stops: number; minutes: number }>();
    for (const r of await allStops(co, window)) {
      const key = r.classification.generalCause.name;
      const e = expected.get(key) ?? { stops: 0, minutes: 0 };
      e.stops += 1;
      e.minutes += r.stop.durationInMinutes;
      expected.set(key, e);
    }
    expect(page.totalCount).toBe(expected.size);
    const total = [...expected.values()].reduce((s, e) => s + e.minutes, 0);
    expect(page.downtime.map((r) => [r.generalCause?.name ?? null, r.stops, r.minutes])).toEqual(
      [...expected.entries()]
        .sort((a, b) => b[1].minutes - a[1].minutes)
        .map(([k, e]) => [k, e.stops, e.minutes]),
    );
    // Jam 105 min of 177: press 45 + lathe 60; then unclassified 30 + 10 + 12 = 52; Tooling 20.
    expect(page.downtime[0]).toMatchObject({ stops: 2, minutes: 105 });
    expect(page.downtime[0]?.generalCause).toMatchObject({ name: "Jam" });
    expect(page.downtime[0]?.share).toBeCloseTo(105 / total, 12);
    expect(page.downtime[1]?.generalCause).toBeNull();
    expect(page.downtime[1]?.cumulativeShare).toBeCloseTo(157 / total, 12);
    expect(page.downtime.at(-1)?.cumulativeShare).toBeCloseTo(1, 12);
    expect(Object.keys(page.downtime[0] ?? {}).sort()).toEqual(
      ["cumulativeShare", "generalCause", "minutes", "share", "stops"].sort(),
    );
  });

  it("groups by machine, shift and local day in order, and filters isProgrammed", async () => {
    const { co, press, lathe } = await scenario();
    const page = await apiPost<{ downtime: DowntimeRow[] }>(co.key, "/v1/reports/downtime", {
      ...window,
      isProgrammed: false,
      groupBy: ["machine", "shift", "day"],
      limit: 100,
    });
    const rows = page.downtime.map((r) => [r.machine?.id, r.shift, r.day, r.stops, r.minutes]);
    expect(rows).toEqual([
      [lathe, "Day", "2026-03-02", 1, 60],
      [press, "Day", "2026-03-02", 1, 45],
      [press, "Day", "2026-03-03", 1, 20],
      [lathe, "Day", "2026-03-03", 1, 12],
      // Local day of 00:30 +01:00 is the 3rd although the UTC date is the 2nd.
      [press, null, "2026-03-03", 1, 10],
    ]);
    // The stops report says the same about the shift of each stop.
    const stops = await allStops(co, window);
    const night = stops.find((r) => r.stop.startTime === "2026-03-02T23:30:00.000Z");
    expect(night?.shift).toBeNull();
  });

  it("pages the ranking and refuses an unknown or repeated key with a 422", async () => {
    const { co } = await scenario();
    const second = await apiPost<{
      totalCount: number;
      totalPages: number;
      downtime: DowntimeRow[];
    }>(co.key, "/v1/reports/downtime", { ...window, limit: 1, page: 2 });
    expect(second).toMatchObject({ totalCount: 3, totalPages: 3, currentPage: 2 });
    expect(second.downtime).toHaveLength(1);
    expect(second.downtime[0]?.generalCause).toBeNull();
    for (const groupBy of [["cause"], ["machine", "machine"], []]) {
      const res = await api(co.key, "/v1/reports/downtime", {
        method: "POST",
        json: { groupBy },
      });
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: unknown[] }[] };
      expect(body.detail[0]?.loc.slice(0, 2)).toEqual(["body", "groupBy"]);
    }
  });

  it("counts an open stop up to now", async () => {
    const co = await createCompany();
    const [press] = (await createMachines(co.id, [{ name: "Press" }])).map((m) => m.id);
    const start = Date.now() - 2 * 3_600_000;
    await operatorJson("POST", `/machines/${press}/stops`, [
      stop(new Date(start).toISOString(), null),
      stop(new Date(start).toISOString(), new Date(start + 600_000).toISOString()),
    ]);
    const before = Date.now();
    const page = await apiPost<{ downtime: DowntimeRow[] }>(co.key, "/v1/reports/downtime", {
      groupBy: ["machine"],
    });
    const after = Date.now();
    expect(page.downtime).toHaveLength(1);
    const [row] = page.downtime;
    expect(row?.stops).toBe(2);
    // 10 minutes of the closed stop, and the open one from its start to the report's now.
    expect(row?.minutes).toBeGreaterThanOrEqual(10 + (before - start) / 60_000);
    expect(row?.minutes).toBeLessThanOrEqual(10 + (after - start) / 60_000);
  });

  it("never shows another company's stops", async () => {
    const { co } = await scenario();
    const other = await createCompany();
    const page = await apiPost<{ totalCount: number }>(other.key, "/v1/reports/downtime", window);
    expect(page.totalCount).toBe(0);
    const mine = await apiPost<{ totalCount: number }>(co.key, "/v1/reports/downtime", window);
    expect(mine.totalCount).toBe(3);
  });
});

describeSecurity("Downtime and KPI reports", {
  routes: [
    { method: "POST", path: "/v1/reports/downtime", scope: "reports.read", body: {} },
    { method: "POST", path: "/v1/reports/kpis", scope: "reports.read", body: {} },
  ],
  placeholderId: 1,
});
