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
import { SECOND_MS } from "../../time/units";

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
const SWITCH_GRACE_MS = SECOND_MS;

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

/** One move under way: the company, its two shards by name and their counted bindings. */
interface MoveRun {
  deps: MoveDeps;
  companyId: number;
  from: string;
  to: string;
  source: D1Database;
  target: D1Database;
  /** The statements sent to both shards so far. */
  statements: { n: number };
}

/**
 * Moves a company to another shard (see the module comment): copy, catch up, switch,
 * remove; on a failure before the switch, the source unfenced and the target put back.
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
  const run = await startRun(deps, companyId, to);
  const restoreTarget = await prepareTarget(run);
  // 1. Copy, recording the changes made meanwhile.
  await setMoveState(run.source, companyId, "tracking");
  const switching = { since: 0 };
  try {
    const copied = await copyCompany(run.source, run.target, companyId);
    const caughtUp = await catchUp(run);
    const switched = await switchShard(run, switching);
    await removeFromSource(run);
    return {
      companyId,
      from: run.from,
      to,
      copied: nonZero(copied),
      changesApplied: caughtUp + switched.changesApplied,
      rows: nonZero(switched.rows),
      switchMs: switched.switchMs,
      statements: run.statements.n,
    };
  } catch (error) {
    await undoMove(run, switching.since > 0, restoreTarget);
    throw error;
  }
}

/**
 * Checks the move asked for and opens both shards, their bindings counting statements.
 *
 * @throws MoveError 404 unknown company, 422 unknown target shard, 409 the company is on
 *   it already, 500 the company's own shard is not bound.
 */
async function startRun(deps: MoveDeps, companyId: number, to: string): Promise<MoveRun> {
  const from = await deps.placementOf(companyId);
  if (from === null) throw new MoveError(404, "Company not found");
  const targetBinding = deps.shard(to);
  if (!targetBinding) throw new MoveError(422, `No shard named ${to}`);
  if (from === to) throw new MoveError(409, `The company is on ${to} already`);
  const sourceBinding = deps.shard(from);
  if (!sourceBinding) throw new MoveError(500, `The company's shard ${from} is not bound`);
  const statements = { n: 0 };
  return {
    deps,
    companyId,
    from,
    to,
    source: counted(sourceBinding, statements),
    target: counted(targetBinding, statements),
    statements,
  };
}

/**
 * Installs the move triggers in both shards and empties the target of the company, which it
 * now receives: its figure triggers leave the company's copied rows alone (the copy carries
 * the source's kept figures and write counts). What an earlier move cut short left in the
 * target goes. Then the target gets a fresh id range, above every id the copy brings: SQLite
 * goes on after the largest id a table holds, so rows copied from a shard of a higher range
 * would otherwise have the target hand out that shard's next ids, to other companies'
 * machines, during the copy and for good after a move that fails.
 *
 * @returns what puts the target back as it was: none of the company's rows, its former move
 *   state.
 */
async function prepareTarget(run: MoveRun): Promise<() => Promise<void>> {
  const { source, target, companyId } = run;
  await installMoveTriggers(source);
  await installMoveTriggers(target);
  const targetState = await moveStateOf(target, companyId);
  await setMoveState(target, companyId, "receiving");
  await removeCompany(target, companyId, "receiving");
  await run.deps.freshIdRanges(run.to);
  return async () => {
    await setMoveState(target, companyId, "receiving");
    await removeCompany(target, companyId, "receiving");
    await setMoveState(target, companyId, targetState === "receiving" ? null : targetState);
  };
}

/**
 * 2. Catch up: the realtime held writes flushed to the source, then the changes recorded
 * since the copy applied to the target, in at most `CATCH_UP_ROUNDS` rounds, until no more
 * than `FEW_CHANGES` are left for the switch.
 *
 * @returns the changes applied.
 */
async function catchUp(run: MoveRun): Promise<number> {
  await run.deps.flushRealtime(run.source, run.companyId);
  let changesApplied = 0;
  for (let round = 0; round < CATCH_UP_ROUNDS; round++) {
    const { applied, remaining } = await applyChanges(run.source, run.target, run.companyId);
    changesApplied += applied;
    if (remaining <= FEW_CHANGES) break;
  }
  return changesApplied;
}

/**
 * 3. Switch: marks the company moving, waits out the placement cache, fences the source,
 * applies the last changes, compares the row counts, then names the target in the
 * directory.
 *
 * @param switching `since` is set to the instant the moving mark was made (ms), so that a
 *   failure after it clears the mark.
 * @returns the changes applied in the switch, the target's rows by table, and how long
 *   writes waited (ms).
 * @throws MoveError 500 when the counts differ or changes are left (nothing switched).
 */
async function switchShard(
  run: MoveRun,
  switching: { since: number },
): Promise<{ changesApplied: number; rows: Map<string, number>; switchMs: number }> {
  const { deps, source, target, companyId, to } = run;
  switching.since = Date.now();
  await deps.markMoving(companyId, switching.since + MOVING_MARK_MS);
  await deps.sleep(deps.placementCacheMs + SWITCH_GRACE_MS);
  await setMoveState(source, companyId, "fenced");
  const last = await applyAll(source, target, companyId);
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
  // Again: a move into the source meanwhile may have given it a range above the first one.
  await deps.freshIdRanges(to);
  await deps.switchTo(companyId, to);
  return { changesApplied: last.applied, rows: after, switchMs: Date.now() - switching.since };
}

/** 4. Remove the company from the source, once the requests that read it are done. */
async function removeFromSource(run: MoveRun): Promise<void> {
  await run.deps.sleep(SWITCH_GRACE_MS);
  await setMoveState(run.source, run.companyId, "gone");
  await removeCompany(run.source, run.companyId, "gone");
}

/**
 * After a failure, if the move did not switch: the source stays the company's, unfenced,
 * and the waiting requests go on (the moving mark cleared when it was made); the target is
 * put back as it was (should that fail too, it is logged and the next move there does it).
 *
 * @param marked whether the moving mark was made.
 * @param restoreTarget what `prepareTarget` returned.
 */
async function undoMove(
  run: MoveRun,
  marked: boolean,
  restoreTarget: () => Promise<void>,
): Promise<void> {
  const { deps, companyId } = run;
  if ((await deps.placementOf(companyId)) !== run.from) return;
  await setMoveState(run.source, companyId, null);
  if (marked) await deps.markMoving(companyId, null);
  try {
    await restoreTarget();
  } catch (cleanup) {
    logError("company_move_cleanup", cleanup, { companyId, target: run.to });
  }
}
