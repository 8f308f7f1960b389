/**
 * An export's life: steps that survive a restart of its object (nothing lost, nothing
 * twice), files cut at `rowsPerFile`, progress while it runs, a company's exports at once
 * (a fourth is a 429), the files' expiry, and downloads by range as Parquet readers ask.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_ACTIVE_EXPORTS } from "../../src/exports/schemas";
import {
  download,
  duckdbSql,
  exportsStub,
  finishExport,
  getExport,
  readExport,
  startExport,
} from "../fixtures/export-harness";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operator,
  type TestCompany,
} from "../harness";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 1, 2);

/** A company with one signal sampled every minute for `days` days from T0. */
async function sampledSignal(days: number): Promise<{
  co: TestCompany;
  uuid: string;
  signal: string;
  samples: (readonly [number, number])[];
}> {
  const co = await createCompany();
  const uuid = crypto.randomUUID();
  const [machine] = await createMachines(co.id, [{ name: "Press", uuid }]);
  const signal = await createSignal(machine?.id ?? 0, { name: "power" });
  const samples = Array.from(
    { length: days * 1440 },
    (_, i) => [T0 + i * 60_000, Math.round(Math.cos(i / 50) * 1e6) / 100] as const,
  );
  await ingest(signal, samples);
  return { co, uuid, signal, samples };
}

/** A signal export's body over `days` days from T0, 1-second buckets (one point a sample). */
const signalExport = (signal: string, days: number, extra: Record<string, unknown> = {}) => ({
  dataset: "signals",
  filters: {
    signals: [signal],
    start_time: new Date(T0).toISOString(),
    end_time: new Date(T0 + days * DAY).toISOString(),
  },
  ...extra,
});

