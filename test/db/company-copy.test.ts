/**
 * A company's rows between two shards (src/db/company-copy.ts): the bulk copy over every
 * owned table (a BLOB larger than a statement may carry included), the changes recorded
 * meanwhile applied (an update, a delete that cascades), the fence that refuses a write
 * whole (503 with Retry-After through the API), and the removal.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyChanges, copyCompany, countRows, removeCompany } from "../../src/db/company-copy";
import { ownedTables } from "../../src/db/company-tables";
import { installMoveTriggers, setMoveState } from "../../src/db/move-fence";
import { freshRange } from "../../src/db/shard-placement";
import { api, createCompany, createMachines } from "../harness";

function binding(name: string): D1Database {
  const d1 = (env as unknown as Record<string, D1Database | undefined>)[name];
  if (!d1) throw new Error(`no binding ${name}`);
  return d1;
}

/**
 * The company's shard and the other one, which gets a fresh id range first, as a move gives
 * it (src/operator/company-move/move.ts): the copy's ids then stay below its sequences, and
 * the files that run after this one in the same runtime get ids no other shard gives.
 */
async function shards(companyId: number): Promise<{ source: D1Database; target: D1Database }> {
  const row = await env.DB.prepare("SELECT shard FROM companies WHERE id = ?1")
    .bind(companyId)
    .first<{ shard: string }>();
  const from = row?.shard ?? "";
  const to = from === "SHARD_0" ? "SHARD_1" : "SHARD_0";
  await freshRange(env, to);
  return { source: binding(from), target: binding(to) };
}

const nonZero = (counts: Map<string, number>) => [...counts].filter(([, n]) => n > 0);

describe("a company's rows between shards", () => {
  it("lists the owned tables parents first, the company's row first of all", () => {
    const names = ownedTables().map((t) => t.name);
    expect(names[0]).toBe("companies");
    expect(names).not.toContain("api_keys");
    for (const [child, parent] of [
      ["machines", "companies"],
      ["signals", "machines"],
      ["production_logs", "shift_instances"],
      ["idempotency_chunks", "idempotency_keys"],
      ["machine_writes", "machines"],
      ["webhook_attempts", "webhook_deliveries"],
    ]) {
      expect(names.indexOf(child ?? ""), child).toBeGreaterThan(names.indexOf(parent ?? ""));
    }
  });

  it("copies every row, BLOBs of 1 MB included, applies later changes, fences and removes", async () => {
    const co = await createCompany();
    await createMachines(co.id, [{ name: "A" }, { name: "B" }]);
    const made = await api(co.key, "/v1/skus", {
      method: "POST",
      json: [{ sku: "S1" }, { sku: "S2" }],
    });
    const [s1] = (await made.json()) as { id: string }[];
    const { source, target } = await shards(co.id);
    // A stored answer of 1 MB in pieces, as src/http/idempotency.ts keeps a large one.
    await source
      .prepare(
        "INSERT INTO idempotency_keys (credential_id, key, company_id, fingerprint, state, " +
          "lock_token, locked_at, created_at, expires_at) VALUES ('c1', 'k1', ?1, 'f', 'done', 't', 0, 0, 9e12)",
      )
      .bind(co.id)
      .run();
    const big = new Uint8Array(1_000_000).map((_, i) => (i * 7) % 256);
    await source
      .prepare(
        "INSERT INTO idempotency_chunks (credential_id, key, seq, data) VALUES ('c1', 'k1', 0, ?1)",
      )
      .bind(big)
      .run();

    await installMoveTriggers(source);
    await installMoveTriggers(target);
    await setMoveState(source, co.id, "tracking");
    await copyCompany(source, target, co.id);
    expect(nonZero(await countRows(target, co.id))).toEqual(
      nonZero(await countRows(source, co.id)),
    );
    const chunk = await target
      .prepare("SELECT data FROM idempotency_chunks WHERE credential_id = 'c1' AND key = 'k1'")
      .first<{ data: number[] }>();
    expect(chunk?.data.length).toBe(1_000_000);
    expect(new Uint8Array(chunk?.data ?? [])).toEqual(big);

    // Changes after the copy: a rename, a new SKU, and a stored answer deleted (its piece with it).
    expect(
      (await api(co.key, `/v1/skus/${s1?.id}`, { method: "PATCH", json: { name: "Renamed" } }))
        .status,
    ).toBe(204);
    expect((await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "S3" }] })).status).toBe(
      200,
    );
    await source.prepare("DELETE FROM idempotency_keys WHERE credential_id = 'c1'").run();
    const round = await applyChanges(source, target, co.id);
    expect(round).toEqual({ applied: 3, remaining: 0 });
    expect(nonZero(await countRows(target, co.id))).toEqual(
      nonZero(await countRows(source, co.id)),
    );
    const renamed = await target
      .prepare("SELECT name FROM skus WHERE id = ?1")
      .bind(s1?.id)
      .first<{ name: string }>();
    expect(renamed?.name).toBe("Renamed");

    // Fenced: a write is refused whole, answered 503 with Retry-After; nothing is written.
    await setMoveState(source, co.id, "fenced");
    const before = await countRows(source, co.id);
    const refused = await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "S4" }] });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(await countRows(source, co.id)).toEqual(before);

    // Removed: nothing of the company left in the source; the fence stays up.
    await setMoveState(source, co.id, "gone");
    await removeCompany(source, co.id, "gone");
    expect(nonZero(await countRows(source, co.id))).toEqual([]);
    const stale = await source
      .prepare(
        "INSERT INTO skus (id, company_id, sku, created_at, updated_at) VALUES ('x', ?1, 'S9', 0, 0)",
      )
      .bind(co.id)
      .run()
      .catch((e: unknown) => e);
    expect(String(stale)).toContain("company_moving");
  });

  it("never writes over nor deletes another company's row that has the same key in the target", async () => {
    const mover = await createCompany({ shard: "SHARD_0" });
    const other = await createCompany({ shard: "SHARD_1" });
    const source = binding("SHARD_0");
    const target = binding("SHARD_1");
    const sku = (companyId: number, id: string, code: string) =>
      "INSERT INTO skus (id, company_id, sku, created_at, updated_at) " +
      `VALUES ('${id}', ${companyId}, '${code}', 0, 0)`;
    const id = `same-key-${crypto.randomUUID()}`;
    await source.prepare(sku(mover.id, id, "MOVER")).run();
    await target.prepare(sku(other.id, id, "OTHER")).run();
    const otherRow = () =>
      target
        .prepare("SELECT company_id, sku FROM skus WHERE id = ?1")
        .bind(id)
        .first<{ company_id: number; sku: string }>();

    await installMoveTriggers(source);
    await setMoveState(source, mover.id, "tracking");
    await expect(copyCompany(source, target, mover.id)).rejects.toThrow(
      /row\(s\) of skus have the key of another company's row/,
    );
    expect(await otherRow()).toEqual({ company_id: other.id, sku: "OTHER" });

    // The mover's row deleted at the source: the change reaches the target as a delete of
    // that key, which must leave the other company's row alone.
    await source.prepare("DELETE FROM skus WHERE id = ?1").bind(id).run();
    await applyChanges(source, target, mover.id);
    expect(await otherRow()).toEqual({ company_id: other.id, sku: "OTHER" });
    await removeCompany(target, mover.id, null);
    await setMoveState(source, mover.id, null);
  });
});
