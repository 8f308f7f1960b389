/**
 * Companies spread over D1 shards: the one place that knows which database holds a company's
 * rows. The directory is the `DB` binding (credentials, companies and their shard, id ranges,
 * cross-shard keys); a shard is every binding matching {@link SHARD_BINDING}, learned from the
 * bindings so no second list can disagree; integer ids come from per-shard ranges of
 * {@link RANGE_SIZE}, so an id names its shard. docs/scaling.md ("Companies on shards").
 */
import { logError } from "../observability/log";
import { createDb, type Database } from "./client";
import { completeMirror } from "./company-mirror";
import { type DirectorySession, readAtPrimary, readDirectory } from "./directory-reads";

/** The binding names of shards: `SHARD_` and a number without leading zeros. */
export const SHARD_BINDING = /^SHARD_(0|[1-9][0-9]*)$/;

/**
 * Ids in one shard range: range `r` is `[r * 2^40, (r + 1) * 2^40)`. 2^40 ids (about 10^12)
 * per range; 2^53 / 2^40 = 8,192 ranges stay within JavaScript's exact integers.
 */
export const RANGE_SIZE = 2 ** 40;

/**
 * How long an isolate keeps a company's shard, ms, counted from the instant its directory
 * answer reflects (a replica at most `DIRECTORY_ANCHOR_MS` behind: ./directory-reads.ts). A
 * move marks the company moving, waits this long (every isolate has read the mark by then)
 * and a grace, then fences the old shard and switches (src/operator/company-move/move.ts): 2 s
 * keeps that pause short, for one directory read per company and isolate every 2 s.
 */
export const SHARD_CACHE_MS = 2_000;

/** Longest a request waits for a company's move to switch, ms; then {@link CompanyMovingError}. */
const MOVE_WAIT_MS = 10_000;

/** How often a waiting request reads the directory again, ms. */
const MOVE_POLL_MS = 100;

/**
 * Thrown when a company's move did not switch within {@link MOVE_WAIT_MS}: the request is
 * answered 503 with `Retry-After` (src/app.ts).
 */
class CompanyMovingError extends Error {
  constructor(readonly companyId: number) {
    super(`company ${companyId} is being moved to another shard`);
    this.name = "CompanyMovingError";
  }
}

/** True for a {@link CompanyMovingError}, also one that crossed an RPC (only its message kept). */
export function isCompanyMoving(error: unknown): boolean {
  return (
    error instanceof CompanyMovingError ||
    (error instanceof Error && error.message.includes("is being moved to another shard"))
  );
}

/**
 * The AUTOINCREMENT tables of company rows, whose sequences a shard sets to its range.
 * test/db/shards.test.ts fails when a migration adds an AUTOINCREMENT table not listed here
 * (and docs/deploying.md says what a new one needs on shards already registered).
 */
export const RANGED_TABLES = [
  "machines",
  "signals",
  "operators",
  "shift_definitions",
  "shift_instances",
  "stops",
  "stop_classifications",
  "webhook_attempts",
] as const;

/** Thrown when a company is not in the directory, or its shard is not bound to this Worker. */
export class UnknownCompanyError extends Error {
  constructor(readonly companyId: number) {
    super(`company ${companyId} has no shard bound to this Worker`);
    this.name = "UnknownCompanyError";
  }
}

/** The bindings the shard routing reads: the directory; the shards are found by name. */
export interface DirectoryEnv {
  readonly DB: D1Database;
}

function isD1(value: unknown): value is D1Database {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { prepare?: unknown }).prepare === "function" &&
    typeof (value as { batch?: unknown }).batch === "function"
  );
}

/** The shard bindings found per bindings object (the same object for every request of an isolate). */
const bindingsByEnv = new WeakMap<object, Map<string, D1Database>>();

/**
 * The shard bindings of this Worker, by binding name, in the order of their numbers. Found
 * once per bindings object: every request and Durable Object call routes through here, and
 * scanning the bindings each time was work on the hot path for an answer that never changes.
 *
 * @param env the Worker's bindings.
 * @returns `SHARD_<n>` -> its D1 binding (empty when the deployment declares none); the
 *   same map for the same bindings object, not to be changed by the caller.
 */
export function shardBindings(env: DirectoryEnv): ReadonlyMap<string, D1Database> {
  const known = bindingsByEnv.get(env);
  if (known) return known;
  const found: [number, string, D1Database][] = [];
  for (const [name, value] of Object.entries(env)) {
    const match = SHARD_BINDING.exec(name);
    if (match && isD1(value)) found.push([Number(match[1]), name, value]);
  }
  found.sort((a, b) => a[0] - b[0]);
  const bindings = new Map(found.map(([, name, binding]) => [name, binding]));
  bindingsByEnv.set(env, bindings);
  return bindings;
}

/** The directory's Drizzle client. */
export function directoryDb(env: DirectoryEnv): Database {
  return createDb(env.DB);
}

/** Companies' shards this isolate read lately (see {@link SHARD_CACHE_MS}). */
const shardCache = new Map<number, { shard: string; expiresAt: number }>();
/** Most companies kept; past it the cache starts over. */
const MAX_CACHED_COMPANIES = 50_000;

