import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { type CompanyScope, scopeIn } from "../../src/db/company-scope";
import { openSession } from "../../src/db/session";
import { syncPendingMachines } from "../../src/durable/realtime-barrier";
import { ApiError } from "../../src/http/errors";
import { createCompany, createMachines, recordingSessions, shardD1 } from "../harness";

/** A company with `n` machines, every one marked in realtime_pending. */
async function markedMachines(
  n: number,
): Promise<{ companyId: number; scope: CompanyScope; machineIds: number[] }> {
  const co = await createCompany();
  const machines = await createMachines(
    co.id,
    Array.from({ length: n }, (_, i) => ({ name: `M${i}` })),
  );
  const machineIds = machines.map((m) => m.id);
  const shard = await shardD1(co.id);
  await shard
    .prepare(
      "INSERT INTO realtime_pending (company_id, machine_id, since) " +
        "SELECT ?1, value, 0 FROM json_each(?2)",
    )
    .bind(co.id, JSON.stringify(machineIds))
    .run();
  return { companyId: co.id, scope: scopeIn(createDb(shard), co.id), machineIds };
}

/** A machine object that holds nothing. */
const noFlush = async () => undefined;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe("the read barrier", () => {
  it("asks only the marked machines the read can touch", async () => {
    const { scope, machineIds } = await markedMachines(5);
    const asked: number[] = [];
    const wanted = [machineIds[1], machineIds[3]].filter((id) => id !== undefined);
    await syncPendingMachines(
      async (_company, machineId) => {
        asked.push(machineId);
      },
      scope,
      wanted,
    );
    expect(asked.sort()).toEqual([...wanted].sort());
    const all: number[] = [];
    await syncPendingMachines(async (_company, machineId) => {
      all.push(machineId);
    }, scope);
    expect(all.sort()).toEqual([...machineIds].sort());
  });

  it("keeps at most `concurrency` flushes in flight", async () => {
    const { scope } = await markedMachines(12);
    let inFlight = 0;
    let most = 0;
    let done = 0;
    const flush = async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await sleep(5);
      inFlight -= 1;
      done += 1;
    };
    await syncPendingMachines(flush, scope, undefined, { concurrency: 3 });
    expect(done).toBe(12);
    expect(most).toBe(3);
  });

  it("answers 503 with Retry-After when an object is slower than the budget", async () => {
    const { scope } = await markedMachines(2);
    const slowOne = (_company: number, machineId: number) => sleep(machineId % 2 === 0 ? 1_000 : 1);
    const error = await syncPendingMachines(slowOne, scope, undefined, { budgetMs: 50 }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect((error as ApiError).headers).toEqual({ "retry-after": "1" });
  });

  it("moves a request's session to the primary's present when a machine was marked or it sent a bookmark", async () => {
    const { companyId } = await markedMachines(1);
    const anchors: (string | undefined)[] = [];
    const spy = recordingSessions(await shardD1(companyId), anchors);
    const session = openSession(spy, "DB", "first-unconstrained", null);
    const { db } = session;
    await db.$client.prepare("SELECT 1").run();
    const before = session.d1Bookmark() ?? "";
    expect(anchors).toEqual(["first-unconstrained"]);

    await syncPendingMachines(noFlush, scopeIn(db, companyId));
    // One read on the primary, then a session anchored at its bookmark.
    expect(anchors.slice(1, 2)).toEqual(["first-primary"]);
    expect(anchors).toHaveLength(3);
    expect((session.d1Bookmark() ?? "") > before).toBe(true);

    const other = await createCompany();
    await syncPendingMachines(noFlush, scopeIn(db, other.id));
    expect(anchors).toHaveLength(3);

    // A reader that sent a bookmark is moved even when nothing is marked.
    const bookmark = session.d1Bookmark() ?? "";
    const anchored = openSession(spy, "DB", "first-unconstrained", { database: "DB", bookmark });
    await syncPendingMachines(noFlush, scopeIn(anchored.db, other.id));
    expect(anchors.slice(3)).toEqual([bookmark, "first-primary", expect.any(String)]);
    expect((anchored.d1Bookmark() ?? "") > bookmark).toBe(true);
  });
});
