/**
 * A company is never left half-placed (src/db/company-mirror.ts, docs/scaling.md): a crash
 * between the directory's write and the shard's mirror write leaves the company pending,
 * and its first use (a credential, an operator call) or the cron copies the mirror again.
 * The crash is simulated by bindings that die on the mirror's write (and, for a creation, on
 * the call's own clean-up), as a Worker killed between two statements would.
 */
import {
  createExecutionContext,
  createScheduledController,
  env,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { generateApiKey } from "../../src/auth/api-keys";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { mirrorUpsert } from "../../src/db/company-mirror";
import { forgetShard, shardBindings } from "../../src/db/shards";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { countStatements } from "../fixtures/d1-counter";
import { api, createCompany, operator, operatorJson, operatorRequest } from "../harness";

/** The copied fields of a company's row, as a user of the database would compare them. */
const FIELDS =
  "id, name, timezone, webhook_secret, previous_webhook_secret, " +
  "previous_webhook_secret_expires_at, signal_retention_days, revision";

/** A D1 binding that dies (throws) on every statement whose SQL matches `dies`. */
function dyingOn(binding: D1Database, dies: RegExp): D1Database {
  return new Proxy(binding, {
    get(target, prop) {
      if (prop === "prepare") {
        return (query: string) => {
          if (dies.test(query)) throw new Error(`simulated crash before: ${query.slice(0, 40)}`);
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The bindings with the directory and/or every shard replaced by dying ones. */
function crashingEnv(options: { shards?: RegExp; directory?: RegExp }): Env {
  const crashing: Record<string, unknown> = { ...(env as unknown as Env) };
  if (options.directory) crashing.DB = dyingOn(env.DB, options.directory);
  if (options.shards) {
    for (const [name, shard] of shardBindings(env)) {
      crashing[name] = dyingOn(shard, options.shards);
    }
  }
  return crashing as unknown as Env;
}

/** Sends an operator call to the app running on `bindings`. */
async function operatorOn(
  bindings: Env,
  method: string,
  path: string,
  body?: unknown,
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(operatorRequest(method, path, body), bindings, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

const MIRROR_INSERT = /^INSERT INTO companies/i;

/**
 * Creates a company whose creation crashes after the directory's write: the mirror insert
 * dies, and so does the call's clean-up (a killed Worker does not clean up).
 *
 * @returns the id and the shard the directory gave it.
 */
async function halfPlacedCompany(): Promise<{ id: number; shard: string }> {
  const name = `Half placed ${crypto.randomUUID().slice(0, 8)}`;
  const res = await operatorOn(
    crashingEnv({ shards: MIRROR_INSERT, directory: /^delete from "companies"/i }),
    "POST",
    "/companies",
    [{ name, timezone: "Europe/Rome" }],
  );
  expect(res.status).toBe(500);
  const row = await env.DB.prepare(
    "SELECT id, shard, revision, mirrored_revision FROM companies WHERE name = ?1",
  )
    .bind(name)
    .first<{ id: number; shard: string; revision: number; mirrored_revision: number }>();
  if (!row) throw new Error("the directory row was not written");
  expect(row.mirrored_revision).toBeLessThan(row.revision);
  expect(await mirrorOf(row.id, row.shard)).toBeNull();
  return { id: row.id, shard: row.shard };
}

/** An API key with every scope written straight into the directory (no operator call). */
async function keyOf(companyId: number): Promise<string> {
  const { key, prefix, hash } = await generateApiKey();
  await env.DB.prepare(
    "INSERT INTO api_keys (company_id, name, prefix, key_hash, scopes) VALUES (?1, 'k', ?2, ?3, ?4)",
  )
    .bind(companyId, prefix, hash, JSON.stringify(ALL_SCOPES))
    .run();
  return key;
}

async function directoryRowOf(id: number) {
  return env.DB.prepare(`SELECT ${FIELDS}, shard, mirrored_revision FROM companies WHERE id = ?1`)
    .bind(id)
    .first<Record<string, unknown>>();
}

async function mirrorOf(id: number, shard: string) {
  const binding = shardBindings(env).get(shard);
  if (!binding) throw new Error(`no ${shard}`);
  return binding
    .prepare(`SELECT ${FIELDS} FROM companies WHERE id = ?1`)
    .bind(id)
    .first<Record<string, unknown>>();
}

/** The company's mirror holds exactly its directory row's fields, and nothing is pending. */
async function expectInStep(id: number): Promise<void> {
  const directory = await directoryRowOf(id);
  if (!directory) throw new Error("no directory row");
  const { shard, mirrored_revision, ...fields } = directory;
  expect(mirrored_revision).toBe(fields.revision);
  expect(await mirrorOf(id, String(shard))).toEqual(fields);
}

async function runCron(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}

describe("a company whose creation crashed before its mirror", () => {
  it("is completed by the first authentication of its credential, which can then write", async () => {
    const { id } = await halfPlacedCompany();
    const key = await keyOf(id);
    const sku = await api(key, "/v1/skus", {
      method: "POST",
      json: [{ sku: "SKU-HALF", description: "written after the crash" }],
    });
    expect(sku.status, await sku.clone().text()).toBe(200);
    await expectInStep(id);
    const machines = await api(key, "/v1/machines");
    expect(machines.status).toBe(200);
  });

  it("is completed by the next operator call that touches it: a machine is created (201)", async () => {
    const { id } = await halfPlacedCompany();
    const res = await operator("POST", `/companies/${id}/machines`, [{ name: "Press 1" }]);
    expect(res.status, await res.clone().text()).toBe(201);
    await expectInStep(id);
  });

  it("is completed by the cron when nothing touches it", async () => {
    const { id } = await halfPlacedCompany();
    await runCron();
    await expectInStep(id);
  });

  it("leaves no company behind when only the shard refuses (the call cleans up)", async () => {
    const name = `Refused ${crypto.randomUUID().slice(0, 8)}`;
    const res = await operatorOn(crashingEnv({ shards: MIRROR_INSERT }), "POST", "/companies", [
      { name, timezone: "Europe/Rome" },
    ]);
    expect(res.status).toBe(500);
    const row = await env.DB.prepare("SELECT id FROM companies WHERE name = ?1").bind(name).first();
    expect(row).toBeNull();
  });
});

describe("a change of a company cut short before its mirror", () => {
  it("retention: the directory keeps the new setting and the stale mirror is repaired on use", async () => {
    const co = await createCompany();
    const shard = String((await directoryRowOf(co.id))?.shard);
    const res = await operatorOn(
      crashingEnv({ shards: MIRROR_INSERT }),
      "PUT",
      `/companies/${co.id}/signal-retention`,
      { days: 30 },
    );
    expect(res.status).toBe(500);
    expect((await directoryRowOf(co.id))?.signal_retention_days).toBe(30);
    expect((await mirrorOf(co.id, shard))?.signal_retention_days).toBeNull();
    // Another isolate, or this one after SHARD_CACHE_MS: the company's next request reads
    // the directory and finds the mirror pending.
    forgetShard(co.id);
    expect((await api(co.key, "/v1/machines")).status).toBe(200);
    await expectInStep(co.id);
    expect((await mirrorOf(co.id, shard))?.signal_retention_days).toBe(30);
  });

  it("secret rotation: the cron copies the new and the previous secret to the mirror", async () => {
    const co = await createCompany();
    const before = await directoryRowOf(co.id);
    const shard = String(before?.shard);
    const res = await operatorOn(
      crashingEnv({ shards: MIRROR_INSERT }),
      "POST",
      `/companies/${co.id}/webhook-secret/rotate`,
    );
    expect(res.status).toBe(500);
    const after = await directoryRowOf(co.id);
    expect(after?.previous_webhook_secret).toBe(before?.webhook_secret);
    expect((await mirrorOf(co.id, shard))?.webhook_secret).toBe(before?.webhook_secret);
    await runCron();
    await expectInStep(co.id);
    expect((await mirrorOf(co.id, shard))?.webhook_secret).toBe(after?.webhook_secret);
  });

  it("a retry of the operator call repairs it too, and a late older copy never undoes it", async () => {
    const co = await createCompany();
    const shard = String((await directoryRowOf(co.id))?.shard);
    const old = await mirrorOf(co.id, shard);
    await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: 7 });
    await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: 9 });
    await expectInStep(co.id);
    // A copy of an older revision arriving late (a slow earlier call) is skipped.
    const binding = shardBindings(env).get(shard);
    if (!binding || !old) throw new Error("no mirror");
    await mirrorUpsert(binding, {
      id: co.id,
      name: String(old.name),
      timezone: String(old.timezone),
      webhookSecret: String(old.webhook_secret),
      previousWebhookSecret: null,
      previousWebhookSecretExpiresAt: null,
      signalRetentionDays: null,
      signalHotWindowDays: 35,
      revision: Number(old.revision),
      createdAt: Date.now(),
    }).run();
    await expectInStep(co.id);
  });
});

describe("what the repair costs", () => {
  it("nothing on the request of a healthy company; three statements once for a pending one", async () => {
    const healthy = await createCompany();
    const { id } = await halfPlacedCompany();
    const pendingKey = await keyOf(id);
    const machinesOf = async (companyId: number, key: string) => {
      forgetShard(companyId);
      const counted = await countStatements(
        new Request("http://api.test/v1/machines", { headers: { "x-api-key": key } }),
      );
      expect(counted.response.status).toBe(200);
      return counted.statements;
    };
    // First use of each key (not cached): the pending company costs the repair on top,
    // reading its directory row, upserting the mirror, recording it.
    const healthyFirst = await machinesOf(healthy.id, healthy.key);
    expect(await machinesOf(id, pendingKey)).toBe(healthyFirst + 3);
    // Repaired: from then on the same as a company that was never pending.
    expect(await machinesOf(id, pendingKey)).toBe(await machinesOf(healthy.id, healthy.key));
  });

  it("on the operator's company calls: one more statement per company created or retention set", async () => {
    const send = async (method: string, path: string, body?: unknown) => {
      const counted = await countStatements(operatorRequest(method, path, body));
      expect(counted.response.status, await counted.response.clone().text()).toBeLessThan(300);
      return { statements: counted.statements, body: await counted.response.json() };
    };
    // Placeable shards (2), directory inserts (1 per company), mirror upserts (1 per
    // company, one batch per shard), mirrors recorded (1 per company, one batch).
    const created = await send("POST", "/companies", [
      { name: "Cost A", timezone: "UTC" },
      { name: "Cost B", timezone: "UTC" },
    ]);
    expect(created.statements).toBe(2 + 3 * 2);
    const [a] = created.body as { id: number }[];
    if (!a) throw new Error("no company");
    await expectInStep(a.id);
    // The company's shard (1), then directory update, mirror upsert, mirror recorded.
    forgetShard(a.id);
    expect((await send("PUT", `/companies/${a.id}/signal-retention`, { days: 3 })).statements).toBe(
      1 + 3,
    );
    forgetShard(a.id);
    expect((await send("POST", `/companies/${a.id}/webhook-secret/rotate`)).statements).toBe(1 + 3);
    await expectInStep(a.id);
  });

  it("the cron's search reads only the index of pending companies", async () => {
    const { results } = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT * FROM companies WHERE mirrored_revision < revision ORDER BY id LIMIT 100",
    ).all<{ detail: string }>();
    expect(results.map((r) => r.detail).join(" ")).toContain("companies_mirror_pending_idx");
  });
});
