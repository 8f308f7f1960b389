/**
 * Moving a company from its shard to another without losing an acknowledged write: copy,
 * catch up, switch (the source fenced, the row counts compared, the target named), remove.
 * The target holds the company in state `receiving` until the copy matches; a failure before
 * the switch leaves the source, the directory and the target as they were. The steps, their
 * waits and what clients see: docs/scaling.md, "Moving a company to another shard".
 */
import { applyChanges, copyCompany, countRows, removeCompany } from "../../db/company-copy";
import { installMoveTriggers, moveStateOf, setMoveState } from "../../db/move-fence";
import { logError } from "../../observability/log";

/** What a move needs of the directory and of the Worker (src/operator/company-move/routes.ts). */
export interface MoveDeps {
  /** The D1 binding of a shard; null for an unknown name. */
  shard(name: string): D1Database | null;
  /** The company's shard as the directory has it now (no cache); null for no such company. */
  placementOf(companyId: number): Promise<string | null>;
  /**
   * Marks the company moving until an instant (ms since the epoch: Workers that resolve its
   * shard wait until the switch, or until then), or clears the mark (null).
   */
  markMoving(companyId: number, until: number | null): Promise<void>;
  /** Names the company's new shard and clears the moving mark, in one write. */
  switchTo(companyId: number, target: string): Promise<void>;
  /** Gives the target shard fresh id ranges above every id it now holds. */
  freshIdRanges(target: string): Promise<void>;
  /** Flushes the company's realtime held writes (the read barrier on the source). */
  flushRealtime(source: D1Database, companyId: number): Promise<void>;
  /** How long isolates may keep a resolved placement, ms. */
  readonly placementCacheMs: number;
  /** Waits, ms (tests shorten the graces). */
  sleep(ms: number): Promise<void>;
}

/** Extra wait after the placement cache time before fencing, and before removing, ms. */
const SWITCH_GRACE_MS = 1_000;

/**
 * How long the moving mark holds at most, ms: a move cut short during its switch frees the
 * company's requests after this (they then use the old shard, which the next move run
 * unfences). Well above a switch's length (the placement cache time, a grace, the last
 * changes and the counts).
 */
const MOVING_MARK_MS = 30_000;

/** Catch-up rounds before the switch, at most. */
const CATCH_UP_ROUNDS = 10;

/** Changes left that are few enough to apply during the switch. */
const FEW_CHANGES = 200;

/** What a move did. */
interface MoveReport {
  companyId: number;
  from: string;
  to: string;
  /** Rows copied in the bulk copy, by table (only tables with rows). */
  copied: Record<string, number>;
  /** Changes applied after the bulk copy (catch-up and switch). */
  changesApplied: number;
  /** Rows of the company in the target after the switch, by table (only tables with rows). */
  rows: Record<string, number>;
  /** How long writes waited: from the moving mark to the directory naming the target, ms. */
  switchMs: number;
  /**
   * D1 statements the move sent to the two shards (D1 allows 1,000 per Worker invocation on
   * the paid plan; Miniflare does not enforce it, so the move counts).
   */
  statements: number;
}

