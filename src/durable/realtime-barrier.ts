/**
 * The read barrier of the realtime write-behind: before a reader of production logs queries
 * D1, the objects of the machines it can touch that are marked in `realtime_pending` flush
 * what they hold, so every realtime write acknowledged before the read is shown. Bounded
 * (`BARRIER_CONCURRENCY`, `BARRIER_BUDGET_MS`, else 503 with `Retry-After`), and at the
 * bottom of the domain: the reader hands it `FlushHeldWrites`, so it names no object above it.
 * docs/bounded-work.md ("The realtime read barrier"), docs/api-guide.md ("Realtime writes and
 * the read barrier"), docs/architecture.md ("The layers").
 */
import { type CompanyScope, ownedText } from "../db/company-scope";
import { inJsonListText } from "../db/json-list";
import { primaryOf, sessionOf } from "../db/session";
import { ApiError } from "../http/errors";
import { integerLiterals } from "../http/filters";

/**
 * Flushes what one machine's realtime object holds to D1 and resolves once it is there
 * (rejects with whatever the object's call throws).
 */
export type FlushHeldWrites = (companyId: number, machineId: number) => Promise<void>;

/** Most Durable Object flushes in flight at once for one read. */
const BARRIER_CONCURRENCY = 8;

/** Most time one read waits for the flushes, ms. */
const BARRIER_BUDGET_MS = 5_000;

/** Bounds of one barrier (defaults `BARRIER_CONCURRENCY`, `BARRIER_BUDGET_MS`). */
interface BarrierOptions {
  concurrency?: number;
  budgetMs?: number;
}

/**
 * Asks the marked machines among those the read can touch to flush, with
 * bounded concurrency and a time budget, and waits for them.
 *
 * Costs one indexed D1 read on the primary (primary key `(company_id, machine_id)`) when no
 * machine is marked, the common case; when one is, the flushes and one more read on the
 * primary, whose bookmark the reader's session moves to.
 *
 * @param flush flushes one machine's object (the realtime layer's `heldWritesOf(env)`).
 * @param scope the reader's company and database (its session, for a request's).
 * @param machineIds the machines the read can touch, or all of the company's when omitted.
 * @param options concurrency, budget (defaults `BARRIER_CONCURRENCY`, `BARRIER_BUDGET_MS`).
 * @throws ApiError 503 with `Retry-After: 1` when the flushes do not finish within the budget;
 *   whatever a Durable Object call throws (the read then fails with a 500 rather than
 *   show production that misses acknowledged writes).
 */
export async function syncPendingMachines(
  flush: FlushHeldWrites,
  scope: CompanyScope,
  machineIds?: readonly number[],
  options: BarrierOptions = {},
): Promise<void> {
  if (machineIds && machineIds.length === 0) return;
  const { companyId } = scope;
  const primary = primaryOf(scope.db);
  // The list as literals: D1 counts each row of a `json_each` table as a row read.
  const literals = machineIds && integerLiterals(machineIds);
  const statement =
    machineIds === undefined
      ? primary
          .prepare(`SELECT machine_id FROM realtime_pending WHERE ${ownedText("?1")}`)
          .bind(companyId)
      : literals
        ? primary
            .prepare(
              `SELECT machine_id FROM realtime_pending WHERE ${ownedText("?1")} ` +
                `AND machine_id IN (${literals})`,
            )
            .bind(companyId)
        : primary
            .prepare(
              `SELECT machine_id FROM realtime_pending WHERE ${ownedText("?1")} ` +
                `AND ${inJsonListText("machine_id", "?2")}`,
            )
            .bind(companyId, JSON.stringify(machineIds));
  const pending = (await statement.raw<[number]>()).map(([machineId]) => machineId);
  const session = sessionOf(scope.db);
  if (pending.length === 0) {
    // A reader that sent a bookmark asked to see its writes: its realtime writes may have
    // been flushed and unmarked since, on the primary but not yet on its replica.
    if (session?.start === "bookmark") await session.catchUpWithPrimary();
    return;
  }

  const concurrency = Math.max(1, options.concurrency ?? BARRIER_CONCURRENCY);
  let next = 0;
  const worker = async () => {
    for (let machineId = pending[next++]; machineId !== undefined; machineId = pending[next++]) {
      await flush(companyId, machineId);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.budgetMs ?? BARRIER_BUDGET_MS);
  });
  try {
    const workers = Promise.all(
      Array.from({ length: Math.min(concurrency, pending.length) }, worker),
    );
    const outcome = await Promise.race([workers, timeout]);
    if (outcome === "timeout") {
      // Workers still running stop taking machines: nothing after this read waits on them.
      next = pending.length;
      // Their outcome no longer matters to this read; keep a late failure from going unhandled.
      workers.catch(() => undefined);
      throw new ApiError(
        503,
        "Realtime production of some machines is still being written; retry in a second",
        { "retry-after": "1" },
      );
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  await session?.catchUpWithPrimary();
}
