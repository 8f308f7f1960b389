/**
 * The work of a stop reason and of a scanner's list of recent stops does not grow with the
 * machine's history: every read of the stops table seeks the index on the machine's stop
 * ends (or a stop's id), and a machine with hundreds of old stops reads a few rows; a stop
 * reason sends no statement it does not need.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { countStatements, type SentStatement } from "../fixtures/d1-counter";
import { fakeNetwork } from "../fixtures/fake-network";
import { stopReasonScene } from "../fixtures/stop-reason-scene";
import { settleDeliverers } from "../fixtures/webhook-harness";
import { createCompany, createMachines, operatorJson, shardD1 } from "../harness";

afterEach(async () => {
  await settleDeliverers();
  vi.restoreAllMocks();
});

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
        // plan (5, with the plant calendar's closures), the stop with its classification,
        // then the write, its webhook event and deliveries and the classification as written,
        // with no statement adding a cause the catalog has. 16 before the causes were taken as
        // found and the candidates trimmed (with a plan of 4 statements).
        expect(counter.count(), counter.sent().join("\n")).toBeLessThanOrEqual(15);
      }
    }
  });
});

describe("a stop reason named by id and an operator's classification", () => {
  it("read the stop, its classification and its shift in one first batch, and answer before the hand-over", async () => {
    const { scan, classify } = await stopReasonScene(fakeNetwork());
    // The first change stores the stop's shift instance; the ones measured find it stored.
    expect((await countStatements(scan("Setup"))).response.status).toBe(200);
    for (const [label, request] of [
      ["POST stop-reason", scan("Jam")],
      ["PUT classification", classify("Setup")],
    ] as const) {
      const { response, counter, answered } = await countStatements(request);
      expect(response.status, `${label}: ${await response.clone().text()}`).toBe(200);
      const all = counter.statements();
      const log = all.map((s) => `${s.call}: ${s.sql.slice(0, 90)}`).join("\n");
      const before = all.slice(0, answered.statements);
      const callOf = (table: string) =>
        new Set(
          before
            .filter(
              (s) => /^select\b/i.test(s.sql) && new RegExp(`from "${table}"`, "i").test(s.sql),
            )
            .map((s) => s.call),
        );
      // The stop, its classification, the stored instances around its start and the shift
      // plan: one call, the first on the company's shard.
      const first = [...callOf("stops")];
      expect(first, log).toHaveLength(1);
      for (const table of ["stop_classifications", "shift_instances", "shift_definitions"]) {
        expect([...callOf(table)], `${label} ${table}\n${log}`).toContain(first[0]);
      }
      expect([...callOf("shift_instances")], `${label}\n${log}`).toEqual(first);
      // Then the write; the hand-over of the deliveries (their record of being sent) after
      // the answer. The key or the stop's company in the directory, the first batch and the
      // write: 3 D1 calls done before the answer, one after another (7 before, 5 in turn:
      // the stop beside the shift plan, then beside its shift, and the record of the Queue
      // message each waited for their own).
      expect(new Set(before.map((s) => s.call)).size, `${label}\n${log}`).toBeLessThanOrEqual(3);
      expect(answered.sequential, `${label}\n${log}`).toBeLessThanOrEqual(4);
      expect(
        before.filter((s) => /^update "webhook_deliveries"/i.test(s.sql)),
        `${label}\n${log}`,
      ).toEqual([]);
      expect(
        all.slice(answered.statements).filter((s) => /^update "webhook_deliveries"/i.test(s.sql)),
        `${label}\n${log}`,
      ).toHaveLength(1);
      // As many as before the first batch held the stop's classification and shift.
      expect(answered.statements, `${label}\n${log}`).toBeLessThanOrEqual(15);
    }
  });
});