/** A binding that counts the statements prepared on it (each is sent once). */
function counted(d1: D1Database, count: { n: number }): D1Database {
  return new Proxy(d1, {
    get(target, prop) {
      if (prop === "prepare") {
        return (query: string) => {
          count.n++;
          return target.prepare(query);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** An error a move answers with: the HTTP status and the detail. */
export class MoveError extends Error {
  constructor(
    readonly status: 404 | 409 | 422 | 500,
    message: string,
  ) {
    super(message);
  }
}

const nonZero = (counts: Map<string, number>) =>
  Object.fromEntries([...counts].filter(([, n]) => n > 0));

async function applyAll(source: D1Database, target: D1Database, companyId: number) {
  let applied = 0;
  for (;;) {
    const round = await applyChanges(source, target, companyId);
    applied += round.applied;
    if (round.remaining === 0 || round.applied === 0) return { applied, left: round.remaining };
  }
}

/**
 * Moves a company to another shard (see the module comment).
 *
 * @param deps the directory and the Worker.
 * @param companyId the company.
 * @param to the target shard's name.
 * @returns what was copied and how long writes waited.
 * @throws MoveError 404 for an unknown company, 422 for an unknown shard, 409 when the
 *   company is on that shard already, 500 when the copy does not match (nothing switched).
 */
export async function moveCompany(
  deps: MoveDeps,
  companyId: number,
  to: string,
): Promise<MoveReport> {
  const from = await deps.placementOf(companyId);
  if (from === null) throw new MoveError(404, "Company not found");
  const targetBinding = deps.shard(to);
  if (!targetBinding) throw new MoveError(422, `No shard named ${to}`);
  if (from === to) throw new MoveError(409, `The company is on ${to} already`);
  const sourceBinding = deps.shard(from);
  if (!sourceBinding) throw new MoveError(500, `The company's shard ${from} is not bound`);
  const statements = { n: 0 };
  const source = counted(sourceBinding, statements);
  const target = counted(targetBinding, statements);

  // Both databases get the triggers. The target receives: its figure triggers leave the
  // company's copied rows alone (the copy carries the source's kept figures and write counts).
  // What an earlier move cut short left in the target goes.
  await installMoveTriggers(source);
  await installMoveTriggers(target);
  const targetState = await moveStateOf(target, companyId);
  await setMoveState(target, companyId, "receiving");
  await removeCompany(target, companyId, "receiving");
  /** Puts the target back as it was: none of the company's rows, its former move state. */
  const restoreTarget = async () => {
    await setMoveState(target, companyId, "receiving");
    await removeCompany(target, companyId, "receiving");
    await setMoveState(target, companyId, targetState === "receiving" ? null : targetState);
  };

  // 1. Copy, recording the changes made meanwhile.
  await setMoveState(source, companyId, "tracking");
  let switchStart = 0;
  try {
    const copied = await copyCompany(source, target, companyId);

    // 2. Catch up.
    await deps.flushRealtime(source, companyId);
    let changesApplied = 0;
    for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
      const { applied, remaining } = await applyChanges(source, target, companyId);
      changesApplied += applied;
      if (remaining <= FEW_CHANGES) break;
    }

    // 3. Switch.
    switchStart = Date.now();
    await deps.markMoving(companyId, switchStart + MOVING_MARK_MS);
    await deps.sleep(deps.placementCacheMs + SWITCH_GRACE_MS);
    await setMoveState(source, companyId, "fenced");
    const last = await applyAll(source, target, companyId);
    changesApplied += last.applied;
    const [before, after] = await Promise.all([
      countRows(source, companyId),
      countRows(target, companyId),
    ]);
    const differing = [...before].filter(([table, n]) => after.get(table) !== n);
    if (differing.length > 0 || last.left > 0) {
      throw new MoveError(
        500,
        `The copy does not match the source (${differing.map(([t, n]) => `${t}: ${n} vs ${after.get(t)}`).join(", ") || `${last.left} changes left`}); nothing was switched`,
      );
    }
    // The target's own writes count again from here (no request reaches it before the switch).
    await setMoveState(target, companyId, null);
    await deps.freshIdRanges(to);
    await deps.switchTo(companyId, to);
    const switchMs = Date.now() - switchStart;

    // 4. Remove, once the requests that read the source are done.
    await deps.sleep(SWITCH_GRACE_MS);
    await setMoveState(source, companyId, "gone");
    await removeCompany(source, companyId, "gone");
    return {
      companyId,
      from,
      to,
      copied: nonZero(copied),
      changesApplied,
      rows: nonZero(after),
      switchMs,
      statements: statements.n,
    };
  } catch (error) {
    // Not switched: the source stays the company's, unfenced, and the waiting requests go on;
    // the target is put back as it was (should that fail too, the next move there does it).
    if ((await deps.placementOf(companyId)) === from) {
      await setMoveState(source, companyId, null);
      if (switchStart > 0) await deps.markMoving(companyId, null);
      try {
        await restoreTarget();
      } catch (cleanup) {
        logError("company_move_cleanup", cleanup, { companyId, target: to });
      }
    }
    throw error;
  }
}
