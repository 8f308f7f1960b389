/**
 * The signal-data route's lookup of a signal by its machine's uuid and its public id,
 * kept per isolate for `CREDENTIAL_CACHE_SECONDS` (default 5 s) as API keys and the
 * realtime catalog resolutions are: a dashboard polling a signal costs no D1 round trip,
 * which on a busy local server was most of a short query's time.
 *
 * Only found signals are kept, so a new signal answers at once. A signal deleted through
 * the operator API is forgotten at once in the isolate that deleted it (`forgetSignal`)
 * and within the cache time in every other one; its samples stay in the store either way.
 */
import type { Database } from "../../db/client";
import { findSignalByMachineUuid, type SignalRow } from "./queries";

/** Most lookups one isolate keeps. */
const MAX_CACHED_SIGNALS = 10_000;

const cache = new Map<string, { row: SignalRow; expiresAt: number }>();

/**
 * `findSignalByMachineUuid`, through this isolate's cache.
 *
 * @param cacheSeconds how long a found signal is kept (0: not kept).
 * @returns the signal, or undefined (as `findSignalByMachineUuid`).
 */
export async function lookupSignal(
  db: Database,
  cacheSeconds: number,
  companyId: number,
  machineUuid: string,
  publicId: string,
): Promise<SignalRow | undefined> {
  const key = `${companyId}/${machineUuid}/${publicId}`;
  const now = Date.now();
  const cached = cache.get(key);
  if (cached && cached.expiresAt > now) return cached.row;
  const row = await findSignalByMachineUuid(db, companyId, machineUuid, publicId);
  if (row && cacheSeconds > 0) {
    if (cache.size >= MAX_CACHED_SIGNALS) cache.clear();
    cache.set(key, { row, expiresAt: now + cacheSeconds * 1000 });
  } else cache.delete(key);
  return row;
}

/** Drops a signal from this isolate's cache (after its deletion), by its public id. */
export function forgetSignal(publicId: string): void {
  const id = publicId.toLowerCase();
  for (const [key, entry] of cache) if (entry.row.publicId === id) cache.delete(key);
}
