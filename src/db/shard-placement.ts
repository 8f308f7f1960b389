/**
 * Shard registration and company placement (docs/scaling.md, docs/operator-api.md).
 *
 * A shard is registered the first time the directory sees its binding: the directory hands
 * it an id range (`shard_ranges`), then the shard's AUTOINCREMENT sequences are set to the
 * range's start, then the range is marked ready. Only shards with a ready range take new
 * companies. Each step is idempotent, so a registration cut short is finished by the next.
 */
import { type DirectoryEnv, RANGE_SIZE, RANGED_TABLES, shardBindings } from "./shards";

/** A shard of this Worker as the directory sees it. */
export interface ShardState {
  /** The binding name (`SHARD_0`, ...). */
  name: string;
  /** The range its new ids come from (its latest). */
  rangeIndex: number;
  /** Companies placed on it (the directory's count). */
  companies: number;
}

/**
 * Sets a shard's AUTOINCREMENT sequences to at least `start` (one batch): its next id of
 * every ranged table is then above `start`, unless the table holds a higher id already
 * (SQLite takes the larger of the sequence and the largest id), which is why a move that
 * copies rows into a shard gives it a fresh range before the copy ({@link freshRange}).
 *
 * @param shard the shard's D1 binding.
 * @param start the first id of the range, `rangeIndex * RANGE_SIZE`.
 */
async function setSequences(shard: D1Database, start: number): Promise<void> {
  await shard.batch(
    RANGED_TABLES.flatMap((table) => [
      shard
        .prepare(
          `INSERT INTO sqlite_sequence (name, seq) SELECT ?1, CAST(?2 AS INTEGER)
           WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)`,
        )
        .bind(table, start),
      shard
        .prepare(
          "UPDATE sqlite_sequence SET seq = CAST(?2 AS INTEGER) WHERE name = ?1 AND seq < CAST(?2 AS INTEGER)",
        )
        .bind(table, start),
    ]),
  );
}

/**
 * Hands a shard a new id range, above every range handed out so far, and sets its
 * sequences to it: for a shard first seen, and for the move command after it copied rows
 * with ids of other ranges into the shard.
 *
 * @returns the new range index.
 */
export async function freshRange(env: DirectoryEnv, shard: string): Promise<number> {
  const binding = shardBindings(env).get(shard);
  if (!binding) throw new Error(`no binding ${shard}`);
  // One statement, so two registrations at once cannot take the same index (the second
  // fails on the primary key). The first range is 0: the first shard's ids start at 1, as on
  // a single database (the demo's fixed ids rely on it); the directory's own ids (companies,
  // API keys) are in tables no shard allocates.
  const row = await env.DB.prepare(
    `INSERT INTO shard_ranges (range_index, shard)
     SELECT COALESCE(MAX(range_index) + 1, 0), ?1 FROM shard_ranges RETURNING range_index`,
  )
    .bind(shard)
    .first<{ range_index: number }>();
  if (!row) throw new Error("no range handed out");
  await setSequences(binding, row.range_index * RANGE_SIZE);
  await env.DB.prepare(
    "UPDATE shard_ranges SET ready_at = CAST(?2 AS INTEGER) WHERE range_index = CAST(?1 AS INTEGER)",
  )
    .bind(row.range_index, Date.now())
    .run();
  return row.range_index;
}

/**
 * Registers every shard binding the directory does not know yet, finishes registrations cut
 * short, and tells what each placeable shard holds. Costs two directory reads when every
 * shard is registered (the case after the first company).
 *
 * @returns the shards that take companies, in binding order.
 */
export async function placeableShards(env: DirectoryEnv): Promise<ShardState[]> {
  const bindings = shardBindings(env);
  const [ranges, counts] = await env.DB.batch([
    env.DB.prepare(
      "SELECT shard, range_index, ready_at FROM shard_ranges ORDER BY range_index DESC",
    ),
    env.DB.prepare(
      "SELECT shard, COUNT(*) AS n FROM companies WHERE shard IS NOT NULL GROUP BY shard",
    ),
  ]);
  const latest = new Map<string, { rangeIndex: number; ready: boolean }>();
  for (const r of (ranges?.results ?? []) as {
    shard: string;
    range_index: number;
    ready_at: number | null;
  }[]) {
    if (!latest.has(r.shard))
      latest.set(r.shard, { rangeIndex: r.range_index, ready: r.ready_at !== null });
  }
  const count = new Map<string, number>();
  for (const r of (counts?.results ?? []) as { shard: string; n: number }[])
    count.set(r.shard, r.n);
  const states: ShardState[] = [];
  for (const [name, binding] of bindings) {
    let range = latest.get(name);
    if (!range) {
      range = { rangeIndex: await freshRange(env, name), ready: true };
    } else if (!range.ready) {
      await setSequences(binding, range.rangeIndex * RANGE_SIZE);
      await env.DB.prepare(
        "UPDATE shard_ranges SET ready_at = CAST(?2 AS INTEGER) WHERE range_index = CAST(?1 AS INTEGER)",
      )
        .bind(range.rangeIndex, Date.now())
        .run();
    }
    states.push({ name, rangeIndex: range.rangeIndex, companies: count.get(name) ?? 0 });
  }
  return states;
}

/**
 * Chooses the shard of each new company: the one named, or else the emptiest by number of
 * companies (the first in binding order among equals), counting the companies placed by the
 * same call. Placing by count keeps the shards within one company of each other, so two
 * companies created one after the other land on different shards (when there are two or
 * more and the operator named none).
 *
 * @param shards the placeable shards ({@link placeableShards}).
 * @param wanted per new company, the shard the operator named, if any (checked by the caller).
 * @returns the shard name of each company, in order.
 */
export function placeCompanies(
  shards: readonly ShardState[],
  wanted: readonly (string | undefined)[],
): string[] {
  const counts = new Map(shards.map((s) => [s.name, s.companies]));
  return wanted.map((name) => {
    let chosen = name;
    if (chosen === undefined) {
      for (const s of shards) {
        if (chosen === undefined || (counts.get(s.name) ?? 0) < (counts.get(chosen) ?? 0)) {
          chosen = s.name;
        }
      }
    }
    if (chosen === undefined) throw new Error("no shard configured");
    counts.set(chosen, (counts.get(chosen) ?? 0) + 1);
    return chosen;
  });
}
