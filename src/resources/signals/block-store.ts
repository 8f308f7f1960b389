/**
 * A signal store's blocks (docs/signal-storage.md): one row per signal and UTC hour with its
 * rollups, written whole, read by aggregation (from rollups, hot blocks or the R2 archive),
 * and cut back to the clock's bound when samples from the future were accepted before they
 * were refused. ./store.ts extends it with ingestion, retention and the archive's alarm.
 */
import { DurableObject } from "cloudflare:workers";
import { migrateObject, type ObjectMigration } from "../../db/object-migrations";
import type { Env } from "../../env";
import { log } from "../../observability/log";
import {
  type AggFunction,
  aggregateBlocks,
  BLOCK_QUERY_SQL,
  type BlockRow,
  needsArchivedSamples,
  type ReadMode,
  readMode,
  type Series,
  sumBlocks,
} from "./aggregate";
import { SignalArchive } from "./archive";
import {
  BLOCK_MS,
  type DecodedSamples,
  decodeSamples,
  encodeSamples,
  MINUTES_FROM_SAMPLES,
  minuteRollups,
  summarize,
} from "./blocks";
import { latestSampleAt } from "./sample-bounds";

/** A stored block's row as ingestion and aggregation read it: its samples, or its archive. */
export type StoredBlock = {
  n: number;
  samples: ArrayBuffer | null;
  archive_id: number | null;
  [key: string]: SqlStorageValue;
};

/** A block's row as written: its rollups and its samples, encoded (no SQL yet). */
export interface EncodedBlock {
  hour: number;
  summary: { n: number; sum: number; min: number; max: number };
  /** The minute rollups, above `MINUTES_FROM_SAMPLES` samples. */
  minutes: ArrayBufferLike | null;
  samples: ArrayBuffer;
}

/**
 * A block's row from its samples: the hour rollup, the minute rollups and the encoded
 * samples. Pure computation, so that an ingestion can encode its blocks a piece at a time
 * and write them all in one synchronous step (./store.ts).
 *
 * @param hour the block's start, ms; `merged` its samples, ascending.
 */
export function encodeBlock(hour: number, merged: DecodedSamples): EncodedBlock {
  return {
    hour,
    summary: summarize(merged.values),
    minutes:
      merged.ts.length > MINUTES_FROM_SAMPLES
        ? minuteRollups(hour, merged.ts, merged.values).buffer
        : null,
    samples: encodeSamples(hour, merged.ts, merged.values).buffer,
  };
}

/** The blocks of one machine's signals, over its Durable Object's SQLite. */
export abstract class SignalBlockStore extends DurableObject<Env> {
  protected readonly archive: SignalArchive;

