/**
 * The archive of one machine's `SignalStore`: the samples of hours older than the company's
 * hot window moved into Parquet objects on R2 (`archive-format.ts`), read back when a query
 * needs them, and rewritten when a late sample reaches an archived hour. Every change of an
 * object runs under `blockConcurrencyWhile` and drops raw samples only once the object was
 * read back equal (docs/signal-storage.md, "The archive": where an hour's samples are,
 * crash safety).
 */
import { inJsonListText } from "../../db/json-list";
import { DAY_MS } from "../../time/units";
import { decodeArchive, encodeArchive } from "./archive-format";
import {
  type ArchivePlace,
  type ArchiveSpan,
  archiveKey,
  DAY_OBJECT_MAX_SAMPLES,
  DAY_OBJECT_MIN_SAMPLES,
  MONTH_OBJECT_MIN_DAY_SAMPLES,
  spanOf,
} from "./archive-layout";
import {
  type ArchiveObject,
  ArchiveReader,
  archivableBefore,
  kindOf,
  type Row,
  toObject,
} from "./archive-reader";
import { keepHours, mergeByTime, sameSamples } from "./archive-series";
import { type DecodedSamples, decodeSamples, encodeSamples } from "./blocks";

/** Most objects one archive step writes; more are left to an alarm a second later. */
const ARCHIVE_OBJECTS_PER_STEP = 8;
/** Most samples one archive step writes (about a 1 Hz signal's 5 days). */
const ARCHIVE_SAMPLES_PER_STEP = 500_000;

/** The archive of one store: its SQL, the R2 bucket and the object's concurrency control. */
export class SignalArchive {
  /** Reads objects back (with the store's cache of them). */
  readonly reader: ArchiveReader;

  constructor(
    private readonly sql: SqlStorage,
    private readonly bucket: R2Bucket,
    private readonly exclusive: <T>(work: () => Promise<T>) => Promise<T>,
  ) {
    this.reader = new ArchiveReader(sql, bucket);
  }

  /** Where this store's objects go and its hot window (ms), or null before the first ingestion that said. */
  settings(): { place: ArchivePlace; hotWindowMs: number } | null {
    const row = this.sql
      .exec<Row>("SELECT hot_window_ms, place_company, place_machine FROM settings WHERE id = 1")
      .one();
    if (row.hot_window_ms === null || row.place_company === null || row.place_machine === null) {
      return null;
    }
    return {
      place: { companyId: Number(row.place_company), machineId: Number(row.place_machine) },
      hotWindowMs: Number(row.hot_window_ms),
    };
  }

  /** Records the store's place and the company's hot window (every ingestion passes them). */
  setSettings(place: ArchivePlace, hotWindowMs: number): void {
    this.sql.exec(
      "UPDATE settings SET hot_window_ms = ?, place_company = ?, place_machine = ? WHERE id = 1",
      hotWindowMs,
      place.companyId,
      place.machineId,
    );
  }

  /** The objects of one signal (or all), by start. */
  objects(signalId?: number): ArchiveObject[] {
    const rows =
      signalId === undefined
        ? this.sql.exec<Row>(`SELECT * FROM archive_objects ORDER BY signal_id, start`)
        : this.sql.exec<Row>(
            `SELECT * FROM archive_objects WHERE signal_id = ? ORDER BY start`,
            signalId,
          );
    return rows.toArray().map(toObject);
  }

