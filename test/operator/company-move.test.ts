/**
 * Moving a company between shards (src/operator/company-move/move.ts) under load: a writer sends
 * production logs through the public API and realtime SKU changes, aiming at 50 writes a
 * second, while the operator moves the company; afterwards every acknowledged write is on the new
 * shard, nothing of the company is left on the old one, no answer was a 5XX other than the
 * fence's 503 (retried), and reads see everything.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ALL_SCOPES } from "../../src/auth/scopes";
import { countRows } from "../../src/db/company-copy";
import { plant, postSku } from "../fixtures/plant";
import { api, createCompany, operator, operatorJson } from "../harness";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function shardBinding(name: string): D1Database {
  const binding = (env as unknown as Record<string, D1Database | undefined>)[name];
  if (!binding) throw new Error(`no binding ${name}`);
  return binding;
}

async function shardOfCompany(companyId: number): Promise<string> {
  const row = await env.DB.prepare("SELECT shard FROM companies WHERE id = ?1")
    .bind(companyId)
    .first<{ shard: string }>();
  if (!row) throw new Error("no company");
  return row.shard;
}

const total = (counts: Map<string, number>) => [...counts.values()].reduce((a, b) => a + b, 0);

describe("POST /operator/v1/companies/{company_id}/move", () => {
  it("moves a company while it writes (aiming at 50 a second), losing none and answering no other 5XX", async () => {
    const p = await plant(2);
    const [m1, m2] = p.machines;
    if (!m1 || !m2) throw new Error("no machines");
    const from = await shardOfCompany(p.co.id);
    // The writer's own key, with room for its 50 writes a second (the default is 600 a minute).
    const [writerKey] = await operatorJson<{ key: string }[]>(
      "POST",
      `/companies/${p.co.id}/api-keys`,
      [{ name: "writer", scopes: ALL_SCOPES, rateLimit: { requests: 100_000, periodSeconds: 60 } }],
    );
    if (!writerKey) throw new Error("no key");
    const writer = { ...p.co, key: writerKey.key };
    const to = from === "SHARD_0" ? "SHARD_1" : "SHARD_0";

    // Data before the move: 200 production logs in one call.
    const base = Date.UTC(2026, 0, 5, 0, 0);
    const log = (i: number) => ({
      start: new Date(base + i * 60_000).toISOString(),
      end: new Date(base + (i + 1) * 60_000).toISOString(),
      count: i,
      machine: { id: m1.id },
      sku: { id: p.a.id },
    });
    const first = await api(p.co.key, "/v1/production-logs", {
      method: "POST",
      json: Array.from({ length: 200 }, (_, i) => log(i)),
    });
    expect(first.status).toBe(200);
    const acked = new Set(((await first.json()) as { id: string }[]).map((l) => l.id));

    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    let realtimeAcked = 0;
    let retries = 0;
    let next = 200;
    const writeLog = async () => {
      const i = next++;
      for (;;) {
        const res = await api(writer.key, "/v1/production-logs", {
          method: "POST",
          json: [log(i)],
        });
        count(res.status);
        if (res.status === 200) {
          for (const l of (await res.json()) as { id: string }[]) acked.add(l.id);
          return;
        }
        expect(res.status, await res.text()).toBe(503);
        expect(res.headers.get("retry-after")).toBe("1");
        retries++;
        await sleep(1_000);
      }
    };
    let sku = 0;
    const writeRealtime = async () => {
      const body = { sku: (sku++ % 2 === 0 ? p.a : p.b).sku };
      for (;;) {
        const res = await postSku(writer, m2.id, body);
        count(res.status);
        if (res.status === 204) {
          realtimeAcked++;
          return;
        }
        expect(res.status, await res.text()).toBe(503);
        retries++;
        await sleep(1_000);
      }
    };

    // 50 writes a second: every 20 ms a write, one in five a realtime one, not waiting for
    // the answers (a write that waits during the switch does not hold the next ones back).
    let writing = true;
    const pending: Promise<void>[] = [];
    let sent = 0;
    const started = Date.now();
    const writing$ = (async () => {
      while (writing) {
        // On a schedule, not after a fixed pause: a slow turn of the loop is caught up, at
        // most 5 writes at once (a stalled isolate must not get hundreds in one burst).
        const due = Math.min(Math.floor((Date.now() - started) / 20), sent + 5);
        while (sent < due) {
          pending.push(sent % 5 === 4 ? writeRealtime() : writeLog());
          sent++;
        }
        await sleep(5);
      }
    })();
    await sleep(500);
    const sentBefore = sent;
    const moved = await operator("POST", `/companies/${p.co.id}/move`, { shard: to });
    const sentDuringMove = sent - sentBefore;
    const report = (await moved.json()) as {
      switchMs: number;
      statements: number;
      rows: Record<string, number>;
    };
    expect(moved.status, JSON.stringify(report)).toBe(200);
    await sleep(500);
    writing = false;
    await writing$;
    const seconds = (Date.now() - started) / 1000;
    await Promise.all(pending);

    // 5XX: none but the fence's 503, each retried to success.
    const fiveXX = [...statuses].filter(([s]) => s >= 500 && s !== 503);
    expect(fiveXX).toEqual([]);
    console.log(
      `move: ${sent} writes in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s), ` +
        `${sentDuringMove} during the move, ` +
        `switch ${report.switchMs} ms, ${report.statements} statements, statuses ${JSON.stringify([...statuses])}, retries ${retries}`,
    );
    // The writer aims at 50 a second; inside the test pool one isolate runs the writer, the
    // Worker and its Durable Objects, so a loaded machine reaches less (25 to 45 here), and a
    // rate is a benchmark's target, not a test's: bench/company-move.ts holds 50 a second
    // against wrangler dev. What this test needs is writes in flight across the whole move.
    expect(sentDuringMove).toBeGreaterThanOrEqual(50);
    // Well inside one invocation's 1,000 D1 statements (counted by the move itself).
    expect(report.statements).toBeGreaterThan(0);
    expect(report.statements).toBeLessThan(1_000);

    // Every acknowledged production log is on the new shard, none of the company's rows on the old.
    const target = shardBinding(to);
    const ids = [...acked];
    const onTarget = await target
      .prepare(
        "SELECT count(*) AS n FROM production_logs WHERE id IN (SELECT value FROM json_each(?1))",
      )
      .bind(JSON.stringify(ids))
      .first<{ n: number }>();
    expect(onTarget?.n).toBe(ids.length);
    expect(total(await countRows(shardBinding(from), p.co.id))).toBe(0);
    expect(await shardOfCompany(p.co.id)).toBe(to);

    // Reads after the move see every acknowledged write.
    const search = await api(p.co.key, "/v1/production-logs/filters", {
      method: "POST",
      json: { machines: { include: [m1.id] }, limit: 1 },
    });
    expect(search.status).toBe(200);
    expect(((await search.json()) as { totalCount: number }).totalCount).toBe(ids.length);
    const state = await api(p.co.key, `/v1/realtime/${m2.id}`);
    expect(state.status).toBe(200);
    expect(((await state.json()) as { revision: number }).revision).toBe(realtimeAcked);
    // The realtime logs reach the new shard: the machine's segments, flushed through the barrier.
    const realtimeLogs = await api(p.co.key, "/v1/production-logs/filters", {
      method: "POST",
      json: { machines: { include: [m2.id] }, limit: 100 },
    });
    expect(realtimeLogs.status).toBe(200);
    const segments = ((await realtimeLogs.json()) as { totalCount: number }).totalCount;
    expect(segments).toBeGreaterThan(0);
    const onNew = await target
      .prepare("SELECT count(*) AS n FROM production_logs WHERE machine_id = ?1")
      .bind(m2.id)
      .first<{ n: number }>();
    expect(onNew?.n).toBe(segments);
  });

  it("refuses an unknown company (404), an unknown shard (422) and the company's own (409)", async () => {
    const co = await createCompany();
    const own = await shardOfCompany(co.id);
    const unknown = await operator("POST", "/companies/987654321/move", { shard: "SHARD_1" });
    expect(unknown.status).toBe(404);
    const noShard = await operator("POST", `/companies/${co.id}/move`, { shard: "SHARD_9" });
    expect(noShard.status).toBe(422);
    expect(((await noShard.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual([
      "body",
      "shard",
    ]);
    const same = await operator("POST", `/companies/${co.id}/move`, { shard: own });
    expect(same.status).toBe(409);
    expect(await shardOfCompany(co.id)).toBe(own);
  });
});
