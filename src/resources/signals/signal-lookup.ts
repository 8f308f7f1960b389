/**
 * Signal lookups kept per isolate for `CREDENTIAL_CACHE_SECONDS` (default 5 s), as API keys
 * and the realtime catalog resolutions are: the signal-data route's (by machine uuid and
 * public id), so that a dashboard polling a signal costs no D1 round trip, which on a busy
 * local server was most of a short query's time; and the operator ingestion's (by public
 * id, with the company's retention), one D1 round trip saved per 10,000 samples.
 *
 * Only found signals are kept, so a new signal answers at once. A signal deleted through
 * the operator API is forgotten at once in the isolate that deleted it (`forgetSignal`),
 * and a company's signals when its retention changes (`forgetCompanySignals`); other
 * isolates see either within the cache time (a store learns the retention with its next
 * ingestion anyway). Samples stay in the store either way.
 */
import type { Database } from "../../db/client";
import {
  findIngestTarget,
  findSignalByMachineUuid,
  type IngestTarget,
  type SignalRow,
} from "./queries";

/** Most lookups one isolate keeps. */
const MAX_CACHED_SIGNALS = 10_000;

const cache = new Map<string, { row: SignalRow; expiresAt: number }>();
const ingestCache = new Map<string, { row: IngestTarget; expiresAt: number }>();

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

/**
 * `findIngestTarget`, through this isolate's cache.
 *
 * @param cacheSeconds how long a found signal is kept (0: not kept).
 * @param publicId any case.
 */
export async function lookupIngestTarget(
  db: Database,
  cacheSeconds: number,
  publicId: string,
): Promise<IngestTarget | undefined> {
  const id = publicId.toLowerCase();
  const now = Date.now();
  const cached = ingestCache.get(id);
  if (cached && cached.expiresAt > now) return cached.row;
  const row = await findIngestTarget(db, id);
  if (row && cacheSeconds > 0) {
    if (ingestCache.size >= MAX_CACHED_SIGNALS) ingestCache.clear();
    ingestCache.set(id, { row, expiresAt: now + cacheSeconds * 1000 });
  } else ingestCache.delete(id);
  return row;
}

/** Drops a signal from this isolate's caches (after its deletion), by its public id. */
export function forgetSignal(publicId: string): void {
  const id = publicId.toLowerCase();
  for (const [key, entry] of cache) if (entry.row.publicId === id) cache.delete(key);
  ingestCache.delete(id);
}

/** Drops a company's signals from this isolate's ingestion cache (after its retention changed). */
export function forgetCompanySignals(companyId: number): void {
  for (const [key, entry] of ingestCache)
    if (entry.row.companyId === companyId) ingestCache.delete(key);
}
