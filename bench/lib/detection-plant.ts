/**
 * What the stop-detection benchmarks share (`bench/detection.ts`, `bench/profile-detection.ts`):
 * a day of 1 Hz counts with stops and pauses, the calls they make to a local server, and the
 * server's CPU time.
 */
import { groupCpuMs } from "./cpu";
import { operatorCall, publicCall } from "./local-worker";

export const S = 1_000;
export const MIN = 60 * S;
export const HOUR = 60 * MIN;
export const DAY = 24 * HOUR;
/** Samples per ingestion call. */
const CHUNK = 10_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A day of 1 Hz counts from `day`: 12 stops of 10 minutes, 48 pauses of 2 minutes. */
export function workingDay(day: number): [number, number][] {
  const out: [number, number][] = [];
  for (let t = day; t < day + DAY; t += S) {
    const inDay = t - day;
    const stop = inDay % (2 * HOUR) >= 90 * MIN && inDay % (2 * HOUR) < 100 * MIN;
    const pause = inDay % (30 * MIN) >= 10 * MIN && inDay % (30 * MIN) < 12 * MIN;
    out.push([t, stop || pause ? 0 : 1]);
  }
  return out;
}

/**
 * The calls the detection benchmarks make to a local server: operator calls, ingestion in
 * calls of `CHUNK` samples (resent when the runtime restarted under one), a machine's
 * detector settled, a plant of machines with a `count` signal, a machine's stops.
 *
 * @param BASE the server's URL; `TOKEN` its operator token.
 */
export function detectionBench(BASE: string, TOKEN: string) {
  const op = <T>(method: string, path: string, body?: unknown) =>
    operatorCall<T>(BASE, TOKEN, method, path, body);
  /** Times the local runtime restarted under a call (answered 503 by Miniflare), resent. */
  let restarts = 0;
  /**
   * Sends `[t, v]` samples to a signal, `CHUNK` a call. A call the local runtime dropped
   * because it restarted (Miniflare's 503, or the connection closed under it: seen now and
   * then on this loaded machine, with or without detection) is sent again: an ingestion is
   * idempotent.
   */
  async function send(publicId: string, samples: readonly (readonly [number, number])[]) {
    for (let i = 0; i < samples.length; i += CHUNK) {
      const chunk = samples.slice(i, i + CHUNK);
      const body = { timestamps: chunk.map(([t]) => iso(t)), values: chunk.map(([, v]) => v) };
      for (let attempt = 0; ; attempt++) {
        try {
          await op("POST", `/signals/${publicId}/samples`, body);
          break;
        } catch (error) {
          const dropped = /restarted mid-request|fetch failed/.test(String(error));
          if (attempt >= 3 || !dropped) throw error;
          restarts += 1;
          await new Promise((done) => setTimeout(done, 2_000));
        }
      }
    }
  }

  /** Waits for a machine's detector and returns what it read of its store. */
  async function settled(companyId: number, machineId: number) {
    // A GET: the dev server's proxy resends it by itself when the runtime restarted under it.
    const res = await fetch(`${BASE}/__bench/detection/${companyId}/${machineId}`, {
      signal: AbortSignal.timeout(300_000),
    });
    if (!res.ok) throw new Error(`settle -> ${res.status}: ${await res.text()}`);
    return (await res.json()) as { summaries: number; blocks: number };
  }

  /** A company on a 24-hour shift with `n` machines, each with a `count` signal. */
  async function plant(name: string, n: number) {
    const [company] = await op<{ id: number }[]>("POST", "/companies", [
      { name: `${name} ${process.pid}`, timezone: "UTC" },
    ]);
    if (!company) throw new Error("no company");
    await op("POST", `/companies/${company.id}/shifts`, [
      { name: "Day", startTime: "00:00", endTime: "00:00" },
    ]);
    const machines = await op<{ id: number }[]>(
      "POST",
      `/companies/${company.id}/machines`,
      Array.from({ length: n }, (_, i) => ({ name: `${name} ${i + 1}` })),
    );
    const out: { id: number; count: string }[] = [];
    for (const m of machines) {
      const [signal] = await op<{ publicId: string }[]>("POST", `/machines/${m.id}/signals`, [
        { name: "count", displayName: "count", kind: "counter" },
      ]);
      if (!signal) throw new Error("no signal");
      out.push({ id: m.id, count: signal.publicId });
    }
    const [key] = await op<{ key: string }[]>("POST", `/companies/${company.id}/api-keys`, [
      { name: "bench", scopes: ["reports.read", "realtime.read"] },
    ]);
    return { companyId: company.id, machines: out, key: key?.key ?? "" };
  }

  async function stopsOf(key: string, machineId: number) {
    const body = await publicCall<{
      totalCount: number;
      stops: { stop: { id: number; startTime: string; endTime: string | null } }[];
    }>(BASE, key, "POST", "/v1/reports/stops", { machines: { include: [machineId] }, limit: 100 });
    return body;
  }

  return { op, send, settled, plant, stopsOf, restarts: () => restarts };
}

/** CPU time of the dev server's process group (workerd and all), ms, without this process's. */
export function serverCpuMs(pgid: number): number {
  const own = process.cpuUsage();
  return groupCpuMs(pgid) - (own.user + own.system) / 1000;
}

/**
 * Least time from a group's first call to the reading of its CPU, ms: past the alarm the
 * detector sets as an ingestion begins (`SAFETY_MS` in src/machine-state/detector.ts, 30 s),
 * which runs the signal store's own alarm step too.
 */
const SETTLE_FROM_START_MS = 33_000;
/** Least wait after a group's last answer, ms (the stream ticks at 1 s). */
const SETTLE_MIN_MS = 3_000;
/** Longest wait after a group, ms. */
const SETTLE_MAX_MS = 60_000;
/** The server is quiet when its CPU advanced less than `QUIET_CPU_MS` in `QUIET_MS`. */
const QUIET_MS = 2_000;
const QUIET_CPU_MS = 40;

/**
 * Waits until the server is quiet after a group's calls: at least `SETTLE_MIN_MS` and until
 * `SETTLE_FROM_START_MS` after its first call (so that the alarms its ingestion set have
 * run), then until its CPU advanced less than `QUIET_CPU_MS` in `QUIET_MS`, `SETTLE_MAX_MS`
 * at most. What the group's ingestion set going after its answers (the stream's ticks,
 * alarms) is its own: read before the next group starts, it is never charged to the other
 * group.
 *
 * @param pgid the server's process group; `began` the group's first call (`performance.now()`).
 * @returns ms waited.
 */
export async function untilQuiet(pgid: number, began: number): Promise<number> {
  const from = performance.now();
  const least = Math.max(SETTLE_MIN_MS, began + SETTLE_FROM_START_MS - from);
  await new Promise((done) => setTimeout(done, least));
  let last = serverCpuMs(pgid);
  while (performance.now() - from < SETTLE_MAX_MS) {
    await new Promise((done) => setTimeout(done, QUIET_MS));
    const now = serverCpuMs(pgid);
    if (now - last < QUIET_CPU_MS) break;
    last = now;
  }
  return performance.now() - from;
}
