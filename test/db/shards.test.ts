/**
 * Companies spread over D1 shards (src/db/shards.ts, docs/scaling.md): placement, where a
 * company's rows are (each binding read directly), globally unique ids, lookups by id after a
 * move, and a shard added to the deployment.
 */
import {
  applyD1Migrations,
  createExecutionContext,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createDb } from "../../src/db/client";
import { machines } from "../../src/db/schema";
import { freshRange } from "../../src/db/shard-placement";
import {
  forgetShard,
  locateById,
  RANGE_SIZE,
  RANGED_TABLES,
  shardBindings,
  shardOf,
} from "../../src/db/shards";
import type { Env } from "../../src/env";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  OPERATOR_TOKEN,
  operator,
  operatorJson,
  type TestCompany,
} from "../harness";

/** Tables of company rows this test fills, with the rows it writes for each company. */
const FILLED = ["companies", "machines", "signals", "skus", "stops", "shift_definitions"];

/** A company with a machine, a signal, a SKU, a stop and a shift, each carrying `mark`. */
async function filledCompany(mark: string): Promise<TestCompany & { machineId: number }> {
  const co = await createCompany();
  const [machine] = await createMachines(co.id, [{ name: `Machine ${mark}` }]);
  if (!machine) throw new Error("no machine");
  await createSignal(machine.id, { name: `signal-${mark}` });
  const sku = await api(co.key, "/v1/skus", {
    method: "POST",
    json: [{ sku: `SKU-${mark}`, description: mark }],
  });
  expect(sku.status, await sku.clone().text()).toBe(200);
  await operatorJson("POST", `/machines/${machine.id}/stops`, [
    { startTime: "2026-03-02T08:00:00Z", endTime: "2026-03-02T08:10:00Z", isProgrammed: false },
  ]);
  await operatorJson("POST", `/companies/${co.id}/shifts`, [
    { name: `Shift ${mark}`, startTime: "06:00", endTime: "14:00" },
  ]);
  return { ...co, machineId: machine.id };
}

