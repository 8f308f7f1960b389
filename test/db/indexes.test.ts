/**
 * Every search filter and order on the history tables has an index behind it
 * (issue 19, docs/bounded-work.md): SQLite's plan for each query shape the
 * searches, the stops report and the metrics report send SEARCHes an index of
 * the table instead of SCANning it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";

async function plan(query: string): Promise<string[]> {
  const rows = await env.DB.prepare(`EXPLAIN QUERY PLAN ${query}`).all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

/**
 * The plan lines about `table`: every one an index SEARCH, and one of them
 * constrained by `constraint` (the filtered column, as SQLite prints it).
 */
async function expectSearched(query: string, table: string, constraint: string): Promise<void> {
  const lines = (await plan(query)).filter((l) => new RegExp(`\\b${table}\\b`).test(l));
  expect(lines.length, query).toBeGreaterThan(0);
  for (const line of lines) expect(line, query).toMatch(/^SEARCH .* USING (COVERING )?INDEX/);
  expect(lines.join("\n"), query).toContain(constraint);
}

const LIVE_LOGS = "company_id = 1 AND deleted_at IS NULL";

describe("indexes behind the production-log search", () => {
  const shapes: [string, string, string][] = [
    [
      "order by start",
      `SELECT id FROM production_logs WHERE ${LIVE_LOGS} ORDER BY start, id`,
      "production_logs_active_company_start_idx (company_id=?)",
    ],
    [
      "start filter",
      `SELECT id FROM production_logs WHERE ${LIVE_LOGS} AND start >= 5`,
      "(company_id=? AND start>?)",
    ],
    [
      "end filter",
      `SELECT count(*) FROM production_logs WHERE ${LIVE_LOGS} AND "end" < 5`,
      "(company_id=? AND end<?)",
    ],
    [
      "count filter",
      `SELECT count(*) FROM production_logs WHERE ${LIVE_LOGS} AND count > 5`,
      "(company_id=? AND count>?)",
    ],
    [
      "sku filter",
      `SELECT count(*) FROM production_logs WHERE ${LIVE_LOGS} AND sku_id = 'x'`,
      "(company_id=? AND sku_id=?)",
    ],
  ];
  for (const [name, query, constraint] of shapes) {
    it(`searches an index for the ${name}`, async () => {
      await expectSearched(query, "production_logs", constraint);
    });
  }
});

describe("indexes behind the stops report", () => {
  const live = "company_id = 1 AND deleted_at IS NULL AND is_included_in_stops = 1";
  it("searches an index for the order, startDate and endDate", async () => {
    await expectSearched(
      `SELECT id FROM stops WHERE ${live} ORDER BY start_time, id`,
      "stops",
      "stops_company_start_idx (company_id=?)",
    );
    await expectSearched(
      `SELECT count(*) FROM stops WHERE ${live} AND start_time > 5`,
      "stops",
      "(company_id=? AND start_time>?)",
    );
    await expectSearched(
      `SELECT count(*) FROM stops WHERE ${live} AND end_time < 5`,
      "stops",
      "(company_id=? AND end_time<?)",
    );
  });
});

describe("indexes behind a metrics report page", () => {
  it("reads a machine's logs from the span start less its longest log, by (machine, start)", async () => {
    const query = `SELECT l.id FROM machines INNER JOIN production_logs l ON l.machine_id = machines.id
      AND l.start >= 100 - ifnull((SELECT max("d"."end" - "d"."start") FROM production_logs AS "d"
        WHERE "d"."machine_id" = machines.id), 0)
      AND l.start < 200 AND l."end" > 100
      WHERE machines.company_id = 1 AND machines.id IN (SELECT value FROM json_each('[1]'))
        AND +l.company_id = 1 AND l.deleted_at IS NULL`;
    const lines = await plan(query);
    expect(lines.join("\n")).toContain("USING INDEX production_logs_machine_start_idx");
    // Read alone (the SQLite of workerd 1.20261117 says COVERING: the index holds what the
    // longest-log subquery reads, so it never reaches the table), or with the table.
    expect(lines.join("\n")).toMatch(
      /USING (COVERING )?INDEX production_logs_machine_duration_idx\b/,
    );
  });

  it("reads open stops by (machine, end_time)", async () => {
    const lines = await plan(`SELECT id FROM stops WHERE +company_id = 1
      AND machine_id IN (SELECT value FROM json_each('[1]')) AND end_time IS NULL
      AND +start_time < 5 AND deleted_at IS NULL`);
    expect(lines.join("\n")).toContain("USING INDEX stops_machine_end_idx");
  });
});

describe("indexes behind pull sync on the catalog searches", () => {
  for (const table of ["skus", "operators", "simple_work_orders", "nominal_speeds"]) {
    it(`${table}: the (updatedAt, id) order and the syncAfter cursor search an index`, async () => {
      const query = `SELECT id FROM ${table} WHERE company_id = 1 AND updated_at > 5
        ORDER BY updated_at, id`;
      await expectSearched(
        query,
        table,
        `${table}_company_updated_idx (company_id=? AND updated_at>?)`,
      );
      expect((await plan(query)).join("\n")).not.toContain("TEMP B-TREE");
    });
  }
});
