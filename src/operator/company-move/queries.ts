/**
 * The D1 work and bindings of a company move (./move.ts): the directory's statements that mark,
 * switch and place the company, the shards by name and the realtime objects' flush, as the
 * `MoveDeps` the move runs on (docs/scaling.md, "Moving a company to another shard").
 */
import { createDb } from "../../db/client";
import { scopeIn } from "../../db/company-scope";
import { freshRange } from "../../db/shard-placement";
import { forgetShard, SHARD_CACHE_MS, shardBindings } from "../../db/shards";
import { syncPendingMachines } from "../../durable/realtime-barrier";
import type { Env } from "../../env";
import { heldWritesOf } from "../../realtime/machine-stub";
import type { MoveDeps } from "./move";

/**
 * The Worker's side of a move: the directory (`DB`: the company's shard, its moving mark and
 * its departures), the shard bindings by name and the realtime objects' flush.
 *
 * @param env the Worker's bindings.
 * @returns the `MoveDeps` that `moveCompany` runs on; its functions reject with D1's errors.
 */
export function moveDeps(env: Env): MoveDeps {
  const bindings = shardBindings(env);
  return {
    shard: (name) => bindings.get(name) ?? null,
    placementOf: async (companyId) => {
      const row = await env.DB.prepare("SELECT shard FROM companies WHERE id = CAST(?1 AS INTEGER)")
        .bind(companyId)
        .first<{ shard: string | null }>();
      return row ? (row.shard ?? null) : null;
    },
    markMoving: async (companyId, until) => {
      await env.DB.prepare(
        "UPDATE companies SET moving_until = CAST(?2 AS INTEGER) WHERE id = CAST(?1 AS INTEGER)",
      )
        .bind(companyId, until)
        .run();
    },
    switchTo: async (companyId, target) => {
      const from = await env.DB.prepare(
        "SELECT shard FROM companies WHERE id = CAST(?1 AS INTEGER)",
      )
        .bind(companyId)
        .first<{ shard: string }>();
      await env.DB.batch([
        env.DB.prepare(
          "UPDATE companies SET shard = ?2, moving_until = NULL WHERE id = CAST(?1 AS INTEGER)",
        ).bind(companyId, target),
        // Rows with ids of the old shard's ranges are now in the target (src/db/shards.ts, locateById).
        env.DB.prepare(
          "INSERT INTO company_departures (from_shard, company_id) VALUES (?1, CAST(?2 AS INTEGER)) " +
            "ON CONFLICT DO NOTHING",
        ).bind(from?.shard ?? "", companyId),
      ]);
      forgetShard(companyId);
    },
    freshIdRanges: async (target) => {
      await freshRange(env, target);
    },
    flushRealtime: (source, companyId) =>
      syncPendingMachines(heldWritesOf(env), scopeIn(createDb(source), companyId)),
    placementCacheMs: SHARD_CACHE_MS,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  };
}