/**
 * The shard of a company, from the directory: the one function that routes a company to its
 * database (every scope, route, Durable Object and queue handler goes through it). Cached in
 * the isolate for {@link SHARD_CACHE_MS}. While the directory marks the company moving, it
 * waits for the switch (one directory read per {@link MOVE_POLL_MS}, company and isolate;
 * other waiters sleep), so nothing touches the old shard once the move fences it. A pending
 * mirror (./company-mirror.ts) is repaired here by the first request that touches it.
 *
 * No promise is shared between requests: in workerd a request that awaits a promise settled
 * by another request's I/O continues in that request's context, and then fails on I/O of its
 * own ("Cannot perform I/O on behalf of a different request", seen reading a body after an
 * authentication that shared a directory read). Requests that miss the cache together each
 * read (and cache) the shard; only the waiting of a move is coordinated, through plain data.
 *
 * @param env the bindings (`DB`).
 * @param companyId the company.
 * @returns the shard's binding name, or null when the company is not in the directory.
 * @throws CompanyMovingError when the company is still moving after {@link MOVE_WAIT_MS}.
 */
export async function shardOf(env: DirectoryEnv, companyId: number): Promise<string | null> {
  const deadline = Date.now() + MOVE_WAIT_MS;
  for (;;) {
    const now = Date.now();
    const cached = shardCache.get(companyId);
    if (cached && cached.expiresAt > now) return cached.shard;
    const nextPoll = movingPolls.get(companyId);
    if (nextPoll !== undefined && nextPoll > now) {
      // Another request of this isolate reads the directory for the moving company.
      if (now >= deadline) throw new CompanyMovingError(companyId);
      await sleep(nextPoll - now);
      continue;
    }
    // Claims the next poll while the company is known to be moving: the other waiters sleep.
    if (nextPoll !== undefined) movingPolls.set(companyId, now + MOVE_POLL_MS);
    const answer = await readShard(env, companyId);
    if (answer !== MOVING) {
      movingPolls.delete(companyId);
      return answer;
    }
    if (Date.now() >= deadline) throw new CompanyMovingError(companyId);
    movingPolls.set(companyId, Date.now() + MOVE_POLL_MS);
  }
}

/** What {@link readShard} answers for a company the directory marks moving. */
const MOVING = Symbol("moving");

/** Companies this isolate saw moving: when the next directory read for each is due, ms. */
const movingPolls = new Map<number, number>();

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads a company's shard from the directory once (repairing a pending mirror) and caches
 * it; {@link MOVING} when the directory marks the company moving (never cached).
 */
async function readShard(
  env: DirectoryEnv,
  companyId: number,
): Promise<string | null | typeof MOVING> {
  // `pending` and `moving_until` ride on the same read: a healthy company costs nothing more.
  const read = (session: DirectorySession) =>
    session
      .prepare(
        "SELECT shard, moving_until, mirrored_revision < revision AS pending FROM companies " +
          "WHERE id = CAST(?1 AS INTEGER)",
      )
      .bind(companyId)
      .first<{ shard: string | null; moving_until: number | null; pending: number }>();
  // At the isolate's anchor (SHARD_CACHE_MS counts from its instant); a company seen moving
  // is polled at the primary, so that its requests go on as soon as the switch is committed.
  const { value: row, asOf } = movingPolls.has(companyId)
    ? await readAtPrimary(env.DB, read)
    : await readDirectory(env.DB, read, (found) => Boolean(found?.shard));
  if (!row?.shard) {
    shardCache.delete(companyId);
    return null;
  }
  const at = Date.now();
  // Moving: the company's shard is about to change; the caller waits for the switch.
  if (row.moving_until !== null && row.moving_until > at) return MOVING;
  if (row.pending) {
    const binding = shardBindings(env).get(row.shard);
    try {
      if (binding) await completeMirror(env.DB, binding, companyId);
    } catch (error) {
      // Not cached: the next use tries again (and the cron); the request goes on with the
      // mirror as it is, which fails only if the mirror is missing altogether.
      logError("company_mirror_repair_failed", error, { companyId });
      return row.shard;
    }
  }
  if (shardCache.size >= MAX_CACHED_COMPANIES) shardCache.clear();
  shardCache.set(companyId, { shard: row.shard, expiresAt: asOf + SHARD_CACHE_MS });
  return row.shard;
}

/**
 * Drops what this isolate knows of a company's shard (all companies when none is given), so
 * that the next use reads the directory: for the move command, after it switches a company.
 */
export function forgetShard(companyId?: number): void {
  if (companyId === undefined) shardCache.clear();
  else shardCache.delete(companyId);
}

/**
 * The D1 binding that holds a company's rows.
 *
 * @throws UnknownCompanyError when the company is not in the directory or its shard is not
 *   bound to this Worker.
 */
export async function companyD1(env: DirectoryEnv, companyId: number): Promise<D1Database> {
  return (await companyShard(env, companyId)).binding;
}

