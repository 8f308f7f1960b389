/**
 * Signal lookups kept per isolate, so that a polling dashboard and a plant uploading every
 * 10 s cost D1 no read per call: the signal-data route's for `CREDENTIAL_CACHE_SECONDS`, the
 * ingestion's and the machine's `count` signal's for `INGEST_CACHE_MS`, refreshed ahead of
 * their expiry. What is kept, what is forgotten and when other isolates see a change:
 * docs/signal-storage.md, "Which signal".
 */

import type { Database } from "../../db/client";
import type { CompanyScope } from "../../db/company-scope";
import { MINUTE_MS, SECOND_MS } from "../../time/units";
import {
  findIngestTarget,
  findSignalByMachineUuid,
  type IngestTarget,
  type SignalRow,
} from "./queries";

/** Most lookups one isolate keeps (per cache). */
const MAX_CACHED_SIGNALS = 10_000;

/** How long the ingestion's and the `count` sums' lookups are kept, ms. */
export const INGEST_CACHE_MS = 5 * MINUTE_MS;
/** Within this much of its expiry, a hit starts a refresh in the background, ms. */
export const REFRESH_AHEAD_MS = MINUTE_MS;
/** How long "this machine has no `count` signal" is kept, ms. */
const MISSING_COUNT_MS = MINUTE_MS;

/** Keeps a promise alive after the answer (`ctx.waitUntil`); absent = no refresh ahead. */
export type Background = (promise: Promise<unknown>) => void;

const cache = new Map<string, { row: SignalRow; expiresAt: number }>();

/** An entry of a minutes-long cache: the value, when it expires, and a refresh under way. */
interface Kept<T> {
  value: T;
  expiresAt: number;
  refreshing: boolean;
}

/**
 * A per-isolate cache whose entries last `ttlMs` and are refreshed ahead of their expiry:
 * a hit in the last `REFRESH_AHEAD_MS` answers from the cache and reloads the entry in the
 * background, so that a steady caller never waits for D1.
 */
class RefreshingCache<T> {
  private readonly entries = new Map<string, Kept<T>>();

  /**
   * @param ttlOf how long a loaded value is kept, ms (0: not kept).
   */
  constructor(private readonly ttlOf: (value: T) => number) {}

  /** The cached value, or `load()`'s (kept for its ttl). */
  async get(key: string, load: () => Promise<T>, background?: Background): Promise<T> {
    const now = Date.now();
    const kept = this.entries.get(key);
    if (kept && kept.expiresAt > now) {
      if (background && !kept.refreshing && kept.expiresAt - now <= REFRESH_AHEAD_MS) {
        kept.refreshing = true;
        background(
          load().then(
            (value) => this.put(key, value),
            () => {
              kept.refreshing = false;
            },
          ),
        );
      }
      return kept.value;
    }
    const value = await load();
    this.put(key, value);
    return value;
  }

  private put(key: string, value: T): void {
    const ttl = this.ttlOf(value);
    if (ttl <= 0) {
      this.entries.delete(key);
      return;
    }
    if (this.entries.size >= MAX_CACHED_SIGNALS) this.entries.clear();
    this.entries.set(key, { value, expiresAt: Date.now() + ttl, refreshing: false });
  }

  /** Drops the entries whose key or value `matches`. */
  forget(matches: (key: string, value: T) => boolean): void {
    for (const [key, kept] of this.entries) if (matches(key, kept.value)) this.entries.delete(key);
  }
}

const ingestCache = new RefreshingCache<IngestTarget | undefined>((row) =>
  row ? INGEST_CACHE_MS : 0,
);
const countCache = new RefreshingCache<number | null>((id) =>
  id === null ? MISSING_COUNT_MS : INGEST_CACHE_MS,
);

/**
 * `findSignalByMachineUuid`, through this isolate's cache.
 *
 * @param cacheSeconds how long a found signal is kept (0: not kept).
 * @returns the signal, or undefined (as `findSignalByMachineUuid`).
 */
export async function lookupSignal(
  scope: CompanyScope,
  cacheSeconds: number,
  machineUuid: string,
  publicId: string,
): Promise<SignalRow | undefined> {
  const key = `${scope.companyId}/${machineUuid}/${publicId}`;
  const now = Date.now();
  const cached = cache.get(key);
  if (cached && cached.expiresAt > now) return cached.row;
  const row = await findSignalByMachineUuid(scope, machineUuid, publicId);
  if (row && cacheSeconds > 0) {
    if (cache.size >= MAX_CACHED_SIGNALS) cache.clear();
    cache.set(key, { row, expiresAt: now + cacheSeconds * SECOND_MS });
  } else cache.delete(key);
  return row;
}

/**
 * `findIngestTarget`, through this isolate's cache (`INGEST_CACHE_MS`, refreshed ahead).
 *
 * @param shardOfSignal the client of the shard that holds the signal (the operator API asks
 *   the directory), or null when no shard does; called on a miss only.
 * @param publicId any case.
 * @param background keeps the refresh ahead alive (`ctx.waitUntil`).
 * @returns the signal, or undefined (not found or deleted; never kept).
 */
export async function lookupIngestTarget(
  shardOfSignal: () => Promise<Database | null>,
  publicId: string,
  background?: Background,
): Promise<IngestTarget | undefined> {
  const id = publicId.toLowerCase();
  const load = async () => {
    const db = await shardOfSignal();
    return db ? findIngestTarget(db, id) : undefined;
  };
  return ingestCache.get(id, load, background);
}

/**
 * The id of a machine's `count` signal (its lowest-id signal of that name, not deleted), through
 * this isolate's cache (`INGEST_CACHE_MS`; "none" for `MISSING_COUNT_MS`).
 *
 * @param load reads the id from D1 (null: the machine has none).
 * @param background keeps the refresh ahead alive (`ctx.waitUntil`).
 */
export async function lookupCountSignal(
  machine: { companyId: number; machineId: number },
  load: () => Promise<number | null>,
  background?: Background,
): Promise<number | null> {
  return countCache.get(`${machine.companyId}:${machine.machineId}`, load, background);
}

/** Drops a signal from this isolate's caches (after its deletion), by its public id and id. */
export function forgetSignal(publicId: string, id?: number): void {
  const publicKey = publicId.toLowerCase();
  for (const [key, entry] of cache) if (entry.row.publicId === publicKey) cache.delete(key);
  ingestCache.forget((key) => key === publicKey);
  if (id !== undefined) countCache.forget((_key, value) => value === id);
}

/** A `count` signal was created on the machine: "it has none" no longer holds. */
export function forgetMissingCount(companyId: number, machineId: number): void {
  countCache.forget((key) => key === `${companyId}:${machineId}`);
}

/** Drops a company's signals from this isolate's ingestion cache (after its retention changed). */
export function forgetCompanySignals(companyId: number): void {
  ingestCache.forget((_key, row) => row?.companyId === companyId);
}
