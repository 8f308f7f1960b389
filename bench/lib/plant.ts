/**
 * Seeds one company for the load and durability runs, through the operator
 * and public APIs only: machines, `count` and `power` signals with one sample
 * a minute, SKUs with a nominal speed on every machine, a 24-hour shift every
 * day (so a shift is always running and realtime writes are accepted), stops
 * and production logs on the previous days, and an API key with every scope
 * and a rate limit the runs never reach.
 */
import { ALL_SCOPES } from "../../src/auth/scopes";
import { operatorCall, publicCall } from "./local-worker";

/** One day, ms. */
export const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
/** Most samples per ingestion call (operator API). */
const SAMPLES_PER_CALL = 10_000;

/** Options of {@link seedCompany}. */
export interface SeedOptions {
  name: string;
  machines: number;
  /** Days before today (UTC) with minute samples, stops and production logs. */
  pastDays: number;
  /** Stops per machine and past day. */
  stopsPerDay: number;
  /** Production logs per machine and past day. */
  logsPerDay: number;
  /** Minute samples from this many days before today's 00:00 UTC until now (0 = none). */
  sampleDays: number;
}

export interface SeededMachine {
  id: number;
  uuid: string;
  name: string;
  /** Public ids: `count` first, then `power`. */
  signals: string[];
}

export interface SeededCompany {
  id: number;
  name: string;
  webhookSecret: string;
  /** An API key holding every scope, limited to 1,000,000 requests a minute. */
  key: string;
  machines: SeededMachine[];
  /** SKU ids (uuid), each with a nominal speed on every machine. */
  skus: { id: string; sku: string }[];
  /** Stop ids, oldest first. */
  stopIds: number[];
}

/** 00:00 UTC of the day containing `now`: the start of the running 24-hour shift instance. */
export function todayStart(now = Date.now()): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

/**
 * Creates and fills one company (the steps above).
 *
 * @param base the Worker's origin.
 * @param token the operator token.
 * @param options sizes; instants are laid on whole days before today's 00:00 UTC.
 * @returns ids and the key the runs use.
 * @throws Error on any non-2XX answer.
 */
export async function seedCompany(
  base: string,
  token: string,
  options: SeedOptions,
): Promise<SeededCompany> {
  const op = <T>(method: string, path: string, body?: unknown) =>
    operatorCall<T>(base, token, method, path, body);
  const [company] = await op<{ id: number; name: string; webhookSecret: string }[]>(
    "POST",
    "/companies",
    [{ name: options.name, timezone: "UTC" }],
  );
  if (!company) throw new Error("POST /companies returned no company");
  const [apiKey] = await op<{ key: string }[]>("POST", `/companies/${company.id}/api-keys`, [
    {
      name: "bench",
      scopes: ALL_SCOPES,
      rateLimit: { requests: 1_000_000, periodSeconds: 60 },
    },
  ]);
  if (!apiKey) throw new Error("POST /api-keys returned no key");
  const key = apiKey.key;
  const created = await op<{ id: number; uuid: string | null; name: string }[]>(
    "POST",
    `/companies/${company.id}/machines`,
    Array.from({ length: options.machines }, (_, i) => ({ name: `Line ${i + 1}` })),
  );
  // startTime == endTime: 24 hours, every day, so an instance is always running.
  await op("POST", `/companies/${company.id}/shifts`, [
    { name: "All day", startTime: "00:00", endTime: "00:00" },
  ]);

  const now = Date.now();
  const today = todayStart(now);
  const machines: SeededMachine[] = [];
  for (const m of created) {
    if (!m.uuid) throw new Error(`machine ${m.id} has no uuid`);
    const signals = await op<{ publicId: string }[]>("POST", `/machines/${m.id}/signals`, [
      { name: "count", displayName: "Count", kind: "counter" },
      { name: "power", displayName: "Power", kind: "analog" },
    ]);
    const ids = signals.map((s) => s.publicId);
    if (options.sampleDays > 0) {
      const from = today - options.sampleDays * DAY_MS;
      for (const [i, publicId] of ids.entries()) {
        const samples: { timestamp: string; value: number }[] = [];
        for (let t = from; t < now; t += MINUTE_MS) {
          const minute = (t - from) / MINUTE_MS;
          const value = i === 0 ? 5 + (minute % 7) : 40 + 10 * Math.sin(minute / 30);
          samples.push({ timestamp: new Date(t).toISOString(), value });
        }
        for (let s = 0; s < samples.length; s += SAMPLES_PER_CALL) {
          await op("POST", `/signals/${publicId}/samples`, {
            samples: samples.slice(s, s + SAMPLES_PER_CALL),
          });
        }
      }
    }
    machines.push({ id: m.id, uuid: m.uuid, name: m.name, signals: ids });
  }

  const skus = await publicCall<{ id: string; sku: string }[]>(base, key, "POST", "/v1/skus", [
    { sku: "JU-100", name: "Apple juice", unit: "bottles" },
    { sku: "JU-200", name: "Berry juice", unit: "bottles" },
    { sku: "JU-300", name: "Cherry juice", unit: "cases" },
  ]);
  await publicCall(
    base,
    key,
    "POST",
    "/v1/nominal-speeds",
    machines.flatMap((m) =>
      skus.map((sku, i) => ({
        machine: { id: m.id },
        sku: { id: sku.id },
        nominalSpeed: 20 + 10 * i,
        countingFactor: i === 2 ? 12 : 1,
      })),
    ),
  );

  const stopIds: number[] = [];
  for (const m of machines) {
    const stops: { startTime: string; endTime: string; isProgrammed: boolean }[] = [];
    const logs: unknown[] = [];
    for (let d = options.pastDays; d >= 1; d -= 1) {
      const day = today - d * DAY_MS;
      for (let s = 0; s < options.stopsPerDay; s += 1) {
        const start = day + (s + 1) * (DAY_MS / (options.stopsPerDay + 1));
        stops.push({
          startTime: new Date(start).toISOString(),
          endTime: new Date(start + 10 * MINUTE_MS).toISOString(),
          isProgrammed: s % 3 === 0,
        });
      }
      for (let l = 0; l < options.logsPerDay; l += 1) {
        const start = day + l * (DAY_MS / options.logsPerDay) + 30 * MINUTE_MS;
        logs.push({
          machine: { id: m.id },
          sku: { id: skus[l % skus.length]?.id },
          start: new Date(start).toISOString(),
          end: new Date(start + 60 * MINUTE_MS).toISOString(),
          count: 1000 + l,
        });
      }
    }
    if (stops.length > 0) {
      const made = await op<{ id: number }[]>("POST", `/machines/${m.id}/stops`, stops);
      stopIds.push(...made.map((s) => s.id));
    }
    if (logs.length > 0) await publicCall(base, key, "POST", "/v1/production-logs", logs);
  }
  return {
    id: company.id,
    name: company.name,
    webhookSecret: company.webhookSecret,
    key,
    machines,
    skus,
    stopIds,
  };
}
