/**
 * The signal archive (docs/signal-storage.md, "The archive"): a store's alarm moves the
 * samples of hours past the company's hot window into Parquet objects on R2, the public
 * signal endpoint answers every window exactly as before, DuckDB reads the objects as one
 * Hive-partitioned table, late samples are merged, and nothing is dropped when R2 fails.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SignalArchive } from "../../src/resources/signals/archive";
import { decodeArchive, encodeArchive } from "../../src/resources/signals/archive-format";
import { signalStore } from "../../src/resources/signals/store";
import { duckdbSql } from "../fixtures/export-harness";
import { plant as buildPlant } from "../fixtures/plant";
import { api, ingest, operator, operatorJson } from "../harness";

const S = 1_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** A noisy full-precision float at second `i` (every value distinct, like a real sensor). */
const noisy = (i: number) =>
  50 + 20 * Math.sin(i / 500) + (((i * 2_654_435_761) >>> 0) % 10_000) / 7_777;

/** The first UTC day of a month at least `days` ago, so its whole month is past the window. */
function monthStart(daysAgo: number): number {
  const d = new Date(Date.now() - daysAgo * DAY);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

async function plant() {
  const { co, machines, signals } = await buildPlant(1, {
    timezone: "Europe/Rome",
    machineNames: ["Press"],
    shifts: [],
    signals: [{ name: "power" }, { name: "voltage" }, { name: "pressure" }],
    catalog: false,
  });
  const [m] = machines;
  const [dense, sparse, hourly] = [signals.power?.[0], signals.voltage?.[0], signals.pressure?.[0]];
  if (!m?.uuid || !dense || !sparse || !hourly) throw new Error("no machine");
  const store = signalStore(env, co.id, m.id);
  const read = async (publicId: string, params: Record<string, string>) => {
    const q = new URLSearchParams({ transpose: "true", ...params });
    const res = await api(co.key, `/v1/machines/${m.uuid}/signals/${publicId}?${q}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return res.text();
  };
  /** Runs the store's alarm until nothing past the hot window is left to archive. */
  const archiveAll = async () => {
    for (let i = 0; i < 50; i++) {
      await runDurableObjectAlarm(store);
      if ((await store.archiveStatus()).dueHours === 0) return;
    }
    throw new Error("the archive did not finish in 50 alarms");
  };
  return { co, m, dense, sparse, hourly, store, read, archiveAll };
}

const iso = (t: number) => new Date(t).toISOString();

/** Every object of the HISTORY bucket under `prefix`, by key: the archive as DuckDB reads it. */
async function bucketFiles(prefix: string): Promise<Record<string, Uint8Array>> {
  const files: Record<string, Uint8Array> = {};
  let cursor: string | undefined;
  do {
    const page = await env.HISTORY.list({ prefix, cursor });
    for (const object of page.objects) {
      const body = await env.HISTORY.get(object.key);
      if (body) files[object.key] = new Uint8Array(await body.arrayBuffer());
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return files;
}

describe("signal archive", () => {
  it("moves hours past the hot window to Parquet on R2 and answers every window bit for bit as before", async () => {
    const p = await plant();
    // Dense: two days at one sample every 5 s (17,280 a day: an object a day), from 200 days
    // ago; sparse: every 5 minutes for 4 weeks (288 a day: one object for the month); hourly
    // for 4 weeks (24 a day: one object for the year); hot: yesterday.
    const denseStart = monthStart(200) + 3 * DAY;
    const dense = Array.from(
      { length: 2 * 17_280 },
      (_, i) => [denseStart + i * 5 * S, noisy(i)] as const,
    );
    const sparseStart = monthStart(200);
    const sparse = Array.from(
      { length: 28 * 288 },
      (_, i) => [sparseStart + i * 5 * MIN + 17 * S, noisy(i) * 3] as const,
    );
    const hourly = Array.from(
      { length: 28 * 24 },
      (_, i) => [sparseStart + i * HOUR, Math.round(noisy(i))] as const,
    );
    const hotStart = Math.floor((Date.now() - DAY) / HOUR) * HOUR;
    const hot = Array.from({ length: 3600 }, (_, i) => [hotStart + i * S, noisy(i)] as const);
    await ingest(p.dense, [...dense, ...hot]);
    await ingest(p.sparse, sparse);
    await ingest(p.hourly, hourly);

    // Windows across the archived days: raw widths (1 s, 7 s), edges that cut hours, minute,
    // hour and day widths, every function.
    const windows: [string, Record<string, string>][] = [];
    const edge = denseStart + 5 * HOUR + 17 * MIN + 3 * S;
    for (const [fn, unit, period, from, to] of [
      ["avg", "s", "1", denseStart, denseStart + 2 * HOUR],
      ["max", "s", "7", edge, edge + 3 * HOUR],
      ["sum", "m", "1", edge, edge + 5 * HOUR],
      ["min", "m", "15", denseStart - DAY, denseStart + 2 * DAY],
      ["count", "h", "1", edge - DAY, edge + 2 * DAY],
      ["avg", "d", "1", sparseStart, sparseStart + 14 * DAY],
      ["sum", "s", "90", edge + DAY, edge + DAY + 6 * HOUR],
    ] as const) {
      windows.push([
        p.dense,
        {
          agg_function: fn,
          agg_unit: unit,
          agg_period: period,
          start_time: iso(from),
          end_time: iso(to),
        },
      ]);
    }
    windows.push([
      p.sparse,
      {
        agg_function: "avg",
        agg_unit: "s",
        agg_period: "30",
        start_time: iso(sparseStart),
        end_time: iso(sparseStart + 3 * DAY),
      },
    ]);
    windows.push([
      p.sparse,
      {
        agg_function: "sum",
        agg_unit: "m",
        agg_period: "30",
        start_time: iso(sparseStart + 5 * MIN),
        end_time: iso(sparseStart + 9 * DAY),
      },
    ]);
    const before = await Promise.all(windows.map(([id, q]) => p.read(id, q)));
    const sizeBefore = (await p.store.archiveStatus()).databaseSize;

    await p.archiveAll();

    const status = await p.store.archiveStatus();
    // Two day objects for the dense signal, a month's for the sparse one, a year's for the
    // hourly one; yesterday stays.
    expect(status.objects.map((o) => [o.kind, o.n])).toEqual([
      ["day", 17_280],
      ["day", 17_280],
      ["month", 28 * 288],
      ["year", 28 * 24],
    ]);
    const prefix = `archive/signals/company_id=${p.co.id}/machine_id=${p.m.id}/`;
    const listed = await env.HISTORY.list({ prefix });
    expect(listed.objects.map((o) => o.key).sort()).toEqual(
      status.objects.map((o) => o.key).sort(),
    );
    const day = iso(denseStart).slice(0, 10);
    expect(status.objects[0]?.key).toMatch(
      new RegExp(`^${prefix}signal_id=\\d+/year=${day.slice(0, 4)}/${day}\\.parquet$`),
    );
    // The dense hours dropped their samples (their rollups stay); the sparse ones keep them.
    expect(status.archivedHours).toBe(48);
    expect(status.hotHours).toBe(2 * 28 * 24 + 1);
    expect(status.databaseSize).toBeLessThan(sizeBefore);

    // Every window answers the same text, bit for bit.
    const after = await Promise.all(windows.map(([id, q]) => p.read(id, q)));
    for (const [i, text] of after.entries())
      expect(text, JSON.stringify(windows[i])).toBe(before[i]);

    // DuckDB reads the archive as one table with the partitions as columns.
    const files = await bucketFiles(prefix);
    const { rows } = await duckdbSql(
      `SELECT signal_id, count(*) AS n, min(epoch_ms(time)) AS first, max(epoch_ms(time)) AS last
       FROM read_parquet('archive/**/*.parquet', hive_partitioning = true)
       WHERE company_id = ${p.co.id} AND machine_id = ${p.m.id}
       GROUP BY signal_id ORDER BY n DESC`,
      files,
    );
    expect(rows.map((r) => [Number(r[1]), Number(r[2]), Number(r[3])])).toEqual([
      [dense.length, denseStart, dense.at(-1)?.[0]],
      [sparse.length, sparseStart + 17 * S, sparse.at(-1)?.[0]],
      [hourly.length, sparseStart, hourly.at(-1)?.[0]],
    ]);
    // Bit for bit: every archived value, as DuckDB reads it, is the one ingested.
    const { rows: values } = await duckdbSql(
      "SELECT time, value FROM read_parquet('archive/**/*.parquet') ORDER BY time",
      files,
    );
    const ingested = new Map([...dense, ...sparse].map(([t, v]) => [t, v]));
    const onlyHourly = new Map(hourly.map(([t, v]) => [t, v]));
    expect(values.length).toBe(ingested.size + onlyHourly.size);
    for (const [t, value] of values) {
      expect([ingested.get(Number(t)), onlyHourly.get(Number(t))]).toContain(value);
    }
  });

  it("merges a late sample into an archived hour, and the next step rewrites its object", async () => {
    const p = await plant();
    const start = monthStart(120) + 2 * DAY;
    const samples = Array.from(
      { length: 8_640 },
      (_, i) => [start + i * 10 * S, noisy(i)] as const,
    );
    await ingest(p.dense, samples);
    await p.archiveAll();
    const [object] = (await p.store.archiveStatus()).objects;
    expect(object?.n).toBe(8_640);
    const q = {
      agg_function: "sum",
      agg_unit: "s",
      agg_period: "1",
      start_time: iso(start),
      end_time: iso(start + HOUR),
    };
    const before = JSON.parse(await p.read(p.dense, q)) as {
      values: number[];
      timestamps: string[];
    };

    // A new instant and a replacement of an archived one, in the same archived hour.
    const late = await operator("POST", `/signals/${p.dense}/samples`, {
      samples: [
        { timestamp: iso(start + 5 * S), value: 1234.5 },
        { timestamp: iso(start + 10 * S), value: -7 },
      ],
    });
    expect(await late.json()).toEqual({ accepted: 2 });
    const expected = {
      timestamps: [
        ...before.timestamps.slice(0, 1),
        iso(start + 5 * S),
        ...before.timestamps.slice(1),
      ],
      values: [before.values[0], 1234.5, -7, ...before.values.slice(2)],
    };
    const merged = JSON.parse(await p.read(p.dense, q)) as typeof expected;
    expect(merged).toMatchObject(expected);
    expect((await p.store.archiveStatus()).dueHours).toBe(1);

    await p.archiveAll();
    const status = await p.store.archiveStatus();
    expect(status.objects.map((o) => [o.key, o.n])).toEqual([[object?.key, 8_641]]);
    expect(status.archivedHours).toBe(24);
    // Read from the rewritten object: the same answer.
    expect(JSON.parse(await p.read(p.dense, q))).toMatchObject(expected);
    const stored = await env.HISTORY.get(object?.key ?? "");
    const decoded = await decodeArchive(
      (await stored?.arrayBuffer()) ?? new ArrayBuffer(0),
      start,
      start + 11 * S,
    );
    expect([...decoded.values]).toEqual([samples[0]?.[1], 1234.5, -7]);
  });

  it("drops no sample when writing the object fails or reads back differently", async () => {
    const p = await plant();
    const start = monthStart(120) + 4 * DAY;
    await ingest(
      p.dense,
      Array.from({ length: 4_000 }, (_, i) => [start + i * 20 * S, noisy(i)] as const),
    );
    const failing = (mode: "put" | "readback"): R2Bucket =>
      ({
        put: async (...args: Parameters<R2Bucket["put"]>) => {
          if (mode === "put") throw new Error("R2 unavailable");
          return env.HISTORY.put(...args);
        },
        // A valid archive object, but not the one written (a lost or mixed-up write).
        get: async () => {
          const other = await encodeArchive(Float64Array.of(start), Float64Array.of(1));
          return { arrayBuffer: async () => other.slice().buffer } as unknown as R2ObjectBody;
        },
        delete: env.HISTORY.delete.bind(env.HISTORY),
      }) as unknown as R2Bucket;
    for (const mode of ["put", "readback"] as const) {
      await runInDurableObject(p.store, async (_instance, state) => {
        const archive = new SignalArchive(state.storage.sql, failing(mode), (work) => work());
        await expect(archive.step(Date.now())).rejects.toThrow();
      });
      const status = await p.store.archiveStatus();
      expect(status.objects).toEqual([]);
      expect(status.archivedHours).toBe(0);
      expect(status.dueHours).toBeGreaterThan(0);
    }
    // With R2 answering, the same step archives it.
    await p.archiveAll();
    expect((await p.store.archiveStatus()).objects.map((o) => o.n)).toEqual([4_000]);
  });

  it("applies the retention to the archive: expired hours leave month and year objects too", async () => {
    const p = await plant();
    const first = Math.floor((Date.now() - 100 * DAY) / HOUR) * HOUR;
    const hourly = Array.from({ length: 60 * 24 }, (_, i) => [first + i * HOUR, i] as const);
    await ingest(p.hourly, hourly);
    await p.archiveAll();
    const archived = async () => {
      const files = await bucketFiles(`archive/signals/company_id=${p.co.id}/`);
      const all = await Promise.all(
        Object.values(files).map((f) => decodeArchive(f.slice().buffer)),
      );
      return all.flatMap((d) => [...d.ts]).sort((a, b) => a - b);
    };
    expect(await archived()).toEqual(hourly.map(([t]) => t));

    await operatorJson("PUT", `/companies/${p.co.id}/signal-retention`, { days: 60 });
    const now = Date.now();
    await ingest(p.hourly, [[now - DAY, 1]]);
    for (let i = 0; i < 5; i++) await runDurableObjectAlarm(p.store);
    const kept = await archived();
    // Nothing from before the retention is left on R2; everything after it is.
    expect(kept[0]).toBeGreaterThanOrEqual(now - 60 * DAY - HOUR);
    expect(kept).toEqual(
      expect.arrayContaining(hourly.map(([t]) => t).filter((t) => t >= now - 60 * DAY + HOUR)),
    );
    expect(
      (await p.store.archiveStatus()).objects.every(
        (o) => o.n === kept.filter((t) => t >= o.start && t < o.end).length,
      ),
    ).toBe(true);
  });

  it("keeps the hot window each company sets, validated", async () => {
    const p = await plant();
    expect(
      await operatorJson("PUT", `/companies/${p.co.id}/signal-hot-window`, { days: 400 }),
    ).toEqual({
      days: 400,
    });
    const start = monthStart(200);
    await ingest(
      p.dense,
      Array.from({ length: 3_000 }, (_, i) => [start + i * 20 * S, noisy(i)] as const),
    );
    await runDurableObjectAlarm(p.store);
    // 200 days is inside a 400-day window: nothing archived.
    expect((await p.store.archiveStatus()).objects).toEqual([]);
    for (const days of [0, -1, 1.5, null, "35", 36_501]) {
      const res = await operator("PUT", `/companies/${p.co.id}/signal-hot-window`, { days });
      expect(res.status, String(days)).toBe(422);
    }
    expect(
      (await operator("PUT", "/companies/999999999/signal-hot-window", { days: 5 })).status,
    ).toBe(404);
  });
});
