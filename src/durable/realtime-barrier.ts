/**
 * The read barrier of the realtime write-behind (see the file comment of
 * `src/realtime/realtime-machine.ts`): before a reader of production logs queries D1, the
 * objects of the machines the read can touch that are marked in
 * `realtime_pending` flush what they hold, so every realtime write that
 * returned before the read is shown.
 *
 * Bounded work (docs/bounded-work.md): only the machines the read can touch
 * are asked (a read of one log asks its machine; a filtered read the machines
 * of its filter), at most `BARRIER_CONCURRENCY` at a time, within
 * `BARRIER_BUDGET_MS`. When an object does not answer within the budget the
 * read is refused with a 503 and `Retry-After` rather than shown without
 * writes that were acknowledged: a reader never sees production that misses
 * an acknowledged realtime write, and a slow object costs it a retry.
 *
 * At the bottom of the domain (every reader of production logs passes it: the reports, the
 * production logs, the live figures of the event streams, MCP, the operator API, exports),
 * so it names nothing of the realtime layer: the reader hands it the one thing it needs,
 * a way to flush one machine (`FlushHeldWrites`), which the realtime layer makes
 * (`heldWritesOf`, src/realtime/machine-stub.ts: the object, its name and its RPC are
 * realtime's) and the composition passes down (src/app.ts to the routes, src/index.ts to
 * the machine streams). No folder that reads logs imports the realtime folder.
 *
 * With D1 sessions (src/db/session.ts): the objects write to the primary, outside the
 * reader's session, so the marks are read on the primary (a replica may not show a mark
 * yet), and when any machine the read can touch is marked, the reader's session is moved to
 * the primary's present after the flushes: what it reads next includes every write the
 * objects held or had just flushed. A session started at a client's bookmark is moved there
 * even when no machine is marked (the client asked to see its writes, and a realtime write
 * flushed and unmarked since is on the primary, perhaps not yet on the replica).
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
