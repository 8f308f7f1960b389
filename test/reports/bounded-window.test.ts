/**
 * A report's work is bounded by what exists, not by the window asked for (issues 42 and 48,
 * docs/bounded-work.md, "Where instances exist", "Any range at once" and "The budget of a
 * request"): the 1970-2100 window counts and lists instances only from each machine's first
 * activity (creation, first production log or stop) to now, for the definitions the report
 * lists, storing only the page's instances and those a record touches; a
 * window that still holds more than `MAX_REPORT_INSTANCES` is a 422 naming the bound,
 * writing nothing, on every form of every report that covers shift instances (JSON, CSV,
 * MCP); a page of sparse instances reads around them, not the years between them.
 */
import { describe, expect, it } from "vitest";
import { MAX_REPORT_INSTANCES } from "../../src/reports/covered-instances";
import { MAX_DOWNTIME_STOPS } from "../../src/reports/downtime-report";
import { countStatements } from "../fixtures/d1-counter";
import { inServiceSince } from "../fixtures/machine-history";
import { connect } from "../fixtures/mcp-client";
import { insertProductionLogs } from "../fixtures/production-logs";
import {
  api,
  createCompany,
  createMachines,
  operatorJson,
  shardD1,
  type TestCompany,
} from "../harness";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SHIFT = 8 * HOUR;
const EVERYTHING = {
  startDate: { between: { start: "1970-01-01T00:00:00Z", end: "2100-01-01T00:00:00Z" } },
};

/** Three 8-hour shifts every day (UTC). */
async function threeShifts(co: TestCompany) {
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: "Night", startTime: "00:00", endTime: "08:00" },
    { name: "Day", startTime: "08:00", endTime: "16:00" },
    { name: "Evening", startTime: "16:00", endTime: "00:00" },
  ]);
}

/** The company's stored instances: how many, the earliest and the latest start. */
async function stored(companyId: number) {
  const d1 = await shardD1(companyId);
  return (await d1
    .prepare(
      "SELECT count(*) AS n, min(start) AS first, max(start) AS last FROM shift_instances " +
        "WHERE machine_id IN (SELECT id FROM machines WHERE company_id = ?1)",
    )
    .bind(companyId)
    .first()) as { n: number; first: number | null; last: number | null };
}

async function post(co: TestCompany, path: string, json: unknown, accept?: string) {
  return api(co.key, path, {
    method: "POST",
    json,
    headers: accept ? { accept } : undefined,
  });
}

