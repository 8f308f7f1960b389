/**
 * What the partner's metrics report costs D1 in rows read (what D1 bills, and
 * where a scan or a repeated read shows): over a plant with history, the rows a
 * report reads are the logs it covers plus a small, fixed number per machine,
 * whatever the length of the history before the window.
 */
import { describe, expect, it } from "vitest";
import { machines as machinesTable, productionLogs } from "../../src/db/schema";
import { inIntegerList, LITERAL_LIST_MAX } from "../../src/http/filters";
import { packedLogsQuery } from "../../src/reports/packed-logs";
import { countStatements } from "../d1-counter";
import { createCompany, createMachines, operatorJson, shardDb, type TestCompany } from "../harness";

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const MACHINES = 20;
/** One log every 10 minutes on every machine. */
const LOG_EVERY = 10 * MIN;

/** Writes the logs in batches (the fixture's one statement per log is slow for thousands). */
async function insertHistory(companyId: number, machineIds: number[], from: number, to: number) {
  const db = await shardDb(companyId);
  const rows = machineIds.flatMap((machineId) =>
    Array.from({ length: (to - from) / LOG_EVERY }, (_, i) => ({
      id: crypto.randomUUID(),
      companyId,
      machineId,
      start: from + i * LOG_EVERY,
      end: from + (i + 1) * LOG_EVERY,
      type: "total" as const,
      count: 50,
      sensorCount: 50,
      nominalSpeed: 6,
      countingFactor: 1,
      live: false,
    })),
  );
  const inserts = [];
  for (let i = 0; i < rows.length; i += 4) {
    inserts.push(db.insert(productionLogs).values(rows.slice(i, i + 4)));
  }
  for (let i = 0; i < inserts.length; i += 100) {
    const [first, ...rest] = inserts.slice(i, i + 100);
    if (first) await db.batch([first, ...rest]);
  }
}

async function reportRowsRead(co: TestCompany, body: unknown) {
  const { response, counter } = await countStatements(
    new Request("http://localhost/v1/reports/metrics", {
      method: "POST",
      headers: { "x-api-key": co.key, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  expect(response.status).toBe(200);
  const page = (await response.json()) as { totalCount: number };
  return { totalCount: page.totalCount, rowsRead: counter.rowsRead(), counter };
}

describe("metrics report: rows read", () => {
  it("reads the logs it covers and a few rows per machine, not its machine list again and again", async () => {
    const co = await createCompany({ timezone: "UTC" });
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Morning", startTime: "06:00", endTime: "14:00" },
      { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
      { name: "Night", startTime: "22:00", endTime: "06:00" },
    ]);
    const machines = await createMachines(
      co.id,
      Array.from({ length: MACHINES }, (_, i) => ({ name: `Press ${i + 1}` })),
    );
    // Three days of history, then a report of yesterday's morning and afternoon shifts.
    const today = Math.floor(Date.now() / DAY) * DAY;
    await insertHistory(
      co.id,
      machines.map((m) => m.id),
      today - 3 * DAY,
      today,
    );
    const body = {
      startDate: {
        between: {
          start: new Date(today - DAY + 6 * HOUR).toISOString(),
          // Half-open: up to the afternoon's end, so that the afternoon (14:00) is in.
          end: new Date(today - DAY + 22 * HOUR).toISOString(),
        },
      },
      limit: 100,
    };
    // The first call stores the window's instances; the partner's every later call is this one.
    await reportRowsRead(co, body);
    const { totalCount, rowsRead, counter } = await reportRowsRead(co, body);
    expect(totalCount).toBe(2 * MACHINES);

    // The page's span is 06:00-22:00: 16 hours of logs, plus the one reaching in from before.
    // D1 counts a log read by index as two rows (the index entry, then the row).
    const logsCovered = MACHINES * ((16 * HOUR) / LOG_EVERY + 1);
    const statements = counter.statements();
    const isLogRead = (sql: string) => sql.includes("json_group_array");
    const logRows = statements.filter((s) => isLogRead(s.sql)).reduce((n, s) => n + s.rowsRead, 0);
    const otherRows = rowsRead - logRows;
    // Today about 33 per machine beyond the logs (one index step past each hour's
    // window); the windows as a `json_each` table added 17 more.
    expect((logRows - 2 * logsCovered) / MACHINES).toBeLessThanOrEqual(40);
    // Today about 25 per machine (machines and their first activity, instances, stops, the
    // barrier). Each statement
    // that stepped through the machine list as a `json_each` table added one more per
    // machine (five of them); the stored-instance count joined with definitions and
    // machines, two more rows per instance (three more per machine here).
    expect(otherRows / MACHINES).toBeLessThanOrEqual(26);
    // The read barrier's look at the marked machines reads the marks, not its machine list
    // (as a `json_each` table it read one row per machine of the page).
    const barrier = statements.filter((s) => s.sql.includes("realtime_pending"));
    expect(barrier.length).toBeGreaterThan(0);
    expect(barrier.reduce((n, s) => n + s.rowsRead, 0)).toBeLessThan(MACHINES);
    // Three days of history before the window cost nothing: no scan from the first record.
    expect(rowsRead).toBeLessThan(MACHINES * ((3 * DAY) / LOG_EVERY));
  }, 120_000);

  it("reads the same rows whether its lists travel as literals or as one JSON parameter", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    const from = Math.floor(Date.now() / DAY) * DAY - DAY;
    await insertHistory(co.id, [m.id], from - HOUR + 5 * MIN, from + 2 * HOUR + 5 * MIN);
    const db = await shardDb(co.id);

    // Machine lists: a short one is written as literals, a long one (or any with a
    // non-integer) is bound as JSON; both select the same machine.
    const long = [m.id, ...Array.from({ length: LITERAL_LIST_MAX }, (_, i) => -1 - i)];
    const idsOf = async (ids: number[]) =>
      (
        await db
          .select({ id: machinesTable.id })
          .from(machinesTable)
          .where(inIntegerList(machinesTable.id, ids))
      ).map((r) => r.id);
    expect(await idsOf([m.id, -1])).toEqual([m.id]);
    expect(await idsOf(long)).toEqual([m.id]);
    expect(await idsOf([])).toEqual([]);

    // Log windows: 2 hours of logs read as three windows, then with 1,500 more windows
    // of a machine that does not exist (past the literal limit): the same logs.
    const windows: [number, number | null, number][] = [
      [m.id, null, from],
      [m.id, from, from + HOUR],
      [m.id, from + HOUR, from + 2 * HOUR],
    ];
    const padding: [number, number | null, number][] = Array.from({ length: 1_500 }, () => [
      -1,
      from,
      from + HOUR,
    ]);
    const logsOf = async (w: [number, number | null, number][]) =>
      (await db.all<{ packed: string }>(packedLogsQuery(co.id, from, w))).flatMap(
        (r) => JSON.parse(r.packed) as unknown[],
      );
    const short = await logsOf(windows);
    // 12 logs starting in the two hours, and the one that starts before and reaches in.
    expect(short).toHaveLength(13);
    expect(await logsOf([...windows, ...padding])).toEqual(short);
  });
});
