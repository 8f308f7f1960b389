/**
 * The work of a stop reason and of a scanner's list of recent stops does not grow with the
 * machine's history: every read of the stops table seeks the index on the machine's stop
 * ends (or a stop's id), and a machine with hundreds of old stops reads a few rows; a stop
 * reason sends no statement it does not need.
 */
import { describe, expect, it } from "vitest";
import { countStatements, type SentStatement } from "../d1-counter";
import { createCompany, createMachines, operatorJson, shardD1 } from "../harness";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const OLD_STOPS = 400;

/** SQLite's plan of a statement as it was sent, with its parameters. */
async function planOf(d1: D1Database, statement: SentStatement): Promise<string[]> {
  const rows = await d1
    .prepare(`EXPLAIN QUERY PLAN ${statement.sql}`)
    .bind(...statement.params)
    .all<{ detail: string }>();
  return rows.results.map((r) => r.detail);
}

describe("a stop reason's reads", () => {
  it("seek the machine's recent stops, whatever its history", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    await operatorJson("POST", `/companies/${co.id}/stop-causes`, [
      { kind: "generalCause", name: "Jam" },
    ]);
    // Ten days of old stops, then one going on now.
    const from = Date.now() - 10 * DAY;
    await operatorJson(
      "POST",
      `/machines/${m.id}/stops`,
      Array.from({ length: OLD_STOPS }, (_, i) => ({
        startTime: new Date(from + i * 30 * MIN).toISOString(),
        endTime: new Date(from + i * 30 * MIN + 10 * MIN).toISOString(),
        isProgrammed: false,
      })),
    );
    await operatorJson("POST", `/machines/${m.id}/stops`, [
      { startTime: new Date(Date.now() - 5 * MIN).toISOString(), isProgrammed: false },
    ]);
    const d1 = await shardD1(co.id);
    const request = (method: string, path: string, body?: unknown) =>
      new Request(`http://api.test${path}`, {
        method,
        headers: { "x-api-key": co.key, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    for (const [label, req] of [
      [
        "POST stop-reason",
        request("POST", `/v1/realtime/${m.id}/stop-reason`, { generalCause: { name: "Jam" } }),
      ],
      ["GET stops", request("GET", `/v1/realtime/${m.id}/stops`)],
    ] as const) {
      const { response, counter } = await countStatements(req);
      expect(response.status, `${label}: ${await response.clone().text()}`).toBe(200);
      const onStops = counter
        .statements()
        .filter((s) => /^select\b/i.test(s.sql) && /from "stops"/i.test(s.sql));
      expect(onStops.length, label).toBeGreaterThan(0);
      for (const statement of onStops) {
        const plan = (await planOf(d1, statement)).filter((line) => /\bstops\b/.test(line));
        expect(plan.join("\n"), `${label}: ${statement.sql}`).toMatch(
          /USING INDEX stops_machine_end_idx|USING INTEGER PRIMARY KEY/,
        );
        for (const line of plan) expect(line, `${label}: ${statement.sql}`).not.toMatch(/^SCAN/);
      }
      // The open stop and the catalog, not the 400 old stops.
      const read = onStops.reduce((sum, s) => sum + s.rowsRead, 0);
      expect(read, label).toBeLessThan(20);
      if (label === "POST stop-reason") {
        // A person waits for it, and each statement is runtime CPU: the key, the machine, the
        // catalog and the two candidate stops (no third for a stop named by nobody), the shift
        // plan (4), the stop with its classification, then the write, its webhook event and
        // deliveries and the classification as written, with no statement adding a cause the
        // catalog has. 16 before the causes were taken as found and the candidates trimmed.
        expect(counter.count(), counter.sent().join("\n")).toBeLessThanOrEqual(14);
      }
    }
  });
});