/** How many rows of the company each table of a database holds. */
async function rowsOf(db: D1Database, companyId: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of FILLED) {
    const column = table === "companies" ? "id" : "company_id";
    const row = await db
      .prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ?1`)
      .bind(companyId)
      .first<{ n: number }>();
    counts[table] = row?.n ?? 0;
  }
  return counts;
}

/** The shards (by binding name) holding any row of the company, and whether the directory does. */
async function whereIs(companyId: number): Promise<string[]> {
  const holding: string[] = [];
  for (const [name, shard] of shardBindings(env)) {
    const counts = await rowsOf(shard, companyId);
    if (Object.values(counts).some((n) => n > 0)) holding.push(name);
  }
  return holding;
}

describe("companies on shards", () => {
  it("places two companies created one after the other on different shards, each whole in one", async () => {
    const first = await filledCompany("first");
    const second = await filledCompany("second");
    const [shardOfFirst, shardOfSecond] = [await whereIs(first.id), await whereIs(second.id)];
    expect(shardOfFirst).toHaveLength(1);
    expect(shardOfSecond).toHaveLength(1);
    expect(shardOfFirst).not.toEqual(shardOfSecond);
    // Every row the calls wrote is in that one shard.
    for (const co of [first, second]) {
      const [name] = await whereIs(co.id);
      const shard = shardBindings(env).get(name ?? "");
      if (!shard) throw new Error("no shard");
      const counts = await rowsOf(shard, co.id);
      for (const table of FILLED) expect(counts[table], table).toBeGreaterThan(0);
      // The directory names that shard and lists it.
      expect(await shardOf(env, co.id)).toBe(name);
    }
    const listed = await operatorJson<{ id: number; shard: string }[]>("GET", "/companies");
    expect(listed.find((c) => c.id === first.id)?.shard).toBe(shardOfFirst[0]);
    // The directory holds the companies and their keys, and no catalog row at all.
    const directory = await rowsOf(env.DB, first.id);
    expect(directory).toEqual({ ...Object.fromEntries(FILLED.map((t) => [t, 0])), companies: 1 });
    for (const table of ["machines", "signals", "skus", "stops", "production_logs"]) {
      const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
      expect(row?.n, table).toBe(0);
    }
    // And the public API of each sees its own machine only.
    const seen = await api(first.key, "/v1/machines").then((r) => r.json());
    expect(seen).toEqual([expect.objectContaining({ name: "Machine first" })]);
  });

  it("gives each shard its own id range, and the operator API finds a machine of either by id", async () => {
    const a = await createCompany();
    const b = await createCompany();
    const [ma] = await createMachines(a.id, [{ name: "A" }]);
    const [mb] = await createMachines(b.id, [{ name: "B" }]);
    if (!ma || !mb) throw new Error("no machine");
    expect(await shardOf(env, a.id)).not.toBe(await shardOf(env, b.id));
    expect(Math.floor(ma.id / RANGE_SIZE)).not.toBe(Math.floor(mb.id / RANGE_SIZE));
    for (const m of [ma, mb]) {
      const res = await operator("POST", `/machines/${m.id}/signals`, [
        { name: "power", displayName: "Power", kind: "analog" },
      ]);
      expect(res.status).toBe(201);
    }
    // An id of no range handed out, and one of a range whose shard has no such row: 404.
    const power = [{ name: "power", displayName: "Power", kind: "analog" }];
    expect((await operator("POST", `/machines/${5000 * RANGE_SIZE}/signals`, power)).status).toBe(
      404,
    );
    expect((await operator("DELETE", `/stops/${ma.id + 1_000_000}`)).status).toBe(404);
  });

  it("places a company on the shard the operator names, and refuses an unknown one with 422", async () => {
    for (const shard of shardBindings(env).keys()) {
      const [co] = await operatorJson<{ id: number; shard: string }[]>("POST", "/companies", [
        { name: `On ${shard}`, timezone: "UTC", shard },
      ]);
      expect(co?.shard).toBe(shard);
      expect(await shardOf(env, co?.id ?? 0)).toBe(shard);
    }
    const res = await operator("POST", "/companies", [
      { name: "Nowhere", timezone: "UTC" },
      { name: "Nowhere", timezone: "UTC", shard: "SHARD_77" },
    ]);
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [expect.objectContaining({ loc: ["body", 1, "shard"], type: "value_error.shard" })],
    });
    const names = (await operatorJson<{ name: string }[]>("GET", "/companies")).map((c) => c.name);
    expect(names).not.toContain("Nowhere");
  });

  it("keeps a uuid and a signal's public id unique across shards", async () => {
    const a = await createCompany();
    const b = await createCompany();
    expect(await shardOf(env, a.id)).not.toBe(await shardOf(env, b.id));
    const uuid = crypto.randomUUID();
    const [ma] = await createMachines(a.id, [{ name: "A", uuid }]);
    const taken = await operator("POST", `/companies/${b.id}/machines`, [{ name: "B", uuid }]);
    expect(taken.status).toBe(409);
    const [mb] = await createMachines(b.id, [{ name: "B" }]);
    const publicId = crypto.randomUUID();
    const first = await operator("POST", `/machines/${ma?.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog", publicId },
    ]);
    expect(first.status).toBe(201);
    const again = await operator("POST", `/machines/${mb?.id}/signals`, [
      { name: "power", displayName: "Power", kind: "analog", publicId },
    ]);
    expect(again.status).toBe(409);
    // The directory finds the signal's company by its public id.
    expect((await operator("DELETE", `/signals/${publicId}`)).status).toBe(204);
  });

  it("lists every AUTOINCREMENT table of company rows among the ranged tables", async () => {
    const [shard] = shardBindings(env).values();
    if (!shard) throw new Error("no shard");
    const { results } = await shard
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%AUTOINCREMENT%' ORDER BY name",
      )
      .all<{ name: string }>();
    // companies and api_keys take their ids from the directory; shard_ranges is the directory's
    // counter; d1_migrations is wrangler's.
    const own = new Set(["companies", "api_keys", "shard_ranges", "d1_migrations"]);
    expect(results.map((r) => r.name).filter((name) => !own.has(name))).toEqual(
      [...RANGED_TABLES].sort(),
    );
  });

  it("finds a row by its id after its company moved, and a fresh range keeps new ids apart", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Mover" }]);
    if (!m) throw new Error("no machine");
    const from = await shardOf(env, co.id);
    const to = [...shardBindings(env).keys()].find((name) => name !== from);
    const source = shardBindings(env).get(from ?? "");
    const target = shardBindings(env).get(to ?? "");
    if (!from || !to || !source || !target) throw new Error("no second shard");
    // What the move command does, in short: copy, switch the directory, record the departure,
    // remove the old rows.
    const company = await source
      .prepare("SELECT * FROM companies WHERE id = ?1")
      .bind(co.id)
      .first<Record<string, unknown>>();
    const row = await createDb(source).select().from(machines).where(eq(machines.id, m.id)).get();
    if (!company || !row) throw new Error("nothing to copy");
    await target
      .prepare(
        "INSERT INTO companies (id, name, timezone, webhook_secret, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
      )
      .bind(company.id, company.name, company.timezone, company.webhook_secret, company.created_at)
      .run();
    await createDb(target).insert(machines).values(row);
    await env.DB.batch([
      env.DB.prepare("UPDATE companies SET shard = ?1 WHERE id = ?2").bind(to, co.id),
      env.DB.prepare(
        "INSERT INTO company_departures (from_shard, company_id) VALUES (?1, ?2)",
      ).bind(from, co.id),
    ]);
    await source.prepare("DELETE FROM machines WHERE id = ?1").bind(m.id).run();
    forgetShard(co.id);
    const found = await locateById(env, "machines", m.id);
    expect(found?.companyId).toBe(co.id);
    expect(found?.db.$client).toBe(target);
    // Copied ids may be above the target's sequence: a fresh range puts its next ids above all.
    const range = await freshRange(env, to);
    const [next] = await createDb(target)
      .insert(machines)
      .values({ companyId: co.id, name: "After the move" })
      .returning({ id: machines.id });
    expect(Math.floor((next?.id ?? 0) / RANGE_SIZE)).toBe(range);
    expect(next?.id ?? 0).toBeGreaterThan(m.id);
  });
});

