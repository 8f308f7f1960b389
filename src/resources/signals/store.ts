/**
 * `SignalStore`: the Durable Object holding one machine's signal samples and rollups.
 *
 * One object per machine (named `<companyId>:<machineId>`, like the machine's
 * `RealtimeMachine`), a sibling of the realtime object rather than the realtime object
 * itself, so that a long query or a 10,000-sample ingestion never waits in line with a
 * scanner's realtime write (docs/signal-storage.md has the measurements). Each object's
 * SQLite holds one row per signal and UTC hour (`blocks.ts` has the format), so storage
 * grows with the plant: every machine has its own 10 GB.
 *
 * Raw samples older than the company's retention (passed with every ingestion) are
 * removed by the object's alarm; the hour and minute rollups stay.
 */

import { DurableObject } from "cloudflare:workers";
import { namedStub } from "../../durable/named-stub";
import type { Env } from "../../env";
import {
  type AggFunction,
  aggregateBlocks,
  BLOCK_QUERY_SQL,
  type BlockRow,
  readMode,
  type Series,
  sumBlocks,
} from "./aggregate";
import {
  BLOCK_MS,
  blockOf,
  type DecodedSamples,
  decodeSamples,
  encodeSamples,
  MAX_SAMPLES_PER_BLOCK,
  MINUTES_FROM_SAMPLES,
  mergeSamples,
  minuteRollups,
  summarize,
} from "./blocks";

