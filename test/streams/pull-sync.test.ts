/**
 * Pull sync (`updatedAt` + `includeDeleted`, ordered by (updatedAt, id)) on the catalog searches
 * (SKUs, operators, simple work orders), the production-log search and the stops report: an integration that follows the cursor
 * recipe of docs/stream-events.md over a burst of edits and deletes, made between its pages,
 * ends with every row as it is, and never gets the same version of a row twice.
 */
import { describe, expect, it } from "vitest";
import { plant } from "../fixtures/plant";
import { api, operator, operatorJson, type TestCompany } from "../harness";

interface Synced {
  id: string | number;
  updatedAt: string;
  deletedAt: string | null;
}

/**
 * The recipe: ask page 1 after the cursor (`syncAfter`: the last row's `updatedAt` and id),
 * in sync order, and move the cursor to the last row received. Between pages `between`
 * runs the writes of the test.
 */
async function syncUntilQuiet<T extends Synced>(
  page: (syncAfter: unknown) => Promise<T[]>,
  replica: Map<string | number, T>,
  cursor: { after: { updatedAt: string; id: string | number } | null },
  received: string[],
  between: () => Promise<void> = async () => {},
): Promise<void> {
  for (let round = 0; round < 200; round += 1) {
    const rows = await page(cursor.after);
    for (let i = 1; i < rows.length; i += 1) {
      const [a, b] = [rows[i - 1], rows[i]];
      if (!a || !b) continue;
      // Ordered by (updatedAt, id).
      expect(a.updatedAt <= b.updatedAt).toBe(true);
    }
    const last = rows.at(-1);
    if (!last) return;
    for (const r of rows) {
      replica.set(r.id, r);
      received.push(`${r.id}@${r.updatedAt}`);
    }
    cursor.after = { updatedAt: last.updatedAt, id: last.id };
    await between();
  }
  throw new Error("did not settle");
}