describe("a shard added to the deployment", () => {
  it("is migrated, registered with a range of its own, and takes the next company", async () => {
    // The deployment declares one more binding (test-only database SPARE_D1 as SHARD_9).
    await applyD1Migrations(env.SPARE_D1, env.TEST_MIGRATIONS);
    const wider = { ...(env as unknown as Env), SHARD_9: env.SPARE_D1 } as Env;
    const app = createApp();
    const send = async (path: string, headers: Record<string, string>, body?: unknown) => {
      const ctx = createExecutionContext();
      const res = await app.fetch(
        new Request(`http://api.test${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
        wider,
        ctx,
      );
      await waitOnExecutionContext(ctx);
      return res;
    };
    const asOperator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    // The emptiest shard: the new one, with no company yet.
    const created = await send("/operator/v1/companies", asOperator, [
      { name: "Newcomer", timezone: "UTC" },
    ]);
    expect(created.status).toBe(201);
    const [co] = (await created.json()) as { id: number; shard: string }[];
    expect(co?.shard).toBe("SHARD_9");
    const issued = await send(`/operator/v1/companies/${co?.id}/api-keys`, asOperator, [
      { name: "k", scopes: ["operators.create", "operators.read"] },
    ]);
    const [key] = (await issued.json()) as { key: string }[];
    // A row with an AUTOINCREMENT id, written through the public API: in the new shard, with
    // an id of the range the directory handed it.
    const res = await send("/v1/operators", { "x-api-key": key?.key ?? "" }, [
      { firstName: "Ada", lastName: "New" },
    ]);
    expect(res.status, await res.clone().text()).toBe(200);
    const [person] = (await res.json()) as { id: number }[];
    const range = await env.DB.prepare(
      "SELECT range_index FROM shard_ranges WHERE shard = 'SHARD_9' ORDER BY range_index DESC",
    ).first<{ range_index: number }>();
    expect(range?.range_index).toBeGreaterThan(0);
    expect(Math.floor((person?.id ?? 0) / RANGE_SIZE)).toBe(range?.range_index);
    const stored = await env.SPARE_D1.prepare("SELECT last_name FROM operators WHERE id = ?1")
      .bind(person?.id)
      .first<{ last_name: string }>();
    expect(stored?.last_name).toBe("New");
    for (const shard of shardBindings(env).values()) {
      const elsewhere = await shard
        .prepare("SELECT COUNT(*) AS n FROM operators WHERE company_id = ?1")
        .bind(co?.id)
        .first<{ n: number }>();
      expect(elsewhere?.n).toBe(0);
    }
    // A Worker that does not bind the company's shard cannot reach its data: 503, not 500.
    const unbound = await api(key?.key ?? "", "/v1/operators/filters", {
      method: "POST",
      json: {},
    });
    expect(unbound.status).toBe(503);
    expect(await unbound.json()).toEqual({ detail: "Service Unavailable" });
  });
});

describe("concurrent requests of one company", () => {
  it("each request reads the directory itself: no read is shared between requests", async () => {
    // In workerd a request awaiting a promise settled by another request's I/O continues in
    // that request's context, and then fails on I/O of its own (its body). The test pool runs
    // requests in one context, so the rule is checked where it lives: concurrent cache misses
    // each make their own directory read, and all get the shard.
    const co = await createCompany();
    let reads = 0;
    // Counts the statements, on the binding or on the sessions the reads open on it.
    const counting = <T extends object>(target: T): T =>
      new Proxy(target, {
        get(inner, property) {
          if (property === "prepare") {
            return (query: string) => {
              if (query.includes("moving_until")) reads += 1;
              return (inner as unknown as D1Database).prepare(query);
            };
          }
          if (property === "withSession") {
            return (anchor?: string) =>
              counting((inner as unknown as D1Database).withSession(anchor));
          }
          const value = Reflect.get(inner, property);
          return typeof value === "function" ? value.bind(inner) : value;
        },
      });
    const directory = counting(env.DB);
    forgetShard(co.id);
    const shards = await Promise.all(
      Array.from({ length: 5 }, () => shardOf({ ...env, DB: directory }, co.id)),
    );
    expect(new Set(shards).size).toBe(1);
    expect(shards[0]).toMatch(/^SHARD_\d+$/);
    expect(reads).toBe(5);
    // Then the cache answers.
    await shardOf({ ...env, DB: directory }, co.id);
    expect(reads).toBe(5);
  });
});
