import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { syncPendingMachines } from "../../src/durable/realtime-barrier";
import { ApiError } from "../../src/http/errors";
import { createCompany, createMachines, shardD1 } from "../harness";

/** A company with `n` machines, every one marked in realtime_pending. */
async function markedMachines(n: number): Promise<{ companyId: number; machineIds: number[] }> {
  const co = await createCompany();
  const machines = await createMachines(
    co.id,
    Array.from({ length: n }, (_, i) => ({ name: `M${i}` })),
  );
  const machineIds = machines.map((m) => m.id);
  await (await shardD1(co.id))
    .prepare(
      "INSERT INTO realtime_pending (company_id, machine_id, since) " +
        "SELECT ?1, value, 0 FROM json_each(?2)",
    )
    .bind(co.id, JSON.stringify(machineIds))
    .run();
  return { companyId: co.id, machineIds };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("the read barrier", () => {
  it("asks only the marked machines the read can touch", async () => {
    const { companyId, machineIds } = await markedMachines(5);
    const asked: number[] = [];
    const wanted = [machineIds[1], machineIds[3]].filter((id) => id !== undefined);
    await syncPendingMachines(env, companyId, wanted, {
      flush: async (_company, machineId) => {
        asked.push(machineId);
      },
    });
    expect(asked.sort()).toEqual([...wanted].sort());
    const all: number[] = [];
    await syncPendingMachines(env, companyId, undefined, {
      flush: async (_company, machineId) => {
        all.push(machineId);
      },
    });
    expect(all.sort()).toEqual([...machineIds].sort());
  });

  it("keeps at most `concurrency` flushes in flight", async () => {
    const { companyId } = await markedMachines(12);
    let inFlight = 0;
    let most = 0;
    let done = 0;
    await syncPendingMachines(env, companyId, undefined, {
      concurrency: 3,
      flush: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await sleep(5);
        inFlight -= 1;
        done += 1;
      },
    });
    expect(done).toBe(12);
    expect(most).toBe(3);
  });

  it("answers 503 with Retry-After when an object is slower than the budget", async () => {
    const { companyId } = await markedMachines(2);
    const error = await syncPendingMachines(env, companyId, undefined, {
      budgetMs: 50,
      flush: (_company, machineId) => sleep(machineId % 2 === 0 ? 1_000 : 1),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).headers).toEqual({ "retry-after": "1" });
  });
});
