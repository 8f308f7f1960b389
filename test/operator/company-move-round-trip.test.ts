/**
 * A company as a plant has it (machines with a week of production logs, stops open and
 * closed, classified and not, kept KPI figures, realtime logs) moved to the other shard and
 * back (issue 42): every row of every owned table, kept figures and write counts included,
 * is the same after each move as before it; and a move that fails leaves the target shard
 * as it was and the company where it was.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { countRows } from "../../src/db/company-copy";
import { type OwnedTable, ownedTables } from "../../src/db/company-tables";
import { RANGE_SIZE } from "../../src/db/shards";
import { moveCompany } from "../../src/operator/company-move/move";
import { moveDeps } from "../../src/operator/company-move/queries";
import { realtimeObjectName } from "../../src/realtime/machine-stub";
import { inServiceSince } from "../fixtures/machine-history";
import { ALL_DAY, type Plant, plant, postSku } from "../fixtures/plant";
import { api, createCompany, createMachines, operator, operatorJson } from "../harness";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function binding(name: string): D1Database {
  const d1 = (env as unknown as Record<string, D1Database | undefined>)[name];
  if (!d1) throw new Error(`no binding ${name}`);
  return d1;
}

async function shardOf(companyId: number): Promise<string> {
  const row = await env.DB.prepare("SELECT shard FROM companies WHERE id = ?1")
    .bind(companyId)
    .first<{ shard: string }>();
  if (!row) throw new Error("no company");
  return row.shard;
}

const other = (shard: string) => (shard === "SHARD_0" ? "SHARD_1" : "SHARD_0");

/** Every row of the company in a database, table by table, ordered by primary key. */
async function dump(d1: D1Database, companyId: number): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ownedTables()) {
    const columns = table.columns
      .map((c) => (table.blobColumns.includes(c) ? `hex(t."${c}") AS "${c}"` : `t."${c}"`))
      .join(", ");
    const order = table.primaryKey.map((c) => `t."${c}"`).join(", ");
    const { results } = await d1
      .prepare(`SELECT ${columns} FROM "${table.name}" t WHERE ${table.owner} ORDER BY ${order}`)
      .bind(companyId)
      .all();
    out[table.name] = results;
  }
  return out;
}

const rowsOf = (tables: Record<string, unknown[]>, name: OwnedTable["name"]) =>
  tables[name]?.length ?? 0;

/**
 * A plant with a week of history on two machines: production logs, stops (one open, some
 * classified), kept KPI figures, a realtime SKU running now.
 */
async function plantWithHistory(): Promise<Plant> {
  // Days from midnight: the week's history lies in ended instances, today's runs.
  const p = await plant(2, { shifts: ALL_DAY });
  const [m1, m2] = p.machines;
  if (!m1 || !m2) throw new Error("no machines");
  await inServiceSince(
    p.co.id,
    p.machines.map((m) => m.id),
    new Date(Date.now() - 10 * DAY).toISOString(),
  );
  const midnight = Math.floor(Date.now() / DAY) * DAY;
  const logs = [];
  const stops = [];
  for (let d = 7; d >= 1; d--) {
    const day = midnight - d * DAY;
    for (const m of [m1, m2]) {
      for (let h = 6; h < 22; h += 2) {
        logs.push({
          machine: { id: m.id },
          sku: { id: (h % 4 === 0 ? p.a : p.b).id },
          start: new Date(day + h * HOUR).toISOString(),
          end: new Date(day + (h + 2) * HOUR - 10 * 60_000).toISOString(),
          count: 100 * h + d,
        });
      }
      stops.push(
        { machine: m, start: day + 9 * HOUR, end: day + 9 * HOUR + 20 * 60_000, programmed: false },
        {
          machine: m,
          start: day + 12 * HOUR,
          end: day + 12 * HOUR + 30 * 60_000,
          programmed: true,
        },
      );
    }
  }
  const created = await api(p.co.key, "/v1/production-logs", { method: "POST", json: logs });
  expect(created.status, await created.clone().text()).toBe(200);
  for (const [i, s] of stops.entries()) {
    const [stop] = await operatorJson<{ id: number }[]>("POST", `/machines/${s.machine.id}/stops`, [
      {
        startTime: new Date(s.start).toISOString(),
        endTime: new Date(s.end).toISOString(),
        isProgrammed: s.programmed,
      },
    ]);
    if (i % 3 === 0) {
      await operatorJson("PUT", `/stops/${stop?.id}/classification`, {
        generalCause: { name: i % 2 === 0 ? "Jam" : "Changeover" },
      });
    }
  }
  // An open stop on the first machine, a realtime SKU running on the second.
  await operatorJson("POST", `/machines/${m1.id}/stops`, [
    { startTime: new Date(Date.now() - 20 * 60_000).toISOString(), isProgrammed: false },
  ]);
  expect((await postSku(p.co, m2.id, { skuId: p.a.id })).status).toBe(204);
  // The KPI report keeps the figures of the week's closed instances.
  const week = {
    startDate: { after: new Date(midnight - 8 * DAY).toISOString() },
    groupBy: ["machine", "sku"],
  };
  const kpis = await api(p.co.key, "/v1/reports/kpis", { method: "POST", json: week });
  expect(kpis.status, await kpis.clone().text()).toBe(200);
  // The realtime object quiet: its writes in D1 and its machine's mark removed (its alarm,
  // run until the mark goes), so that nothing but the moves changes the company's rows.
  const stub = env.REALTIME_MACHINE.get(
    env.REALTIME_MACHINE.idFromName(realtimeObjectName(p.co.id, m2.id)),
  );
  const d1 = binding(await shardOf(p.co.id));
  for (let i = 0; i < 5; i++) {
    const marked = await d1
      .prepare("SELECT count(*) AS n FROM realtime_pending WHERE machine_id = ?1")
      .bind(m2.id)
      .first<{ n: number }>();
    if (marked?.n === 0) break;
    await runDurableObjectAlarm(stub);
  }
  return p;
}