  /**
   * @param migrations the deployed class's schema steps, which hold this store's tables
   *   (./signal-migrations.ts) and its subclass's.
   */
  constructor(ctx: DurableObjectState, env: Env, migrations: readonly ObjectMigration[]) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, migrations);
    this.archive = new SignalArchive(ctx.storage.sql, env.HISTORY, (work) =>
      this.inTurn(() => ctx.blockConcurrencyWhile(work)),
    );
  }

  /** The last of the block writers in turn (`inTurn`), or null when none runs. */
  private writing: Promise<unknown> | null = null;

  /**
   * Runs `work`, a writer of the blocks, once the writers before it are done: an ingestion
   * (which merges a backfill a piece at a time, letting other calls of the object and of the
   * isolate run between pieces: ./store.ts) and an archive write (which reads blocks, then
   * drops their samples once R2 holds them: ./archive.ts) never overlap, so neither drops
   * or overwrites what the other wrote. With no writer running, `work` starts at once.
   *
   * @returns what `work` returns or throws (a failure does not stop the writers after it).
   */
  protected inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writing ? this.writing.then(work, work) : work();
    const tail = run.catch(() => undefined);
    this.writing = tail;
    void tail.then(() => {
      if (this.writing === tail) this.writing = null;
    });
    return run;
  }

  /** Writes one block (hour) of a signal with its rollups, replacing the stored one. */
  protected writeBlock(signalId: number, hour: number, merged: DecodedSamples): void {
    this.storeBlock(signalId, encodeBlock(hour, merged));
  }

  /** Writes a block encoded by {@link encodeBlock}, replacing the stored one. */
  protected storeBlock(signalId: number, block: EncodedBlock): void {
    const { hour, summary, minutes, samples } = block;
    // An archived hour stays in its object, marked stale: the next step rewrites it.
    this.ctx.storage.sql.exec(
      `INSERT INTO blocks (signal_id, hour, n, sum, lo, hi, minutes, samples)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (signal_id, hour) DO UPDATE SET n = excluded.n, sum = excluded.sum,
         lo = excluded.lo, hi = excluded.hi, minutes = excluded.minutes,
         samples = excluded.samples, archive_stale = (archive_id IS NOT NULL)`,
      signalId,
      hour,
      summary.n,
      summary.sum,
      summary.min,
      summary.max,
      minutes,
      samples,
    );
  }

  /**
   * Drops the samples after `latestSampleAt(now)` that an ingestion accepted before sample
   * instants were bounded (docs/input-bounds.md, "Sample instants"): blocks wholly after the
   * bound go, the block holding it keeps its samples up to it (rollups rewritten). Run as the
   * object wakes (its constructor): two index seeks per signal of the store when there is
   * nothing to drop; synchronous, so the repair commits as one step.
   *
   * @param now the object's clock, ms.
   * @returns the blocks changed: the signal, the hour, and the samples left (null: removed).
   */
  protected dropFutureSamples(now: number): FutureDrop[] {
    const sql = this.ctx.storage.sql;
    const bound = latestSampleAt(now);
    const out: FutureDrop[] = [];
    // The signals of the store, one index seek each (no scan of the blocks).
    for (
      let row = sql.exec<{ id: number | null }>("SELECT min(signal_id) AS id FROM blocks").one();
      row.id !== null;
      row = sql
        .exec<{ id: number | null }>(
          "SELECT min(signal_id) AS id FROM blocks WHERE signal_id > ?",
          row.id,
        )
        .one()
    ) {
      const signalId = row.id;
      const late = sql
        .exec<StoredBlock & { hour: number }>(
          "SELECT hour, n, samples, archive_id FROM blocks WHERE signal_id = ? AND hour > ?",
          signalId,
          bound - BLOCK_MS,
        )
        .toArray();
      for (const block of late) {
        const kept =
          block.samples === null
            ? null
            : keepUpTo(decodeSamples(block.hour, block.n, block.samples), bound);
        if (kept === null || kept.ts.length === 0) {
          sql.exec("DELETE FROM blocks WHERE signal_id = ? AND hour = ?", signalId, block.hour);
          out.push({ signalId, hour: block.hour, kept: null });
        } else if (kept.ts.length < block.n) {
          this.writeBlock(signalId, block.hour, kept);
          out.push({ signalId, hour: block.hour, kept });
        }
      }
    }
    if (out.length > 0) {
      log("warn", "future_samples_dropped", {
        blocks: out.length,
        after: new Date(bound).toISOString(),
      });
    }
    return out;
  }

  /**
   * Aggregates one signal over `[from, to)` in buckets (see `aggregate.ts`).
   *
   * @param q window in ms and bucket width in ms.
   * @param useRollups false decodes every sample (the naive plan, for diagnostics).
   * @returns bucket starts (ms) and values, ascending; empty buckets left out.
   */
  async aggregate(
    signalId: number,
    q: { from: number; to: number; bucketWidthMs: number },
    fn: AggFunction,
    useRollups = true,
  ): Promise<Series> {
    const mode = readMode(q.bucketWidthMs, useRollups);
    const rows = await this.blocksOf(signalId, q.from, q.to, mode);
    return aggregateBlocks(rows, q, fn, mode);
  }

  /**
   * Sums of one signal's values over windows, one per window (`start <= t < end`, ms);
   * 0 for a window without samples.
   */
  async sums(
    signalId: number,
    windows: readonly { start: number; end: number }[],
  ): Promise<number[]> {
    const out: number[] = [];
    for (const w of windows) {
      if (w.end <= w.start) {
        out.push(0);
        continue;
      }
      out.push(sumBlocks(await this.blocksOf(signalId, w.start, w.end, "hours"), w.start, w.end));
    }
    return out;
  }

  /**
   * The blocks overlapping `[from, to)` with what `mode` reads of them, the samples of
   * archived hours read from R2 (into `decoded`) when the aggregation needs them.
   */
  private async blocksOf(
    signalId: number,
    from: number,
    to: number,
    mode: ReadMode,
  ): Promise<BlockRow[]> {
    const rows = this.ctx.storage.sql
      .exec<BlockRow & Record<string, SqlStorageValue>>(BLOCK_QUERY_SQL, signalId, from, to, mode)
      .toArray() as BlockRow[];
    const needed = rows.filter((row) => needsArchivedSamples(row, { from, to }, mode));
    if (needed.length === 0) return rows;
    const samples = await this.archive.reader.samplesOf(
      signalId,
      needed.map((row) => ({ hour: row.hour, archiveId: Number(row.archive_id) })),
    );
    for (const row of needed) row.decoded = samples.get(row.hour);
    return rows;
  }
}

/** A block `dropFutureSamples` changed: its samples left, or null when it was removed. */
interface FutureDrop {
  signalId: number;
  hour: number;
  kept: DecodedSamples | null;
}

/** The samples at or before `bound` (instants ascending). */
function keepUpTo(samples: DecodedSamples, bound: number): DecodedSamples {
  let n = samples.ts.length;
  while (n > 0 && (samples.ts[n - 1] as number) > bound) n--;
  return n === samples.ts.length
    ? samples
    : { ts: samples.ts.slice(0, n), values: samples.values.slice(0, n) };
}