/**
 * A company's shard: its binding name and its D1 binding (the request's session is opened
 * on it, and its bookmarks carry the name: src/db/session.ts).
 *
 * @throws UnknownCompanyError as {@link companyD1}.
 */
export async function companyShard(
  env: DirectoryEnv,
  companyId: number,
): Promise<{ name: string; binding: D1Database }> {
  const name = await shardOf(env, companyId);
  const binding = name === null ? undefined : shardBindings(env).get(name);
  if (name === null || !binding) throw new UnknownCompanyError(companyId);
  return { name, binding };
}

/**
 * The Drizzle client of a company's shard.
 *
 * @throws UnknownCompanyError as {@link companyD1}.
 */
export async function companyDb(env: DirectoryEnv, companyId: number): Promise<Database> {
  return createDb(await companyD1(env, companyId));
}

/** Range index -> shard name, as the directory assigned them (an assignment never changes). */
const rangeOwners = new Map<number, string>();

/**
 * The shard that allocated an integer id: the owner of the id's range.
 *
 * @returns the shard's binding name, or null for an id of no range handed out.
 */
async function shardOfId(env: DirectoryEnv, id: number): Promise<string | null> {
  const rangeIndex = Math.floor(id / RANGE_SIZE);
  const known = rangeOwners.get(rangeIndex);
  if (known !== undefined) return known;
  // An assignment never changes: a replica's answer is final; a range it does not know yet
  // (handed out a moment ago) is asked at the primary.
  const { value: row } = await readDirectory(
    env.DB,
    (session) =>
      session
        .prepare("SELECT shard FROM shard_ranges WHERE range_index = CAST(?1 AS INTEGER)")
        .bind(rangeIndex)
        .first<{ shard: string }>(),
    (found) => found !== null,
  );
  if (!row) return null;
  rangeOwners.set(rangeIndex, row.shard);
  return row.shard;
}

/** The tables whose rows the operator API addresses by a global integer id. */
export type GlobalIdTable = "machines" | "stops" | "stop_classifications";

/**
 * The company that owns the row of `table` with this global id, and the shard that holds it.
 * The rule (docs/scaling.md): the id's range names the shard that allocated it; the row there
 * names its company; the directory confirms the company still lives on that shard. A row
 * whose company moved is looked for in the current shards of the companies that left the
 * range's shard (`company_departures`), again confirmed by the directory; so the answer stays
 * exact after a move, and costs one directory read and one shard read in the common case.
 *
 * @returns the owner's id and the client of its current shard, or null when no current copy of
 *   the row is where the directory says its company is.
 */
export async function locateById(
  env: DirectoryEnv,
  table: GlobalIdTable,
  id: number,
): Promise<{ companyId: number; db: Database } | null> {
  const origin = await shardOfId(env, id);
  if (origin === null) return null;
  const bindings = shardBindings(env);
  const ownerIn = async (shard: string, companies?: readonly number[]) => {
    const binding = bindings.get(shard);
    if (!binding) return null;
    const row = await binding
      .prepare(`SELECT company_id FROM ${table} WHERE id = CAST(?1 AS INTEGER)`)
      .bind(id)
      .first<{ company_id: number }>();
    if (!row || (companies && !companies.includes(row.company_id))) return null;
    return (await shardOf(env, row.company_id)) === shard
      ? { companyId: row.company_id, db: createDb(binding) }
      : null;
  };
  const found = await ownerIn(origin);
  if (found) return found;
  // No departure known to a replica may be one written a moment ago: asked at the primary.
  const { value: results } = await readDirectory(
    env.DB,
    async (session) =>
      (
        await session
          .prepare(
            `SELECT d.company_id AS company_id, c.shard AS shard FROM company_departures d
             JOIN companies c ON c.id = d.company_id WHERE d.from_shard = ?1`,
          )
          .bind(origin)
          .all<{ company_id: number; shard: string | null }>()
      ).results,
    (rows) => rows.length > 0,
  );
  const byShard = new Map<string, number[]>();
  for (const r of results) {
    if (r.shard !== null && r.shard !== origin) {
      byShard.set(r.shard, [...(byShard.get(r.shard) ?? []), r.company_id]);
    }
  }
  for (const [shard, companies] of byShard) {
    const moved = await ownerIn(shard, companies);
    if (moved) return moved;
  }
  return null;
}

/**
 * The company and shard of a row addressed by a random text id that no range or directory
 * key names (a webhook delivery's uuid): every shard is asked, one read each, and the
 * directory confirms the owner's shard. For rare operator calls only (a delivery replay);
 * its cost grows with the number of shards.
 *
 * @returns the owner's id and the client of its shard, or null.
 */
export async function locateInEveryShard(
  env: DirectoryEnv,
  table: "webhook_deliveries",
  id: string,
): Promise<{ companyId: number; db: Database } | null> {
  for (const [name, binding] of shardBindings(env)) {
    const row = await binding
      .prepare(`SELECT company_id FROM ${table} WHERE id = ?1`)
      .bind(id)
      .first<{ company_id: number }>();
    if (row && (await shardOf(env, row.company_id)) === name) {
      return { companyId: row.company_id, db: createDb(binding) };
    }
  }
  return null;
}
