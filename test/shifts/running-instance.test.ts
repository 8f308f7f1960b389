/**
 * The running instance of a machine is written once, the first time it is needed: every
 * later lookup is a read alone (an `INSERT OR IGNORE` of a stored row changes nothing but
 * still queues on D1's one writer).
 */
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { scopeIn } from "../../src/db/company-scope";
import { shiftInstances } from "../../src/db/schema";
import { runningInstance } from "../../src/shifts/queries";
import { countingD1 } from "../fixtures/d1-counter";
import { createCompany, createMachines, operatorJson, shardD1 } from "../harness";

const isWrite = (sql: string) => /^\s*(insert|update|delete|replace)\b/i.test(sql);

describe("runningInstance", () => {
  it("inserts the instance on first use only, then reads it back without a write", async () => {
    const co = await createCompany({ timezone: "UTC" });
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "All day", startTime: "00:00", endTime: "00:00" },
    ]);
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    const now = Date.now();
    // Creating shifts and machines arms the machines' realtime objects, which take their
    // running instance at once: forget it, so that the lookup below is its first use.
    const shard = await shardD1(co.id);
    await createDb(shard).delete(shiftInstances).where(eq(shiftInstances.companyId, co.id));

    const first = countingD1(shard);
    const created = await runningInstance(scopeIn(createDb(first.binding), co.id), m.id, now);
    expect(created).not.toBeNull();
    expect(first.sent().some(isWrite)).toBe(true);

    const again = countingD1(shard);
    const found = await runningInstance(scopeIn(createDb(again.binding), co.id), m.id, now + 1_000);
    expect(found).toEqual(created);
    expect(again.sent().filter(isWrite)).toEqual([]);
    // The plan (one batch of five reads: zone, definitions, their machines, machines, the
    // plant calendar's closures), then the instance.
    expect(again.count()).toBe(6);
  });
});
