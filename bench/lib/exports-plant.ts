/**
 * The plant of the export benchmark (bench/exports.ts) and its HTTP calls: one company (UTC)
 * with twenty machines on three 8-hour shifts and, over 2025, a production log per shift
 * instance and a stop per machine-day (the year's metrics report is 21,900 rows); and a
 * machine whose `power` signal has a sample every second for `signalDays` days from
 * 2025-06-01 (0.01 resolution, as Plant A's power).
 */
import { ok } from "../../scripts/lib/http";
import { connectOperator, type StopInput } from "../../scripts/lib/operator-api";
import { createThreeShiftPlant, PLANT_MACHINES } from "./three-shift-plant";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The year of production logs and stops. */
export const YEAR_START = Date.UTC(2025, 0, 1);
export const YEAR_END = Date.UTC(2026, 0, 1);
/** The first instant of the 1 Hz samples. */
export const MONTH_START = Date.UTC(2025, 5, 1);

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Fetches, trying again (up to five times, a second apart) an answer that says to: a 503
 * (the local runtime restarted mid-request, or a read barrier's) or a 429.
 */
export async function fetchRetrying(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, init);
    if ((res.status !== 503 && res.status !== 429) || attempt === 5) return res;
    await res.body?.cancel();
    await new Promise((done) => setTimeout(done, 1000));
  }
}

/** A public API call with a key (retried as above); its text, or an Error unless 2XX. */
export async function apiCall(base: string, path: string, key: string, init: RequestInit = {}) {
  const res = await fetchRetrying(`${base}${path}`, {
    ...init,
    headers: { "x-api-key": key, "content-type": "application/json", ...init.headers },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text.slice(0, 500)}`);
  return text;
}

/** An operator API call (retried as above); its JSON answer. */
export async function operatorCall<T>(
  base: string,
  token: string,
  path: string,
  body: unknown,
): Promise<T> {
  const res = await fetchRetrying(`${base}/operator/v1${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} -> ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

/**
 * Builds the plant through the operator and public APIs of the server at `base`.
 *
 * @returns the company's full key, its id, the power signal's public id, the twenty
 *   machines' ids and the id of the machine with the power signal.
 */
export async function seedExportsPlant(base: string, token: string, signalDays: number) {
  const call = (path: string, key: string, init: RequestInit = {}) =>
    apiCall(base, path, key, init);
  const operatorPost = <T>(path: string, body: unknown) => operatorCall<T>(base, token, path, body);
  const { api: client } = connectOperator(base, token);
  const { companyId, key, machines } = await createThreeShiftPlant(base, token, {
    name: "Bench exports",
    keyName: "bench-exports",
    scopes: ["production_logs.create", "reports.read", "skus.create", "signals.read"],
  });
  const [sku] = JSON.parse(
    await call("/v1/skus", key, { method: "POST", body: JSON.stringify([{ sku: "SKU-1" }]) }),
  ) as { id: string }[];
  const seedStarted = performance.now();
  const logs: unknown[] = [];
  for (let start = YEAR_START; start < YEAR_END; start += 8 * HOUR) {
    for (const [m, machine] of machines.entries()) {
      logs.push({
        start: iso(start + 10 * 60_000),
        end: iso(start + 7 * HOUR),
        count: 1000 + ((start / HOUR + m) % 300),
        nominalSpeed: 2.5,
        machine: { id: machine.id },
        sku: { id: sku?.id },
      });
    }
  }
  console.log(`Creating ${logs.length} logs and ${PLANT_MACHINES * 365} stops ...`);
  for (let i = 0; i < logs.length; i += 1000) {
    await call("/v1/production-logs", key, {
      method: "POST",
      body: JSON.stringify(logs.slice(i, i + 1000)),
    });
  }
  for (const machine of machines) {
    const stops: StopInput[] = [];
    for (let day = YEAR_START; day < YEAR_END; day += DAY) {
      const start = day + 11 * HOUR + machine.id * 60_000;
      stops.push({ startTime: iso(start), endTime: iso(start + 20 * 60_000), isProgrammed: false });
    }
    await operatorPost(`/machines/${machine.id}/stops`, stops);
  }
  // Retried (operatorPost): the first machine created after the year's stops is answered
  // "Your worker restarted mid-request" by the local runtime (reported with issue 48).
  const [press] = await operatorPost<{ id: number; uuid: string | null }[]>(
    `/companies/${companyId}/machines`,
    [{ name: "Press with power" }],
  );
  if (!press?.uuid) throw new Error("no machine");
  const [power] = ok(
    "POST",
    await client.POST("/machines/{machine_id}/signals", {
      params: { path: { machine_id: press.id } },
      body: [{ name: "power", displayName: "Power", kind: "analog" }],
    }),
  );
  if (!power) throw new Error("no signal");
  const total = signalDays * 86_400;
  console.log(`Ingesting ${total.toLocaleString("en")} samples of power at 1 Hz ...`);
  let value = 50;
  for (let at = 0; at < total; at += 10_000) {
    const n = Math.min(10_000, total - at);
    const timestamps: string[] = [];
    const values: number[] = [];
    for (let i = 0; i < n; i++) {
      timestamps.push(iso(MONTH_START + (at + i) * 1000));
      value = Math.max(0, value + (((at + i) * 7919) % 201) / 100 - 1);
      values.push(Math.round(value * 100) / 100);
    }
    await operatorPost(`/signals/${power.publicId}/samples`, { timestamps, values });
  }
  console.log(`Seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s.`);
  const lines = machines.map((m) => m.id);
  return { key, companyId, signal: power.publicId, lines, pressId: press.id };
}