/** How often the alarm prunes raw samples, ms. */
export const PRUNE_EVERY_MS = 3_600_000;
/** Most blocks one alarm prunes; more are left to an alarm a second later. */
export const PRUNE_BATCH_BLOCKS = 2_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS blocks (
  signal_id INTEGER NOT NULL,
  hour INTEGER NOT NULL,
  n INTEGER NOT NULL,
  sum REAL NOT NULL,
  lo REAL NOT NULL,
  hi REAL NOT NULL,
  minutes BLOB,
  samples BLOB,
  PRIMARY KEY (signal_id, hour)
);
CREATE TABLE IF NOT EXISTS settings (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  retention_ms INTEGER
);
INSERT OR IGNORE INTO settings (id, retention_ms) VALUES (1, NULL);
`;

/** The outcome of one ingestion call. */
export interface IngestResult {
  /** Samples stored (after de-duplication by instant). */
  accepted: number;
  /** Set when the call was refused as a whole (nothing stored): why. */
  refused?: string;
}

/** A block the alarm prunes; `samples` only when it has no minute rollups yet. */
type DueBlock = {
  signal_id: number;
  hour: number;
  n: number;
  has_minutes: number;
  samples: ArrayBuffer | null;
  [key: string]: SqlStorageValue;
};

/**
 * Who sends an ingestion, for the machine-state detection that runs on the samples
 * (src/machine-state/, docs/machine-state.md): the machine, and whether the signal is its
 * count signal (the one live production sums).
 */
export interface IngestContext {
  companyId: number;
  machineId: number;
  countSignal: boolean;
}

/** A block an ingestion wrote: its hour and its samples after the merge. */
export interface WrittenBlock {
  hour: number;
  merged: DecodedSamples;
}

type StoredBlock = {
  n: number;
  samples: ArrayBuffer | null;
  [key: string]: SqlStorageValue;
};

export class SignalStore extends DurableObject<Env> {
  /** Whether an alarm is known to be set (saves a storage read per ingestion). */
  private alarmSet = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
  }

  /**
   * Stores samples of one signal, rewriting only the blocks (hours) they touch, atomically
   * (one synchronous run of the object: its writes commit together).
   *
   * A sample at an instant that already has one replaces it; within one call the last
   * sample at an instant wins. Samples in an hour whose raw samples retention already
   * removed are not stored (its rollups cannot tell which sample they would replace).
   *
   * @param signalId the signal's internal id (D1 `signals.id`).
   * @param ts instants, integer ms since the epoch, any order; `values[i]` at `ts[i]`, finite.
   * @param retentionMs the company's raw-sample retention, ms, or null to keep them all.
   * @param context the machine and the signal's role, for `blocksWritten`.
   * @returns the number stored, or a refusal when a block would exceed
   *   `MAX_SAMPLES_PER_BLOCK`.
   */
  async ingest(
    signalId: number,
    ts: readonly number[],
    values: readonly number[],
    retentionMs: number | null,
    context?: IngestContext,
  ): Promise<IngestResult> {
    const order = ascendingOrder(ts);
    // Per hour: ascending distinct instants, the last sample of an instant winning.
    const byHour = new Map<number, { ts: number[]; values: number[] }>();
    for (const i of order) {
      const t = ts[i] ?? 0;
      const hour = blockOf(t);
      let group = byHour.get(hour);
      if (group === undefined) {
        group = { ts: [], values: [] };
        byHour.set(hour, group);
      }
      if (group.ts[group.ts.length - 1] === t)
        group.values[group.values.length - 1] = values[i] ?? 0;
      else {
        group.ts.push(t);
        group.values.push(values[i] ?? 0);
      }
    }
    const sql = this.ctx.storage.sql;
    const writes: { hour: number; merged: DecodedSamples }[] = [];
    let accepted = 0;
    for (const [hour, group] of byHour) {
      const stored = sql
        .exec<StoredBlock>(
          "SELECT n, samples FROM blocks WHERE signal_id = ? AND hour = ?",
          signalId,
          hour,
        )
        .toArray()[0];
      if (stored !== undefined && stored.samples === null) continue;
      const merged = mergeSamples(
        stored?.samples ? decodeSamples(hour, stored.n, stored.samples) : undefined,
        group.ts,
        group.values,
      );
      if (merged.ts.length > MAX_SAMPLES_PER_BLOCK) {
        return {
          accepted: 0,
          refused: `More than ${MAX_SAMPLES_PER_BLOCK} samples in the hour from ${new Date(hour).toISOString()}`,
        };
      }
      writes.push({ hour, merged });
      accepted += group.ts.length;
    }
    for (const { hour, merged } of writes) {
      const summary = summarize(merged.values);
      const minutes =
        merged.ts.length > MINUTES_FROM_SAMPLES
          ? minuteRollups(hour, merged.ts, merged.values).buffer
          : null;
      sql.exec(
        `INSERT OR REPLACE INTO blocks (signal_id, hour, n, sum, lo, hi, minutes, samples)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        signalId,
        hour,
        summary.n,
        summary.sum,
        summary.min,
        summary.max,
        minutes,
        encodeSamples(hour, merged.ts, merged.values).buffer,
      );
    }
    if (writes.length > 0) this.blocksWritten(signalId, writes, context);
    sql.exec("UPDATE settings SET retention_ms = ? WHERE id = 1", retentionMs);
    if (retentionMs !== null && !this.alarmSet) {
      if ((await this.ctx.storage.getAlarm()) === null) {
        await this.ctx.storage.setAlarm(Date.now() + PRUNE_EVERY_MS);
      }
      this.alarmSet = true;
    }
    return { accepted };
  }

  /**
   * Called once per ingestion that wrote blocks, in the same synchronous step as the writes
   * (so that what it stores commits with them), with the blocks in ascending hour order. The
   * machine-state store (src/machine-state/signal-store.ts) detects stops here; this class
   * does nothing.
   */
  protected blocksWritten(
    _signalId: number,
    _blocks: readonly WrittenBlock[],
    _context: IngestContext | undefined,
  ): void {}

  /**
   * Aggregates one signal over `[from, to)` in buckets (see `aggregate.ts`).
   *
   * @param q window in ms and bucket width in ms.
   * @param useRollups false decodes every sample (the naive plan, for diagnostics).
   * @returns bucket starts (ms) and values, ascending; empty buckets left out.
   */
  aggregate(
    signalId: number,
    q: { from: number; to: number; bucketWidthMs: number },
    fn: AggFunction,
    useRollups = true,
  ): Series {
    const mode = readMode(q.bucketWidthMs, useRollups);
    const rows = this.ctx.storage.sql.exec<BlockRow & Record<string, SqlStorageValue>>(
      BLOCK_QUERY_SQL,
      signalId,
      q.from,
      q.to,
      mode,
    );
    return aggregateBlocks(rows, q, fn, mode);
  }

  /**
   * Sums of one signal's values over windows, one per window (`start <= t < end`, ms);
   * 0 for a window without samples.
   */
  sums(signalId: number, windows: readonly { start: number; end: number }[]): number[] {
    return windows.map((w) => {
      if (w.end <= w.start) return 0;
      const rows = this.ctx.storage.sql.exec<BlockRow & Record<string, SqlStorageValue>>(
        BLOCK_QUERY_SQL,
        signalId,
        w.start,
        w.end,
        "hours",
      );
      return sumBlocks(rows, w.start, w.end);
    });
  }

  /** Size of the object's SQLite database, bytes (for the benchmark and capacity figures). */
  databaseSize(): number {
    return this.ctx.storage.sql.databaseSize;
  }

  /**
   * Removes raw samples of the hours that ended before `now - retention`, keeping each
   * block's hour and minute rollups (computed from the samples if the block had none).
   *
   * @returns the number of blocks pruned (at most `PRUNE_BATCH_BLOCKS`).
   */
  prune(now: number): number {
    const sql = this.ctx.storage.sql;
    const setting = sql
      .exec<{ retention_ms: number | null }>("SELECT retention_ms FROM settings WHERE id = 1")
      .one();
    if (setting.retention_ms === null) return 0;
    const horizon = now - setting.retention_ms;
    const due = sql
      .exec<DueBlock>(
        `SELECT signal_id, hour, n, minutes IS NOT NULL AS has_minutes,
           CASE WHEN minutes IS NULL THEN samples END AS samples
         FROM blocks WHERE samples IS NOT NULL AND hour + ${BLOCK_MS} <= ? LIMIT ?`,
        horizon,
        PRUNE_BATCH_BLOCKS,
      )
      .toArray();
    for (const block of due) {
      if (block.has_minutes || block.samples === null) {
        sql.exec(
          "UPDATE blocks SET samples = NULL WHERE signal_id = ? AND hour = ?",
          block.signal_id,
          block.hour,
        );
        continue;
      }
      const { ts, values } = decodeSamples(block.hour, block.n, block.samples);
      sql.exec(
        "UPDATE blocks SET minutes = ?, samples = NULL WHERE signal_id = ? AND hour = ?",
        minuteRollups(block.hour, ts, values).buffer,
        block.signal_id,
        block.hour,
      );
    }
    return due.length;
  }

  /** Prunes raw samples past the retention and sets the next alarm while a retention is set. */
  override async alarm(): Promise<void> {
    const pruned = this.prune(Date.now());
    const setting = this.ctx.storage.sql
      .exec<{ retention_ms: number | null }>("SELECT retention_ms FROM settings WHERE id = 1")
      .one();
    if (setting.retention_ms === null) {
      this.alarmSet = false;
      return;
    }
    const next = pruned === PRUNE_BATCH_BLOCKS ? 1000 : PRUNE_EVERY_MS;
    await this.ctx.storage.setAlarm(Date.now() + next);
  }
}

/**
 * The indices of `ts` in ascending instant order, ties in input order (so the last sample
 * of an instant comes last). Samples usually arrive in order: then no sort runs (a sort of
 * 10,000 indices with a comparator is about a millisecond).
 */
export function ascendingOrder(ts: readonly number[]): number[] {
  const order = ts.map((_, i) => i);
  for (let i = 1; i < ts.length; i++) {
    if ((ts[i] ?? 0) < (ts[i - 1] ?? 0)) {
      return order.sort((a, b) => (ts[a] ?? 0) - (ts[b] ?? 0) || a - b);
    }
  }
  return order;
}

/**
 * The stub of a machine's `SignalStore` (`<companyId>:<machineId>`).
 *
 * @returns a stub; creating it makes no call.
 */
export function signalStore(
  env: Pick<Env, "SIGNAL_STORE">,
  companyId: number,
  machineId: number,
): DurableObjectStub<SignalStore> {
  return namedStub(env.SIGNAL_STORE, `${companyId}:${machineId}`);
}