  /**
   * One bounded archive step: writes the objects of the days (dense), months (sparse days)
   * and hours (very dense days) that ended before `now - hot window` and hold samples not yet
   * archived or changed since, at most `ARCHIVE_OBJECTS_PER_STEP` objects and about
   * `ARCHIVE_SAMPLES_PER_STEP` samples.
   *
   * @returns true when more is left to archive.
   * @throws the R2 error of a failed write or read-back (nothing is marked then: the next
   *   alarm tries again).
   */
  async step(now: number): Promise<boolean> {
    const settings = this.settings();
    if (!settings) return false;
    const before = archivableBefore(now, settings.hotWindowMs);
    const hours = this.sql
      .exec<Row>(
        `SELECT signal_id, hour FROM blocks
         WHERE samples IS NOT NULL AND (archive_id IS NULL OR archive_stale = 1) AND hour < ?
         ORDER BY signal_id, hour LIMIT 10000`,
        before,
      )
      .toArray();
    let objects = 0;
    let samples = 0;
    const done = new Set<string>();
    const days = new DaySpans(this.sql);
    for (const h of hours) {
      const signalId = Number(h.signal_id);
      const hour = Number(h.hour);
      // A month's or year's object is rewritten as its days leave the window (from the
      // samples its sparse hours keep here), not held back until the month or year ends.
      const span = days.spanOfHour(signalId, hour);
      const key = archiveKey(settings.place, signalId, span);
      if (done.has(key)) continue;
      done.add(key);
      if (objects >= ARCHIVE_OBJECTS_PER_STEP || samples >= ARCHIVE_SAMPLES_PER_STEP) return true;
      samples += await this.exclusive(() => this.writeObject(signalId, span, key, before));
      objects++;
    }
    return hours.length === 10_000;
  }

  /**
   * Writes (or rewrites) one object: the samples the store holds for its hours, with the
   * samples of its other hours taken from the object as it is; reads it back; then marks
   * the hours archived and drops the samples of those with minute rollups.
   *
   * @param before hours not yet in the object join it only if they start before this (the
   *   first day still in the hot window).
   * @returns the samples written.
   * @throws the R2 error of a failed write or read-back, or a read-back that differs (no
   *   hour marked then).
   */
  private async writeObject(
    signalId: number,
    span: ArchiveSpan,
    key: string,
    before: number,
  ): Promise<number> {
    const existing = this.sql
      .exec<Row>("SELECT * FROM archive_objects WHERE key = ?", key)
      .toArray()
      .map(toObject)[0];
    const rows = this.hoursOfObject(signalId, span, existing, before);
    const local = new Map<number, DecodedSamples>();
    for (const row of rows) {
      if (row.samples !== null) {
        local.set(
          Number(row.hour),
          decodeSamples(Number(row.hour), Number(row.n), row.samples as ArrayBuffer),
        );
      }
    }
    // Hours whose samples are only in the object: taken from it (hours it holds that no row
    // refers to any more, past the retention, are left out).
    const kept: DecodedSamples[] = [];
    const onlyThere = new Set(
      rows.filter((row) => row.samples === null).map((row) => Number(row.hour)),
    );
    if (existing && onlyThere.size > 0) {
      kept.push(keepHours(await decodeArchive(await this.reader.read(existing.key)), onlyThere));
    }
    const merged = mergeByTime([...kept, ...local.values()]);
    if (merged.ts.length === 0) {
      if (existing) await this.remove([existing]);
      return 0;
    }
    const bytes = await this.putVerified(key, merged);
    this.markArchived(signalId, span, key, merged, bytes, local.keys());
    return merged.ts.length;
  }

  /**
   * The block rows of an object's hours, by hour: those already in it, and those of its
   * days past the hot window that no object holds yet and whose day belongs to an object of
   * this kind (`DaySpans.spanOfHour`).
   *
   * @param existing the object as the catalog has it, or undefined (not written yet).
   * @param before hours not yet in an object join only if they start before this, ms.
   * @returns rows of `hour`, `n`, `samples` (null: only in the object) and `archive_id`.
   */
  private hoursOfObject(
    signalId: number,
    span: ArchiveSpan,
    existing: ArchiveObject | undefined,
    before: number,
  ): Row[] {
    const days = new DaySpans(this.sql);
    return this.sql
      .exec<Row>(
        `SELECT hour, n, samples, archive_id FROM blocks
         WHERE signal_id = ? AND hour >= ? AND hour < ?
           AND (archive_id = ? OR (archive_id IS NULL AND samples IS NOT NULL AND hour < ?))
         ORDER BY hour`,
        signalId,
        span.start,
        span.end,
        existing?.id ?? -1,
        before,
      )
      .toArray()
      .filter((row) => {
        if (row.archive_id !== null || span.kind === "day" || span.kind === "hour") return true;
        return days.spanOfHour(signalId, Number(row.hour)).kind === span.kind;
      });
  }

