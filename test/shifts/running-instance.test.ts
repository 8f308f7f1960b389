/**
 * The running instance of a machine is written once, the first time it is needed: every
 * later lookup is a read alone (an `INSERT OR IGNORE` of a stored row changes nothing but
 * still queues on D1's one writer).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { runningInstance } from "../../src/shifts/queries";
import { countingD1 } from "../d1-counter";
import { createCompany, createMachines, operatorJson } from "../harness";

const isWrite = (sql: string) => /^\s*(insert|update|delete|replace)\b/i.test(sql);

describe("runningInstance", () => {
  it("inserts the instance on first use only, then reads it back without a write", async () => {
    const co = await createCompany({ timezone: "UTC" });
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "All day", startTime: "00:00", endTime: "00:00" },
    ]);
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    // Tomorrow's instance: today's was taken already when the machine was armed at creation
    // (src/realtime/arm.ts), and this test wants the first use of one.
    const now = Date.now() + 86_400_000;

    const first = countingD1(env.DB);
    const created = await runningInstance(createDb(first.binding), co.id, m.id, now);
    expect(created).not.toBeNull();
    expect(first.sent().some(isWrite)).toBe(true);

    const again = countingD1(env.DB);
    const found = await runningInstance(createDb(again.binding), co.id, m.id, now + 1_000);
    expect(found).toEqual(created);
    expect(again.sent().filter(isWrite)).toEqual([]);
    // The plan (one batch of four reads), then the instance.
    expect(again.count()).toBe(5);
  });
});
