/**
 * Raw-sample retention: a company's setting reaches each machine's signal store with
 * the next ingestion or the store's next alarm (which reads it from D1, so a machine that
 * uploads nothing gets it too), and the store's alarm removes the raw samples of hours older
 * than it, keeping their hour and minute rollups.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signalStore } from "../../src/resources/signals/store";
import {
  api,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operator,
  operatorJson,
} from "../harness";

const S = 1_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe("signal retention", () => {
  it("removes raw samples past the retention by alarm and keeps their rollups", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m?.uuid) throw new Error("no machine");
    const publicId = await createSignal(m.id, { name: "power" });
    expect(await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: 30 })).toEqual(
      { days: 30 },
    );

    // Two hours at 1 Hz 60 days ago (past the retention), one hour yesterday (inside it).
    const oldHour = Math.floor((Date.now() - 60 * DAY) / HOUR) * HOUR;
    const newHour = Math.floor((Date.now() - DAY) / HOUR) * HOUR;
    const series = (from: number, seconds: number) =>
      Array.from({ length: seconds }, (_, i) => [from + i * S, (i % 100) + 0.5] as const);
    await ingest(publicId, [...series(oldHour, 7200), ...series(newHour, 3600)]);

    const read = async (from: number, to: number, unit: string, fn = "count") => {
      const q = new URLSearchParams({
        start_time: new Date(from).toISOString(),
        end_time: new Date(to).toISOString(),
        agg_unit: unit,
        agg_function: fn,
        transpose: "true",
      });
      const res = await api(co.key, `/v1/machines/${m.uuid}/signals/${publicId}?${q}`);
      expect(res.status).toBe(200);
      return (await res.json()) as { values: number[] };
    };
    const before = {
      hours: await read(oldHour, oldHour + 2 * HOUR, "h", "avg"),
      minutes: await read(oldHour, oldHour + 2 * HOUR, "m", "sum"),
    };
    expect((await read(oldHour, oldHour + HOUR, "s")).values).toHaveLength(3600);

    // The ingestion set the object's alarm; running it prunes the old hours.
    expect(await runDurableObjectAlarm(signalStore(env, co.id, m.id))).toBe(true);

    // Raw samples of the old hours are gone: a 1 s query finds nothing there ...
    expect((await read(oldHour, oldHour + HOUR, "s")).values).toEqual([]);
    // ... their hour and minute rollups answer as before ...
    expect(await read(oldHour, oldHour + 2 * HOUR, "h", "avg")).toEqual(before.hours);
    expect(await read(oldHour, oldHour + 2 * HOUR, "m", "sum")).toEqual(before.minutes);
    // ... and yesterday's samples are all there.
    expect((await read(newHour, newHour + HOUR, "s")).values).toHaveLength(3600);

    // A late sample in a pruned hour is not stored (its rollups cannot take a replacement).
    const late = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [{ timestamp: new Date(oldHour + 500).toISOString(), value: 1 }],
    });
    expect(await late.json()).toEqual({ accepted: 0 });
    expect((await read(oldHour, oldHour + HOUR, "h")).values).toEqual([3600]);
  });

  it("reaches the store with the next ingestion even right after an earlier one, archive objects included", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    const publicId = await createSignal(m.id, { name: "power" });
    const store = signalStore(env, co.id, m.id);
    // 100 days: its whole month is past the default 35-day hot window whatever today is.
    const oldHour = Math.floor((Date.now() - 100 * DAY) / HOUR) * HOUR;
    // Kept forever, past the hot window: the alarm archives the hour (the isolate now knows
    // the signal).
    await ingest(publicId, [[oldHour, 1]]);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect((await store.archiveStatus()).objects).toHaveLength(1);
    await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: 30 });
    await ingest(publicId, [[oldHour + S, 2]]);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    // The next ingestion carried the retention: the hour's samples and its object are gone.
    const status = await store.archiveStatus();
    expect(status.objects).toEqual([]);
    expect(status.hotHours).toBe(0);
    expect(
      await env.HISTORY.list({ prefix: `archive/signals/company_id=${co.id}/` }),
    ).toMatchObject({
      objects: [],
    });
  });

  it("applies a retention and a hot window set after the machine's last upload, by the store's alarm alone", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Quiet press" }]);
    if (!m?.uuid) throw new Error("no machine");
    const publicId = await createSignal(m.id, { name: "power" });
    const store = signalStore(env, co.id, m.id);
    const hourAgo = (days: number) => Math.floor((Date.now() - days * DAY) / HOUR) * HOUR;
    const [old, middle, recent] = [hourAgo(20), hourAgo(10), hourAgo(1)];
    const hour = (from: number) =>
      Array.from({ length: 3600 }, (_, i) => [from + i * S, (i % 60) + 0.25] as const);
    // The machine's last upload: three hours, all inside the default 35-day hot window.
    await ingest(publicId, [...hour(old), ...hour(middle), ...hour(recent)]);
    expect(await runDurableObjectAlarm(store)).toBe(true);
    expect(await store.archiveStatus()).toMatchObject({ objects: [], hotHours: 3 });
    const raw = async (from: number) => {
      const q = new URLSearchParams({
        start_time: new Date(from).toISOString(),
        end_time: new Date(from + HOUR).toISOString(),
        agg_unit: "s",
        transpose: "true",
      });
      const res = await api(co.key, `/v1/machines/${m.uuid}/signals/${publicId}?${q}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { values: number[] }).values;
    };
    const before = await raw(middle);

    // New settings, and no upload after them: the store's own alarms apply them.
    await operatorJson("PUT", `/companies/${co.id}/signal-hot-window`, { days: 5 });
    await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: 15 });
    for (let step = 0; step < 10; step++) {
      if (!(await runDurableObjectAlarm(store))) break;
      if ((await store.archiveStatus()).dueHours === 0) break;
    }
    const status = await store.archiveStatus();
    // 20 days ago: past the retention, its raw samples gone (its rollups stay) and never archived.
    expect(await raw(old)).toEqual([]);
    // 10 days ago: past the hot window, archived to R2 and read back from there, bit for bit.
    expect(status.objects.map((o) => o.first)).toEqual([middle]);
    expect(await raw(middle)).toEqual(before);
    // Yesterday: hot.
    expect(status.hotHours).toBe(1);
    expect(await raw(recent)).toHaveLength(3600);
  });

  it("validates the setting and 404s for an unknown company", async () => {
    const co = await createCompany();
    for (const days of [0, -1, 1.5, "30", 36_501]) {
      const res = await operator("PUT", `/companies/${co.id}/signal-retention`, { days });
      expect(res.status, String(days)).toBe(422);
    }
    expect(
      await operatorJson("PUT", `/companies/${co.id}/signal-retention`, { days: null }),
    ).toEqual({ days: null });
    const unknown = await operator("PUT", "/companies/999999999/signal-retention", { days: 5 });
    expect(unknown.status).toBe(404);
  });
});