  /**
   * Puts an object's samples to R2 as Parquet, then reads it back and compares it sample by
   * sample before anything is dropped; the reader keeps the bytes.
   *
   * @param samples the object's samples, by time (ms) with their values.
   * @returns the object's bytes as stored.
   * @throws the R2 error of the write or read, or an Error when the object is missing or
   *   differs once read back.
   */
  private async putVerified(key: string, samples: DecodedSamples): Promise<ArrayBuffer> {
    const file = await encodeArchive(samples.ts, samples.values);
    await this.bucket.put(key, file, {
      customMetadata: { samples: String(samples.ts.length), format: "signal-archive-1" },
    });
    const stored = await this.bucket.get(key);
    if (!stored) throw new Error(`archive object ${key} not found after writing it`);
    const bytes = await stored.arrayBuffer();
    const back = await decodeArchive(bytes);
    if (!sameSamples(back, samples)) throw new Error(`archive object ${key} read back differs`);
    this.reader.remember(key, bytes);
    return bytes;
  }

  /**
   * Records a written object in the catalog (its span, sample count, size in bytes and first
   * sample's time, ms) and marks its hours archived: an hour with minute rollups no longer
   * needs its samples here; a sparse one keeps them (they cost less than the rollups it has
   * not got).
   *
   * @param hours the hours whose samples the store held and the object now holds, ms.
   */
  private markArchived(
    signalId: number,
    span: ArchiveSpan,
    key: string,
    samples: DecodedSamples,
    bytes: ArrayBuffer,
    hours: Iterable<number>,
  ): void {
    const id = this.sql
      .exec<Row>(
        `INSERT INTO archive_objects (signal_id, kind, start, "end", key, n, bytes, first)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(key) DO UPDATE SET n = excluded.n, bytes = excluded.bytes,
           first = excluded.first
         RETURNING id`,
        signalId,
        span.kind,
        span.start,
        span.end,
        key,
        samples.ts.length,
        bytes.byteLength,
        samples.ts[0] ?? span.start,
      )
      .one().id;
    // One statement for all the hours (a year object of hourly samples has 8,760).
    this.sql.exec(
      `UPDATE blocks SET archive_id = ?1, archive_stale = 0,
         samples = CASE WHEN minutes IS NULL THEN samples END
       WHERE signal_id = ?2 AND ${inJsonListText("hour", "?3")}`,
      id,
      signalId,
      JSON.stringify([...hours]),
    );
  }

  /**
   * Brings archived hours whose samples the store dropped back into it (a late sample is
   * about to be merged into them): their samples again in their rows, marked stale so that
   * the next step rewrites their object. Run it under `blockConcurrencyWhile`.
   */
  async restore(
    signalId: number,
    hours: readonly { hour: number; archiveId: number }[],
  ): Promise<void> {
    const samples = await this.reader.samplesOf(signalId, hours);
    for (const [hour, s] of samples) {
      this.sql.exec(
        "UPDATE blocks SET samples = ?, archive_stale = 1 WHERE signal_id = ? AND hour = ? AND samples IS NULL",
        encodeSamples(hour, s.ts, s.values).buffer,
        signalId,
        hour,
      );
    }
  }

