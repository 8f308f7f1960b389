/**
 * Shift boundaries are published whether or not anything is written to the machine: the
 * machine's realtime object wakes at every boundary (its alarm, armed when machines or
 * shifts are created), and its stream publishes `shift.ended` and `shift.started` within
 * 5 s of it.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { inServiceSince } from "../fixtures/machine-history";
import { aroundNow, HOUR, plant } from "../fixtures/plant";
import { openedStreams } from "../fixtures/stream-clients";
import { api, createCompany, createMachines, operatorJson } from "../harness";

const DAY = 86_400_000;
const streams = openedStreams();
const sse = streams.sse;

afterEach(() => streams.closeAll());

function realtimeObject(companyId: number, machineId: number) {
  return env.REALTIME_MACHINE.get(env.REALTIME_MACHINE.idFromName(`${companyId}:${machineId}`));
}

describe("shift boundaries of an idle machine", () => {
  it("its object wakes at the running instance's end, and its stream has shift.started, with nothing written", async () => {
    const now = Date.now();
    const p = await plant(1, { shifts: aroundNow("UTC", now) });
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    // The running instance began on the whole hour 12 to 13 hours ago (aroundNow).
    const start = Math.floor((now - 12 * HOUR) / HOUR) * HOUR;
    await runInDurableObject(realtimeObject(p.co.id, m.id), async (_instance, state) => {
      const meta = state.storage.sql
        .exec<{ instance_end: number }>("SELECT instance_end FROM meta")
        .one();
      expect(meta.instance_end).toBe(start + DAY);
      // Idle: it wakes at the boundary only, not every minute to refresh logs it has not.
      expect(await state.storage.getAlarm()).toBe(start + DAY);
    });
    const history = await sse(p.co.key, `/v1/realtime/${m.id}/events?since=0`);
    const [started] = await history.waitFor((e) => e.type === "shift.started");
    expect(started?.data).toMatchObject({
      shift: { start: new Date(start).toISOString(), end: new Date(start + DAY).toISOString() },
    });
  });

  it("between shifts, its object wakes at the next one's start", async () => {
    const co = await createCompany({ timezone: "UTC" });
    const [m] = await createMachines(co.id, [{ name: "Idle press" }]);
    if (!m) throw new Error("no machine");
    const now = new Date();
    const inTwoHours = new Date(now.getTime() + 2 * 3_600_000);
    const hhmm = (d: Date) =>
      `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
    const inThreeHours = new Date(now.getTime() + 3 * 3_600_000);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Later", startTime: hhmm(inTwoHours), endTime: hhmm(inThreeHours) },
    ]);
    const startMs = Math.floor(inTwoHours.getTime() / 60_000) * 60_000;
    await runInDurableObject(realtimeObject(co.id, m.id), async (_instance, state) => {
      expect(await state.storage.getAlarm()).toBe(startMs);
    });
  });

  it("crossing a boundary publishes shift.ended then shift.started within 5 s, from the object's alarm", async () => {
    const p = await plant();
    const m = p.machines[0];
    if (!m) throw new Error("no machine");
    // In service since before yesterday: the report covers a machine from its creation on.
    await inServiceSince(p.co.id, [m.id], new Date(Date.now() - 3 * DAY).toISOString());
    // Yesterday's instance of the 24-hour shift (the report materializes it).
    const res = await api(p.co.key, "/v1/reports/metrics", {
      method: "POST",
      json: {
        machines: { include: [m.id] },
        startDate: { after: new Date(Date.now() - 2 * DAY).toISOString() },
      },
    });
    const rows = (
      (await res.json()) as {
        metrics: { shift: { id: number; name: string; startTime: string; endTime: string } }[];
      }
    ).metrics;
    const yesterday = rows.find((r) => Date.parse(r.shift.endTime) <= Date.now())?.shift;
    const current = rows.find((r) => Date.parse(r.shift.endTime) > Date.now())?.shift;
    if (!yesterday || !current) throw new Error("no instances");

    // The machine's object and its stream as they were before yesterday's shift ended.
    const name = `m:${p.co.id}:${m.id}`;
    const stream = env.MACHINE_STREAM.get(env.MACHINE_STREAM.idFromName(name));
    // Once the stream's first figures (nudged by the machine's creation) are stored: a tick
    // still computing them would write today's over yesterday's planted below (it reads its
    // previous figures, awaits D1, then writes), and see no boundary to publish.
    await vi.waitFor(
      () =>
        runInDurableObject(stream, (_instance, state) => {
          const stored = state.storage.sql
            .exec("SELECT 1 FROM meta WHERE key = 'figures'")
            .toArray();
          if (stored.length === 0) throw new Error("the stream has no figures yet");
        }),
      { timeout: 10_000, interval: 100 },
    );
    await runInDurableObject(stream, (_instance, state) => {
      const shift = {
        id: yesterday.id,
        name: yesterday.name,
        start: yesterday.startTime,
        end: yesterday.endTime,
        isConsidered: true,
        startMs: Date.parse(yesterday.startTime),
        endMs: Date.parse(yesterday.endTime),
      };
      state.storage.sql.exec(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('figures', ?)",
        JSON.stringify({ shift, production: null, oee: null }),
      );
      // The stream's own alarm is not what publishes the boundary here.
      return state.storage.deleteAlarm();
    });
    const sub = await sse(p.co.key, `/v1/realtime/${m.id}/events`);
    const crossedAt = Date.now();
    await runInDurableObject(realtimeObject(p.co.id, m.id), async (instance, state) => {
      state.storage.sql.exec(
        "UPDATE meta SET instance_id = ?, instance_start = ?, instance_end = ?",
        yesterday.id,
        Date.parse(yesterday.startTime),
        Date.parse(yesterday.endTime),
      );
      (instance as unknown as { store: { forgetCopy(): void } }).store.forgetCopy();
      await state.storage.setAlarm(Date.now());
    });

    const [started] = await sub.waitFor((e) => e.type === "shift.started", 1, 5_000);
    expect(Date.now() - crossedAt).toBeLessThan(5_000);
    const boundary = sub.events.filter((e) => e.type.startsWith("shift."));
    expect(boundary.map((e) => e.type)).toEqual(["shift.ended", "shift.started"]);
    expect(boundary[0]?.data).toMatchObject({ shift: { id: yesterday.id } });
    expect(started?.data).toMatchObject({ shift: { id: current.id } });
  });
});