describe("a company with stops and kept figures", () => {
  it("moves to the other shard and back with every row and figure equal", async () => {
    const p = await plantWithHistory();
    const home = await shardOf(p.co.id);
    const before = await dump(binding(home), p.co.id);
    expect(rowsOf(before, "instance_figures")).toBeGreaterThan(0);
    expect(rowsOf(before, "stops")).toBeGreaterThan(0);
    expect(rowsOf(before, "stop_classifications")).toBeGreaterThan(0);
    expect(rowsOf(before, "machine_writes")).toBe(2);

    for (const to of [other(home), home]) {
      const from = await shardOf(p.co.id);
      const moved = await operator("POST", `/companies/${p.co.id}/move`, { shard: to });
      expect(moved.status, await moved.clone().text()).toBe(200);
      expect(await shardOf(p.co.id)).toBe(to);
      expect(await dump(binding(to), p.co.id)).toEqual(before);
      const left = await countRows(binding(from), p.co.id);
      expect([...left.values()].reduce((a, b) => a + b, 0)).toBe(0);
    }
    // And the figures answer the same.
    const kpis = await api(p.co.key, "/v1/reports/kpis", {
      method: "POST",
      json: { startDate: { after: new Date(Date.now() - 8 * DAY).toISOString() } },
    });
    expect(kpis.status).toBe(200);
  }, 120_000);

  it("leaves the target as it was, and the company where it was, when the move fails", async () => {
    const p = await plantWithHistory();
    const home = await shardOf(p.co.id);
    const target = other(home);
    const before = await dump(binding(home), p.co.id);
    const targetBefore = await countRows(binding(target), p.co.id);
    const deps = moveDeps(env as never);
    // The directory refuses the switch (the last step before the company reads elsewhere).
    const failing = {
      ...deps,
      placementCacheMs: 0,
      sleep: async () => undefined,
      switchTo: async () => {
        throw new Error("directory unavailable");
      },
    };
    await expect(moveCompany(failing, p.co.id, target)).rejects.toThrow("directory unavailable");
    expect(await shardOf(p.co.id)).toBe(home);
    expect(await countRows(binding(target), p.co.id)).toEqual(targetBefore);
    expect(await dump(binding(home), p.co.id)).toEqual(before);
    // The company writes where it is (its source is not left fenced).
    const write = await api(p.co.key, "/v1/production-logs", {
      method: "POST",
      json: [
        {
          machine: { id: p.machines[0]?.id },
          sku: { id: p.a.id },
          start: new Date(Date.now() - 9 * DAY).toISOString(),
          end: new Date(Date.now() - 9 * DAY + HOUR).toISOString(),
          count: 1,
        },
      ],
    });
    expect(write.status, await write.clone().text()).toBe(200);
    // And a later move goes through.
    const moved = await operator("POST", `/companies/${p.co.id}/move`, { shard: target });
    expect(moved.status, await moved.clone().text()).toBe(200);
  }, 120_000);

  it("leaves the target allocating ids of its own ranges when the move fails after the copy", async () => {
    await createCompany(); // the shards registered (by the first placement), with their ranges
    // The shard of the highest range: its ids copied into the other would pull that one's
    // AUTOINCREMENT into this range, where both would hand out the same ids.
    const high = await env.DB.prepare(
      "SELECT shard FROM shard_ranges ORDER BY range_index DESC LIMIT 1",
    ).first<{ shard: string }>();
    if (!high) throw new Error("no shard range");
    const source = high.shard;
    const target = other(source);
    const moving = await createCompany({ shard: source });
    await createMachines(moving.id, [{ name: "A" }, { name: "B" }]);
    const failing = {
      ...moveDeps(env as never),
      placementCacheMs: 0,
      sleep: async () => undefined,
      // Fails right after the bulk copy, before any switch.
      flushRealtime: async () => {
        throw new Error("realtime unavailable");
      },
    };
    await expect(moveCompany(failing, moving.id, target)).rejects.toThrow("realtime unavailable");
    expect(await shardOf(moving.id)).toBe(source);
    // A new machine on each shard: two companies' machines never share an id, and each id is
    // in a range its own shard holds (how the operator API finds a machine by id).
    const neighbour = await createCompany({ shard: target });
    const [onTarget] = await createMachines(neighbour.id, [{ name: "N1" }]);
    const [onSource] = await createMachines(moving.id, [{ name: "C" }]);
    if (!onTarget || !onSource) throw new Error("no machine");
    expect(onTarget.id).not.toBe(onSource.id);
    const rangesOf = async (shard: string) =>
      (
        await env.DB.prepare("SELECT range_index FROM shard_ranges WHERE shard = ?1")
          .bind(shard)
          .all<{ range_index: number }>()
      ).results.map((r) => r.range_index);
    expect(await rangesOf(target)).toContain(Math.floor(onTarget.id / RANGE_SIZE));
    expect(await rangesOf(source)).toContain(Math.floor(onSource.id / RANGE_SIZE));
  });
});