  /**
   * Applies the retention to the archive: removes the objects that no row refers to any more
   * (retention's prune clears the rows of expired hours first) and rewrites, one bounded step
   * at a time, those that still hold samples from before `horizon` (a month or year that is
   * partly expired), without them.
   *
   * @returns true when more is left for the next alarm.
   */
  async retire(horizon: number): Promise<boolean> {
    const unused = this.sql
      .exec<Row>(
        `SELECT * FROM archive_objects o
         WHERE NOT EXISTS (SELECT 1 FROM blocks b WHERE b.archive_id = o.id) LIMIT 1000`,
      )
      .toArray()
      .map(toObject);
    if (unused.length > 0) await this.remove(unused);
    const partly = this.sql
      .exec<Row>(
        `SELECT * FROM archive_objects WHERE first < ? ORDER BY id LIMIT ?`,
        horizon,
        ARCHIVE_OBJECTS_PER_STEP + 1,
      )
      .toArray()
      .map(toObject);
    for (const o of partly.slice(0, ARCHIVE_OBJECTS_PER_STEP)) {
      await this.exclusive(() => this.writeObject(o.signalId, o, o.key, o.start));
    }
    return unused.length === 1000 || partly.length > ARCHIVE_OBJECTS_PER_STEP;
  }

  /** Deletes objects from R2, then from the catalog (a crash between leaves a key to delete again). */
  private async remove(objects: readonly ArchiveObject[]): Promise<void> {
    await this.bucket.delete(objects.map((o) => o.key));
    for (const o of objects) {
      this.sql.exec("DELETE FROM archive_objects WHERE id = ?", o.id);
      this.reader.forget(o.key);
    }
  }
}

export type { ArchiveObject };

/** A day's samples, and the objects of its hours that are in one (`hours[i]` is in `placed[i]`). */
type DayFacts = { n: number; placed: ArchiveSpan[]; hours: number[] };

/**
 * Which object an hour's samples go to, read a day at a time: one query per signal and UTC
 * day (its hours' objects and its samples) instead of two per hour, so that an archive step
 * over a year of sparse hours (8,760 of them) asks SQLite 365 times, not 17,520. Made afresh
 * for each step and each object write, so that what an ingestion changed between them is seen.
 */
class DaySpans {
  private readonly days = new Map<string, DayFacts>();

  constructor(private readonly sql: SqlStorage) {}

  /**
   * The object an hour's samples go to: the one it (or, but for hour objects, its day) is
   * already in; else, by its day's samples, an object of its own (a very dense day), its
   * day's (at least `DAY_OBJECT_MIN_SAMPLES`), its month's (at least
   * `MONTH_OBJECT_MIN_DAY_SAMPLES`) or its year's.
   *
   * @param hour the hour's start, ms since the epoch (UTC).
   */
  spanOfHour(signalId: number, hour: number): ArchiveSpan {
    const day = hour - (hour % DAY_MS);
    const facts = this.day(signalId, day);
    for (const [i, placed] of facts.placed.entries()) {
      if (placed.kind !== "hour" || facts.hours[i] === hour) return placed;
    }
    if (facts.n > DAY_OBJECT_MAX_SAMPLES) return spanOf("hour", hour);
    if (facts.n >= DAY_OBJECT_MIN_SAMPLES) return spanOf("day", day);
    return spanOf(facts.n >= MONTH_OBJECT_MIN_DAY_SAMPLES ? "month" : "year", day);
  }

  /** A day's samples and the objects its hours are in (by hour), read once. */
  private day(signalId: number, day: number): DayFacts {
    const key = `${signalId}:${day}`;
    let facts = this.days.get(key);
    if (facts) return facts;
    facts = { n: 0, placed: [], hours: [] };
    const rows = this.sql.exec<Row>(
      `SELECT b.hour, b.n, o.kind, o.start, o."end" FROM blocks b
       LEFT JOIN archive_objects o ON o.id = b.archive_id
       WHERE b.signal_id = ? AND b.hour >= ? AND b.hour < ? ORDER BY b.hour`,
      signalId,
      day,
      day + DAY_MS,
    );
    for (const row of rows) {
      facts.n += Number(row.n);
      if (row.kind === null) continue;
      facts.placed.push({ kind: kindOf(row.kind), start: Number(row.start), end: Number(row.end) });
      facts.hours.push(Number(row.hour));
    }
    this.days.set(key, facts);
    return facts;
  }
}
