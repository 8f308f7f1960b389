/**
 * Reading the signal archive back (archive.ts writes it): a store's catalog rows, the objects'
 * bytes from R2 with the store's in-memory cache of recent ones, and the samples of archived
 * hours decoded from them (docs/signal-storage.md, "The archive").
 */
import { DAY_MS } from "../../time/units";
import { decodeArchive } from "./archive-format";
import type { ArchiveKind } from "./archive-layout";
import { splitByHour } from "./archive-series";
import { BLOCK_MS, type DecodedSamples } from "./blocks";

/** Bytes of objects a store keeps in memory for queries over archived hours. */
const OBJECT_CACHE_BYTES = 16 * 1024 * 1024;

/** One archive object as the store's catalog knows it. */
export interface ArchiveObject {
  id: number;
  signalId: number;
  kind: ArchiveKind;
  start: number;
  end: number;
  key: string;
  /** Samples in the object. */
  n: number;
  /** The object's size, bytes. */
  bytes: number;
  /** Its first sample's instant, ms. */
  first: number;
}

export type Row = Record<string, SqlStorageValue>;

/** The archive of a store, as the operator's diagnostics and the benchmark see it. */
export interface ArchiveStatus {
  objects: ArchiveObject[];
  /** Hours (blocks) holding their samples in the store, and archived hours without them. */
  hotHours: number;
  archivedHours: number;
  /** Hours of days past the hot window whose samples are not (or no longer exactly) in the archive. */
  dueHours: number;
  databaseSize: number;
}

/**
 * The archive's objects and how many of the store's hours are hot, archived or due.
 *
 * @param hotWindowMs the store's hot window, or undefined before it knows one (nothing due).
 */
export function archiveStatus(sql: SqlStorage, hotWindowMs: number | undefined): ArchiveStatus {
  const counts = sql
    .exec<{ hot: number; archived: number; due: number }>(
      `SELECT COALESCE(SUM(samples IS NOT NULL), 0) AS hot,
         COALESCE(SUM(samples IS NULL AND archive_id IS NOT NULL), 0) AS archived,
         COALESCE(SUM(samples IS NOT NULL AND (archive_id IS NULL OR archive_stale = 1)
           AND hour < ?), 0) AS due
       FROM blocks`,
      hotWindowMs === undefined
        ? Number.NEGATIVE_INFINITY
        : archivableBefore(Date.now(), hotWindowMs),
    )
    .one();
  return {
    objects: sql
      .exec<Row>("SELECT * FROM archive_objects ORDER BY signal_id, start")
      .toArray()
      .map(toObject),
    hotHours: Number(counts.hot),
    archivedHours: Number(counts.archived),
    dueHours: Number(counts.due),
    databaseSize: sql.databaseSize,
  };
}

/**
 * Hours before this instant (ms) may be archived: a day is archived once it has wholly left
 * the hot window, so that a day object is written once, with all its hours.
 */
export function archivableBefore(now: number, hotWindowMs: number): number {
  const horizon = now - hotWindowMs;
  return horizon - (horizon % DAY_MS);
}

/** Reads a store's archive objects back; keeps the last `OBJECT_CACHE_BYTES` of them. */
export class ArchiveReader {
  private readonly cache = new Map<string, ArrayBuffer>();
  private cachedBytes = 0;

  constructor(
    private readonly sql: SqlStorage,
    private readonly bucket: R2Bucket,
  ) {}

  /**
   * The samples of archived hours whose samples the store dropped, read from their objects.
   *
   * @param hours the hours (block starts, ms) with the object that holds each.
   * @returns each hour's samples, ascending.
   * @throws Error when an object is missing from R2.
   */
  async samplesOf(
    signalId: number,
    hours: readonly { hour: number; archiveId: number }[],
  ): Promise<Map<number, DecodedSamples>> {
    const out = new Map<number, DecodedSamples>();
    const byObject = new Map<number, number[]>();
    for (const h of hours)
      byObject.set(h.archiveId, [...(byObject.get(h.archiveId) ?? []), h.hour]);
    for (const [archiveId, list] of byObject) {
      const object = this.sql
        .exec<Row>(
          "SELECT * FROM archive_objects WHERE id = ? AND signal_id = ?",
          archiveId,
          signalId,
        )
        .toArray()
        .map(toObject)[0];
      if (!object)
        throw new Error(`archive object ${archiveId} of signal ${signalId} is not in the catalog`);
      const from = Math.min(...list);
      const to = Math.max(...list) + BLOCK_MS;
      const decoded = await decodeArchive(await this.read(object.key), from, to);
      const wanted = new Set(list);
      for (const [hour, samples] of splitByHour(decoded)) {
        if (wanted.has(hour)) out.set(hour, samples);
      }
      for (const hour of list) {
        if (!out.has(hour)) out.set(hour, { ts: new Float64Array(0), values: new Float64Array(0) });
      }
    }
    return out;
  }

  /** An object's bytes, from memory when a recent query read it. */
  async read(key: string): Promise<ArrayBuffer> {
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const object = await this.bucket.get(key);
    if (!object) throw new Error(`archive object ${key} is missing from R2`);
    const bytes = await object.arrayBuffer();
    this.remember(key, bytes);
    return bytes;
  }

  remember(key: string, bytes: ArrayBuffer): void {
    this.forget(key);
    this.cache.set(key, bytes);
    this.cachedBytes += bytes.byteLength;
    for (const [oldest, b] of this.cache) {
      if (this.cachedBytes <= OBJECT_CACHE_BYTES) break;
      this.cache.delete(oldest);
      this.cachedBytes -= b.byteLength;
    }
  }

  forget(key: string): void {
    const b = this.cache.get(key);
    if (b) {
      this.cache.delete(key);
      this.cachedBytes -= b.byteLength;
    }
  }
}

export function kindOf(value: SqlStorageValue | undefined): ArchiveKind {
  return value === "hour" || value === "day" || value === "month" ? value : "year";
}

export function toObject(row: Row): ArchiveObject {
  return {
    id: Number(row.id),
    signalId: Number(row.signal_id),
    kind: kindOf(row.kind),
    start: Number(row.start),
    end: Number(row.end),
    key: String(row.key),
    n: Number(row.n),
    bytes: Number(row.bytes),
    first: Number(row.first),
  };
}