describe("reports over 1970-2100", () => {
  it("count and list instances only from each machine's first activity to now, storing few", async () => {
    const co = await createCompany({ timezone: "UTC" });
    await threeShifts(co);
    const [a, b, c] = await createMachines(co.id, [{ name: "A" }, { name: "B" }, { name: "C" }]);
    if (!a || !b || !c) throw new Error("no machines");
    const slot = Math.floor(Date.now() / SHIFT) * SHIFT;
    // A's first record is a log 20 days ago, B's a stop 10 days ago; C has none (created now).
    await insertProductionLogs(co.id, [
      {
        machineId: a.id,
        start: slot - 20 * DAY + HOUR,
        end: slot - 20 * DAY + 2 * HOUR,
        count: 5,
        nominalSpeed: 1,
      },
    ]);
    await operatorJson("POST", `/machines/${b.id}/stops`, [
      {
        startTime: new Date(slot - 10 * DAY + 2 * HOUR).toISOString(),
        endTime: new Date(slot - 10 * DAY + 3 * HOUR).toISOString(),
        isProgrammed: false,
      },
    ]);
    const res = await post(co, "/v1/reports/metrics", { ...EVERYTHING, limit: 1 });
    expect(res.status, await res.clone().text()).toBe(200);
    const page = (await res.json()) as {
      totalCount: number;
      metrics: { shift: { startTime: string } }[];
    };
    // From the 8-hour instance holding the first record to the running one: A 20 days of
    // three shifts and the running one, B 10 days and the running one, C the running one.
    const expected = 20 * 3 + 1 + (10 * 3 + 1) + 1;
    expect(page.totalCount).toBe(expected);
    expect(page.metrics[0]?.shift.startTime).toBe(new Date(slot - 20 * DAY).toISOString());
    // Counted by calendar arithmetic, not stored: the report stored its page's instance (and
    // the machines' realtime objects the instance each runs now); none before a first
    // activity, none that has not started.
    const afterMetrics = await stored(co.id);
    expect(afterMetrics.n).toBeLessThanOrEqual(1 + 3);
    expect(afterMetrics.first).toBe(slot - 20 * DAY);
    expect(afterMetrics.last).toBeLessThanOrEqual(Date.now());
    // The KPI report covers the same instances, and stores only those a record may touch
    // (within two days of A's log and B's stop) besides the running ones: the others have
    // the figures of an empty instance, added by arithmetic.
    const kpis = await post(co, "/v1/reports/kpis", { ...EVERYTHING, groupBy: ["machine"] });
    expect(kpis.status, await kpis.clone().text()).toBe(200);
    const groups = (await kpis.json()) as { kpis: { instances: number }[] };
    expect(groups.kpis.map((g) => g.instances)).toEqual([61, 31, 1]);
    const d1 = await shardD1(co.id);
    const { results } = await d1
      .prepare(
        "SELECT machine_id AS machineId, start FROM shift_instances WHERE machine_id IN (?1, ?2, ?3)",
      )
      .bind(a.id, b.id, c.id)
      .all<{ machineId: number; start: number }>();
    const near = (t: number, record: number) => Math.abs(t - record) <= 3 * DAY;
    for (const r of results) {
      const running = r.start > Date.now() - SHIFT;
      const touched =
        (r.machineId === a.id && near(r.start, slot - 20 * DAY)) ||
        (r.machineId === b.id && near(r.start, slot - 10 * DAY));
      expect(running || touched, new Date(r.start).toISOString()).toBe(true);
    }
    expect(results.length).toBeLessThanOrEqual(2 * 3 * 4 + 3);
  });

  it("answer a company whose shifts are not counted at once, writing nothing", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Fleet 1" }]);
    if (!m) throw new Error("no machine");
    await inServiceSince(co.id, [m.id], "2000-01-01T00:00:00Z");
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "All day", startTime: "00:00", endTime: "00:00", isConsidered: false },
    ]);
    for (const path of ["/v1/reports/metrics", "/v1/reports/kpis"]) {
      const { response, counter } = await countStatements(
        new Request(`http://localhost${path}`, {
          method: "POST",
          headers: { "x-api-key": co.key, "content-type": "application/json" },
          body: JSON.stringify(EVERYTHING),
        }),
      );
      expect(response.status, path).toBe(200);
      expect(((await response.json()) as { totalCount: number }).totalCount).toBe(0);
      expect(
        counter.sent().filter((s) => /^\s*insert/i.test(s)),
        path,
      ).toEqual([]);
    }
    // At most the running instance, which the machine's realtime object takes (the shift it
    // is running now), counted or not.
    expect((await stored(co.id)).n).toBeLessThanOrEqual(1);
  });
});

describe("a window still above the bound", () => {
  async function bigPlant() {
    const co = await createCompany({ timezone: "UTC" });
    await threeShifts(co);
    const machines = await createMachines(
      co.id,
      Array.from({ length: 10 }, (_, i) => ({ name: `Press ${i + 1}` })),
    );
    // Ten machines on three shifts since 2000: about 290,000 instances to now.
    await inServiceSince(
      co.id,
      machines.map((m) => m.id),
      "2000-01-01T00:00:00Z",
    );
    return co;
  }

  const namesTheBound = (detail: { loc: unknown[]; msg: string; type: string }[]) => {
    expect(detail[0]?.type).toBe("too_many_instances");
    expect(detail[0]?.msg).toContain(`at most ${MAX_REPORT_INSTANCES}`);
    expect(detail[0]?.loc).toEqual(["body"]);
  };

  it("is a 422 naming the bound for the reports and their CSV, and writes nothing", async () => {
    const co = await bigPlant();
    const before = await stored(co.id);
    for (const [path, accept] of [
      ["/v1/reports/metrics", undefined],
      ["/v1/reports/metrics", "text/csv"],
      ["/v1/reports/kpis", undefined],
      ["/v1/reports/kpis", "text/csv"],
    ] as const) {
      const res = await post(co, path, EVERYTHING, accept);
      expect(res.status, `${path} ${accept}`).toBe(422);
      namesTheBound(((await res.json()) as { detail: never }).detail);
    }
    expect(await stored(co.id)).toEqual(before);
    // A window within the bound is answered: the last 30 days (10 x 3 x 30 instances).
    const month = await post(co, "/v1/reports/metrics", {
      startDate: { after: new Date(Date.now() - 30 * DAY).toISOString() },
      limit: 1,
    });
    expect(month.status).toBe(200);
    expect(((await month.json()) as { totalCount: number }).totalCount).toBeGreaterThanOrEqual(
      10 * 3 * 30,
    );
  });

  it("is a tool error naming the bound for the MCP tools", async () => {
    const co = await bigPlant();
    const before = await stored(co.id);
    const client = await connect({ "x-api-key": co.key }, "2026-07-28");
    for (const name of ["metrics_report", "kpis_report"]) {
      const answer = (await client.callTool({ name, arguments: EVERYTHING })) as {
        isError?: boolean;
        content: { text?: string }[];
      };
      expect(answer.isError, name).toBe(true);
      const { detail } = JSON.parse(answer.content[0]?.text ?? "{}") as {
        detail: { loc: unknown[]; msg: string; type: string }[];
      };
      expect(detail[0]?.type).toBe("too_many_instances");
      expect(detail[0]?.msg).toContain(`at most ${MAX_REPORT_INSTANCES}`);
    }
    await client.close();
    expect(await stored(co.id)).toEqual(before);
  });
});