describe("an export in steps", () => {
  it("survives a restart of its object mid-export: every point once, files cut at rowsPerFile", async () => {
    // 60 days of 1-second buckets: 208 batches of the store, more than one step.
    const { co, samples, signal } = await sampledSignal(60);
    const started = await startExport(co.key, signalExport(signal, 60, { rowsPerFile: 12_345 }));
    const seen: number[] = [];
    let restarted = false;
    const done = await finishExport(co.key, co.id, started.id, async (state) => {
      seen.push(state.progress);
      if (!restarted && state.state === "running" && state.files.length > 0) {
        expect(state.progress).toBeGreaterThan(0);
        expect(state.progress).toBeLessThan(1);
        expect(state.rows).toBeGreaterThanOrEqual(state.files.length * 12_345);
        // A restart (a deploy, an eviction) between two steps: the file being written is lost.
        await runInDurableObject(exportsStub(co.id), (_instance, ctx) =>
          ctx.abort("restart"),
        ).catch((error: unknown) => expect(String(error)).toContain("restart"));
        restarted = true;
      }
    });
    expect(restarted).toBe(true);
    expect(done.state).toBe("succeeded");
    // Progress never went back, even across the restart.
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    // Files end inside the store's batches (416 or 417 points each), not on their edges.
    expect(done.files.map((f) => f.rows)).toEqual([...Array(6).fill(12_345), 12_330]);
    expect(done.files.map((f) => f.name)).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((i) => `part-0000${i}.parquet`),
    );
    const back = await readExport(co.key, done);
    expect(back.rows.map((r) => [Number(r[3]), r[4]])).toEqual(samples);
    // Nothing in the bucket but the listed files (an abandoned upload would not be listed).
    const listed = await env.HISTORY.list({ prefix: `exports/${co.id}/${done.id}/` });
    expect(listed.objects.map((o) => o.key.split("/").at(-1))).toEqual(
      done.files.map((f) => f.name),
    );
    // 208 batches, each a store call and a timer turn: about 25 s on a loaded machine.
  }, 90_000);

  it("writes a Parquet file of several row groups, column by column, that reads back whole", async () => {
    // 40 days of a sample a minute: 57,600 points, one file of three row groups (25,000 rows
    // each at most), each written a column chunk at a time with the isolate's other work
    // between the chunks.
    const { co, samples, signal } = await sampledSignal(40);
    const started = await startExport(co.key, signalExport(signal, 40));
    const done = await finishExport(co.key, co.id, started.id);
    expect(done.state).toBe("succeeded");
    expect(done.files.map((f) => f.rows)).toEqual([57_600]);
    const [file] = done.files;
    if (!file) throw new Error("no file");
    const bytes = await download(co.key, file);
    const groups = await duckdbSql(
      "SELECT row_group_id, row_group_num_rows, count(*) AS chunks " +
        "FROM parquet_metadata('f.parquet') GROUP BY ALL ORDER BY row_group_id",
      { "f.parquet": bytes },
    );
    expect(groups.rows.map((r) => r.map(Number))).toEqual([
      [0, 25_000, 5],
      [1, 25_000, 5],
      [2, 7_600, 5],
    ]);
    const back = await readExport(co.key, done);
    expect(back.rows.map((r) => [Number(r[3]), r[4]])).toEqual(samples);
  }, 90_000);

  it("says which signals deleted meanwhile it left out, and from when; the others whole", async () => {
    const co = await createCompany();
    const uuid = crypto.randomUUID();
    const [machine] = await createMachines(co.id, [{ name: "Press", uuid }]);
    // 30 days of 1-second buckets: 104 batches a signal (a step reads at most 10 of them),
    // so the object's own alarm, which also steps it meanwhile, cannot finish the first
    // signal between the test's look at the progress and the deletion.
    const days = 30;
    const minutes = Array.from({ length: days * 144 }, (_, i) => T0 + i * 600_000);
    const signals: { publicId: string; samples: (readonly [number, number])[] }[] = [];
    for (const [k, name] of ["a-power", "b-power", "c-power"].entries()) {
      const publicId = await createSignal(machine?.id ?? 0, { name });
      const samples = minutes.map((t, i) => [t, k * 1000 + (i % 97)] as const);
      await ingest(publicId, samples);
      signals.push({ publicId, samples });
    }
    const [a, b, c] = signals;
    if (!a || !b || !c) throw new Error("no signals");
    const started = await startExport(co.key, {
      dataset: "signals",
      filters: {
        machines: [uuid],
        start_time: new Date(T0).toISOString(),
        end_time: new Date(T0 + days * DAY).toISOString(),
      },
    });
    let deletedAt: number | null = null;
    const done = await finishExport(co.key, co.id, started.id, async (state) => {
      if (deletedAt === null && state.progress > 0) {
        // Part of the first signal is read; the third has not begun: both deleted now.
        expect(state.progress).toBeLessThan(1 / 3);
        deletedAt = state.progress;
        for (const s of [a, c]) {
          expect((await operator("DELETE", `/signals/${s.publicId}`)).status).toBe(204);
        }
      }
    });
    expect(deletedAt).not.toBeNull();
    expect(done.state, done.error ?? "").toBe("succeeded");
    const [first, third] = done.leftOut;
    expect(done.leftOut).toHaveLength(2);
    expect(first).toMatchObject({ machine_uuid: uuid, public_id: a.publicId, name: "a-power" });
    expect(third).toEqual({
      machine_uuid: uuid,
      public_id: c.publicId,
      name: "c-power",
      from: new Date(T0).toISOString(),
    });
    const from = Date.parse(first?.from ?? "");
    expect(from).toBeGreaterThan(T0);
    expect(from).toBeLessThan(T0 + days * DAY);
    // The files: the first signal's points before `from`, the second's all, the third's none.
    const back = await readExport(co.key, done);
    const points = (publicId: string) =>
      back.rows.filter((r) => r[1] === publicId).map((r) => [Number(r[3]), r[4]]);
    expect(points(a.publicId)).toEqual(a.samples.filter(([t]) => t < from));
    expect(points(b.publicId)).toEqual(b.samples);
    expect(points(c.publicId)).toEqual([]);
    expect(done.rows).toBe(back.rows.length);
  });

  it("runs at most three exports of a company at once; a fourth is a 429 until one ends", async () => {
    const { co, signal } = await sampledSignal(1);
    const ids: string[] = [];
    // 30 days of 1-second buckets each (104 batches, at least six steps): none ends before
    // the fourth is asked.
    for (let i = 0; i < MAX_ACTIVE_EXPORTS; i++) {
      ids.push((await startExport(co.key, signalExport(signal, 30, { format: "csv" }))).id);
    }
    const refused = await api(co.key, "/v1/exports", {
      method: "POST",
      json: signalExport(signal, 1),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(await refused.json()).toEqual({
      detail: "The company already runs 3 exports (at most 3 at once); retry when one has finished",
    });
    // They take turns, a step each; all three end.
    for (const id of ids) expect((await finishExport(co.key, co.id, id)).state).toBe("succeeded");
    await startExport(co.key, signalExport(signal, 1));
    // Another company is not counted against this one.
    const other = await sampledSignal(1);
    await startExport(other.co.key, signalExport(other.signal, 1));
  });

  it("deletes the files when the export expires, and then answers it as expired", async () => {
    const { co, signal } = await sampledSignal(1);
    const done = await finishExport(
      co.key,
      co.id,
      (await startExport(co.key, signalExport(signal, 1))).id,
    );
    expect(done.state).toBe("succeeded");
    expect(Date.parse(done.expiresAt ?? "") - Date.parse(done.finishedAt ?? "")).toBe(7 * DAY);
    const prefix = `exports/${co.id}/${done.id}/`;
    expect((await env.HISTORY.list({ prefix })).objects).toHaveLength(1);
    // Seven days later (the object's clock cannot be moved: its expiry is brought forward).
    await runInDurableObject(exportsStub(co.id), (_instance, ctx) => {
      ctx.storage.sql.exec("UPDATE exports SET expires_at = ? WHERE id = ?", Date.now(), done.id);
    });
    await runDurableObjectAlarm(exportsStub(co.id));
    expect((await env.HISTORY.list({ prefix })).objects).toHaveLength(0);
    const expired = await getExport(co.key, done.id);
    expect(expired).toMatchObject({ state: "expired", files: [] });
    const file = await api(co.key, done.files[0]?.url ?? "");
    expect(file.status).toBe(404);
  });
});

describe("downloads", () => {
  it("stream the whole file, or the range a Parquet reader asks for", async () => {
    const { co, signal } = await sampledSignal(1);
    const done = await finishExport(
      co.key,
      co.id,
      (await startExport(co.key, signalExport(signal, 1))).id,
    );
    const file = done.files[0];
    if (!file) throw new Error("no file");
    const whole = await api(co.key, file.url);
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    expect(whole.headers.get("accept-ranges")).toBe("bytes");
    expect(whole.headers.get("content-disposition")).toBe(`attachment; filename="${file.name}"`);
    const bytes = new Uint8Array(await whole.arrayBuffer());
    expect(bytes.length).toBe(file.bytes);
    const text = (b: ArrayBuffer) => new TextDecoder().decode(b);

    const head = await api(co.key, file.url, { headers: { range: "bytes=0-3" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe(`bytes 0-3/${file.bytes}`);
    expect(text(await head.arrayBuffer())).toBe("PAR1");
    // The footer's length and the magic: how a reader finds the metadata.
    const tail = await api(co.key, file.url, { headers: { range: "bytes=-8" } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get("content-range")).toBe(
      `bytes ${file.bytes - 8}-${file.bytes - 1}/${file.bytes}`,
    );
    expect(new Uint8Array(await tail.arrayBuffer())).toEqual(bytes.subarray(file.bytes - 8));
    const middle = await api(co.key, file.url, { headers: { range: "bytes=100-" } });
    expect(new Uint8Array(await middle.arrayBuffer())).toEqual(bytes.subarray(100));

    const outside = await api(co.key, file.url, { headers: { range: `bytes=${file.bytes}-` } });
    expect(outside.status).toBe(416);
    expect(outside.headers.get("content-range")).toBe(`bytes */${file.bytes}`);
    expect(await outside.json()).toEqual({ detail: "Range Not Satisfiable" });
    // A valid suffix of no bytes cannot be satisfied either (RFC 9110, 14.1.2).
    const none = await api(co.key, file.url, { headers: { range: "bytes=-0" } });
    expect(none.status).toBe(416);
    expect(none.headers.get("content-range")).toBe(`bytes */${file.bytes}`);
    // A last byte past the end is cut to the end; one byte is a range too.
    const long = await api(co.key, file.url, { headers: { range: "bytes=4-99999999" } });
    expect(long.status).toBe(206);
    expect(long.headers.get("content-range")).toBe(`bytes 4-${file.bytes - 1}/${file.bytes}`);
    expect(new Uint8Array(await long.arrayBuffer())).toEqual(bytes.subarray(4));
    const one = await api(co.key, file.url, { headers: { range: "bytes=5-5" } });
    expect(new Uint8Array(await one.arrayBuffer())).toEqual(bytes.subarray(5, 6));
    // An invalid range (its last byte before its first), several ranges or another unit:
    // the header is ignored and the whole file answered (RFC 9110, 14.2).
    for (const range of ["bytes=10-5", "bytes=0-1,5-6", "items=0-5", "bytes=a-b"]) {
      const ignored = await api(co.key, file.url, { headers: { range } });
      expect(ignored.status, range).toBe(200);
      expect(ignored.headers.get("content-range"), range).toBeNull();
      expect(ignored.headers.get("content-length"), range).toBe(String(file.bytes));
      expect(new Uint8Array(await ignored.arrayBuffer()), range).toEqual(bytes);
    }

    const sized = await api(co.key, file.url, { method: "HEAD" });
    expect(sized.status).toBe(200);
    expect(sized.headers.get("content-length")).toBe(String(file.bytes));

    const unknown = await api(co.key, file.url.replace("part-00001", "part-00002"));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ detail: "File not found" });
  });
});