async function pageOf<T>(
  co: TestCompany,
  path: string,
  key: string,
  filters: Record<string, unknown>,
): Promise<T[]> {
  const res = await api(co.key, path, {
    method: "POST",
    json: { ...filters, includeDeleted: true, page: 1, limit: 5 },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as Record<string, T[]>)[key] ?? [];
}

describe("pull sync by updatedAt", () => {
  it("SKUs: a burst of edits and deletes between pages loses and repeats nothing", async () => {
    const p = await plant();
    const created = await api(p.co.key, "/v1/skus", {
      method: "POST",
      json: Array.from({ length: 17 }, (_, i) => ({ sku: `S-${i}`, name: `n${i}` })),
    });
    expect(created.status).toBe(200);
    const ids = ((await created.json()) as { id: string }[]).map((s) => s.id);
    const replica = new Map<string | number, Synced & { name: string | null }>();
    const received: string[] = [];
    const cursor: Parameters<typeof syncUntilQuiet>[2] = { after: null };
    const beforeBurst = new Date().toISOString();
    let step = 0;
    const page = (syncAfter: unknown) =>
      pageOf<Synced & { name: string | null }>(p.co, "/v1/skus/filters", "skus", { syncAfter });
    await syncUntilQuiet(page, replica, cursor, received, async () => {
      // Concurrent writes while the integration pages: edit one, delete another.
      step += 1;
      if (step > 6) return;
      const edited = ids[step] ?? "";
      await api(p.co.key, `/v1/skus/${edited}`, { method: "PATCH", json: { name: `e${step}` } });
      await api(p.co.key, `/v1/skus/${ids[16 - step] ?? ""}`, { method: "DELETE" });
    });
    // A last pass after the burst (as the next scheduled sync would).
    await syncUntilQuiet(page, replica, cursor, received);

    const truth: (Synced & { name: string | null })[] = [];
    for (let n = 1; ; n += 1) {
      const res = await api(p.co.key, "/v1/skus/filters", {
        method: "POST",
        json: { includeDeleted: true, page: n, limit: 100 },
      });
      const body = (await res.json()) as { skus: (Synced & { name: string | null })[] };
      truth.push(...body.skus);
      if (body.skus.length < 100) break;
    }
    // The date operators on updatedAt: the 12 rows the burst changed are after it, the rest before.
    const changed = await api(p.co.key, "/v1/skus/filters", {
      method: "POST",
      json: { includeDeleted: true, updatedAt: { after: beforeBurst }, limit: 100 },
    });
    expect(((await changed.json()) as { totalCount: number }).totalCount).toBe(12);
    const unchanged = await api(p.co.key, "/v1/skus/filters", {
      method: "POST",
      json: { updatedAt: { before: beforeBurst }, limit: 100 },
    });
    expect(((await unchanged.json()) as { totalCount: number }).totalCount).toBe(8);
    expect(truth).toHaveLength(3 + 17);
    expect(truth.filter((s) => s.deletedAt !== null)).toHaveLength(6);
    expect([...replica.values()].sort((a, b) => String(a.id).localeCompare(String(b.id)))).toEqual(
      truth.sort((a, b) => String(a.id).localeCompare(String(b.id))),
    );
    expect(new Set(received).size).toBe(received.length);
  });

  it("production logs and the stops report follow the same recipe", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    const logs = await api(p.co.key, "/v1/production-logs", {
      method: "POST",
      json: Array.from({ length: 8 }, (_, i) => ({
        start: new Date(Date.UTC(2026, 2, 2, i)).toISOString(),
        end: new Date(Date.UTC(2026, 2, 2, i + 1)).toISOString(),
        count: 100 + i,
        machine: { id: m.id },
        sku: { id: p.b.id },
      })),
    });
    expect(logs.status, await logs.clone().text()).toBe(200);
    const logIds = ((await logs.json()) as { id: string }[]).map((l) => l.id);
    const stops = await operatorJson<{ id: number }[]>(
      "POST",
      `/machines/${m.id}/stops`,
      Array.from({ length: 8 }, (_, i) => ({
        startTime: new Date(Date.UTC(2026, 2, 2, i)).toISOString(),
        endTime: new Date(Date.UTC(2026, 2, 2, i, 30)).toISOString(),
        isProgrammed: false,
      })),
    );

    const logReplica = new Map<string | number, Synced>();
    const stopReplica = new Map<string | number, Synced>();
    const logsReceived: string[] = [];
    const stopsReceived: string[] = [];
    const logCursor: Parameters<typeof syncUntilQuiet>[2] = { after: null };
    const stopCursor: Parameters<typeof syncUntilQuiet>[2] = { after: null };
    const logPage = (syncAfter: unknown) =>
      pageOf<Synced>(p.co, "/v1/production-logs/filters", "productionLogs", { syncAfter });
    const stopPage = async (syncAfter: unknown) =>
      (await pageOf<{ stop: Synced }>(p.co, "/v1/reports/stops", "stops", { syncAfter })).map(
        (r) => r.stop,
      );
    let step = 0;
    await syncUntilQuiet(logPage, logReplica, logCursor, logsReceived, async () => {
      step += 1;
      if (step > 3) return;
      await api(p.co.key, `/v1/production-logs/${logIds[step] ?? ""}`, {
        method: "PATCH",
        json: { count: 1 },
      });
      await api(p.co.key, `/v1/production-logs/${logIds[7 - step] ?? ""}`, { method: "DELETE" });
    });
    step = 0;
    await syncUntilQuiet(stopPage, stopReplica, stopCursor, stopsReceived, async () => {
      step += 1;
      if (step > 3) return;
      const stop = stops[step];
      await operator("PATCH", `/stops/${stop?.id}`, { isProgrammed: true });
      await operator("DELETE", `/stops/${stops[7 - step]?.id}`);
    });
    await syncUntilQuiet(logPage, logReplica, logCursor, logsReceived);
    await syncUntilQuiet(stopPage, stopReplica, stopCursor, stopsReceived);

    expect(logReplica.size).toBe(8);
    expect([...logReplica.values()].filter((l) => l.deletedAt !== null)).toHaveLength(3);
    expect(
      [...logReplica.values()].filter((l) => (l as unknown as { count: number }).count === 1),
    ).toHaveLength(3);
    expect(new Set(logsReceived).size).toBe(logsReceived.length);
    expect(stopReplica.size).toBe(8);
    expect([...stopReplica.values()].filter((s) => s.deletedAt !== null)).toHaveLength(3);
    expect(new Set(stopsReceived).size).toBe(stopsReceived.length);
    // An edited stop was received again after its edit, with the edit.
    const edited = stops[1]?.id;
    expect(stopsReceived.filter((r) => r.startsWith(`${edited}@`)).length).toBeGreaterThan(1);
    expect(stopReplica.get(edited ?? 0)).toMatchObject({ isProgrammed: true });
  });

  it.each([
    {
      what: "operators",
      path: "/v1/operators",
      key: "operators",
      item: (i: number) => ({ firstName: `F${i}`, lastName: `L${i}` }),
      edit: (i: number) => ({ lastName: `edited-${i}` }),
      field: "lastName",
    },
    {
      what: "simple work orders",
      path: "/v1/simple-work-orders",
      key: "simpleWorkOrders",
      item: (i: number) => ({ name: `WO-${i}` }),
      edit: (i: number) => ({ name: `WO-edited-${i}` }),
      field: "name",
    },
  ])(
    "$what: edits and deletes between pages are received once each, deletions with deletedAt",
    async ({ path, key, item, edit, field }) => {
      const p = await plant();
      const created = await api(p.co.key, path, {
        method: "POST",
        json: Array.from({ length: 11 }, (_, i) => item(i)),
      });
      expect(created.status, await created.clone().text()).toBe(200);
      const ids = ((await created.json()) as { id: string | number }[]).map((r) => r.id);
      type Row = Synced & Record<string, unknown>;
      const replica = new Map<string | number, Row>();
      const received: string[] = [];
      const cursor: Parameters<typeof syncUntilQuiet>[2] = { after: null };
      const page = (syncAfter: unknown) => pageOf<Row>(p.co, `${path}/filters`, key, { syncAfter });
      let step = 0;
      await syncUntilQuiet(page, replica, cursor, received, async () => {
        step += 1;
        if (step > 4) return;
        const edited = await api(p.co.key, `${path}/${ids[step]}`, {
          method: "PATCH",
          json: edit(step),
        });
        expect(edited.status).toBe(204);
        const deleted = await api(p.co.key, `${path}/${ids[10 - step]}`, { method: "DELETE" });
        expect(deleted.status).toBe(204);
      });
      await syncUntilQuiet(page, replica, cursor, received);

      const mine = [...replica.values()].filter((r) => ids.includes(r.id));
      expect(mine).toHaveLength(11);
      expect(mine.filter((r) => r.deletedAt !== null).map((r) => r.id)).toEqual(
        expect.arrayContaining([ids[9], ids[8], ids[7], ids[6]]),
      );
      expect(mine.filter((r) => r.deletedAt !== null)).toHaveLength(4);
      for (let i = 1; i <= 4; i += 1) {
        expect(replica.get(ids[i] ?? -1)?.[field]).toBe(Object.values(edit(i))[0]);
      }
      expect(new Set(received).size).toBe(received.length);
      // Without includeDeleted the search still hides deleted rows.
      const plain = await api(p.co.key, `${path}/filters`, {
        method: "POST",
        json: { limit: 100 },
      });
      const rows = ((await plain.json()) as Record<string, Row[]>)[key] ?? [];
      expect(rows.filter((r) => ids.includes(r.id))).toHaveLength(7);
      expect(rows.every((r) => r.deletedAt === null)).toBe(true);
    },
  );
});