describe("sparse instances", () => {
  it("are read around each instance, not the years between them", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Weekly" }]);
    if (!m) throw new Error("no machine");
    await inServiceSince(co.id, [m.id], "2015-01-05T00:00:00Z");
    // One 8-hour shift on Mondays: about 52 a year, 500 of them (a CSV batch) span 9.6 years.
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Monday", startTime: "06:00", endTime: "14:00", weekdays: [1] },
    ]);
    await insertProductionLogs(co.id, [
      {
        machineId: m.id,
        start: Date.parse("2020-06-01T07:00:00Z"),
        end: Date.parse("2020-06-01T08:00:00Z"),
        count: 60,
        nominalSpeed: 1,
      },
    ]);
    const { response, counter } = await countStatements(
      new Request("http://localhost/v1/reports/metrics", {
        method: "POST",
        headers: { "x-api-key": co.key, "content-type": "application/json", accept: "text/csv" },
        body: JSON.stringify(EVERYTHING),
      }),
    );
    expect(response.status).toBe(200);
    const lines = (await response.text()).trim().split("\r\n");
    expect(lines.length - 1).toBeGreaterThan(500);
    // The logs of each batch of 500 instances are read per instance (its hours), not per
    // hour of the 9.6 years they span: the statement stays small.
    const logReads = counter.statements().filter((s) => s.sql.includes("json_group_array"));
    expect(logReads.length).toBeGreaterThan(0);
    for (const s of logReads) {
      const size = s.sql.length + s.params.reduce<number>((n, p) => n + String(p).length, 0);
      expect(size).toBeLessThan(200_000);
    }
    // The KPI report of the whole window, after one of its middle years (so that the
    // instances left to compute lie years apart): answered.
    const middle = await post(co, "/v1/reports/kpis", {
      startDate: { between: { start: "2017-01-01T00:00:00Z", end: "2023-01-01T00:00:00Z" } },
    });
    expect(middle.status).toBe(200);
    const all = await post(co, "/v1/reports/kpis", EVERYTHING);
    expect(all.status, await all.clone().text()).toBe(200);
  });
});

describe("the downtime report", () => {
  it("groups at most MAX_DOWNTIME_STOPS stops: more is a 422 naming the bound", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Stopper" }]);
    if (!m) throw new Error("no machine");
    // One more stop than the bound: a minute every two minutes from 2020-01-01.
    const from = Date.parse("2020-01-01T00:00:00Z");
    const d1 = await shardD1(co.id);
    await d1
      .prepare(
        `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
         INSERT INTO stops (company_id, machine_id, start_time, end_time, is_programmed)
         SELECT ?1, ?2, ?4 + i * 120000, ?4 + i * 120000 + 60000, 0 FROM n`,
      )
      .bind(co.id, m.id, MAX_DOWNTIME_STOPS, from)
      .run();
    const res = await post(co, "/v1/reports/downtime", EVERYTHING);
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { msg: string; type: string }[] };
    expect(detail[0]?.type).toBe("too_many_stops");
    expect(detail[0]?.msg).toContain(`more than ${MAX_DOWNTIME_STOPS} stops`);
    // The first 1,000 stops are grouped.
    const some = await post(co, "/v1/reports/downtime", {
      startDate: { before: new Date(from + 1000 * 120_000).toISOString() },
    });
    expect(some.status).toBe(200);
    const page = (await some.json()) as { downtime: { stops: number }[] };
    expect(page.downtime[0]?.stops).toBe(1000);
  }, 60_000);
});
