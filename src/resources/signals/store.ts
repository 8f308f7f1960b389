/**
 * `SignalSampleStore`: the samples half of the `SignalStore` Durable Object (deployed as
 * src/machine-state/signal-store.ts's `SignalStore`, which adds stop detection) holding one
 * machine's signal samples and rollups, one per
 * machine (`<companyId>:<machineId>`), a sibling of its `RealtimeMachine` so that a long query
 * or a large ingestion never waits in line with a scanner's write. One SQLite row per signal
 * and UTC hour (`blocks.ts`); its alarm archives hours past the hot window (`archive.ts`) and
 * removes what is past the retention (docs/signal-storage.md).
 */

import type { ObjectMigration } from "../../db/object-migrations";
import { companyDb } from "../../db/shards";
import { namedStub } from "../../durable/named-stub";
import type { Env } from "../../env";
import { yieldToOtherRequests } from "../../http/budget";
import { logError } from "../../observability/log";
import { DAY_MS } from "../../time/units";
import { type ArchiveStatus, archivableBefore, archiveStatus } from "./archive-reader";
import { type EncodedBlock, encodeBlock, SignalBlockStore, type StoredBlock } from "./block-store";
import { type DecodedSamples, decodeSamples, MAX_SAMPLES_PER_BLOCK, mergeSamples } from "./blocks";
import { groupByHour, type HourSamples, piecesOf } from "./ingest-hours";
import { companySignalSettings } from "./queries";
import { PRUNE_BATCH_BLOCKS, pruneBlocks } from "./retention";

/** How often the alarm archives and prunes raw samples, ms. */
const PRUNE_EVERY_MS = 3_600_000;
/** How soon the alarm runs again while archiving or pruning has work left, ms. */
const NEXT_STEP_MS = 1_000;
/** How soon the alarm runs after an ingestion stored hours already past the hot window, ms. */
const ARCHIVE_SOON_MS = 10_000;
/** How soon the alarm tries again after an archive step failed, ms. */
const ARCHIVE_RETRY_MS = 5 * 60_000;

/** The outcome of one ingestion call. */
interface IngestResult {
  /** Samples stored (after de-duplication by instant). */
  accepted: number;
  /** Set when the call was refused as a whole (nothing stored): why. */
  refused?: string;
}

/**
 * Who sends an ingestion, for the machine-state detection that runs on the samples
 * (src/machine-state/, docs/machine-state.md): the machine, and whether the signal is its
 * count signal (the one live production sums).
 */
export interface IngestContext {
  companyId: number;
  machineId: number;
  countSignal: boolean;
  /** The company's hot window, ms: older hours go to the archive (archive.ts). */
  hotWindowMs?: number;
}

/** An ingestion's blocks merged and encoded, not yet written. */
interface EncodedHours {
  writes: (WrittenBlock & { block: EncodedBlock })[];
  accepted: number;
}

/** A block an ingestion wrote: its hour and its samples after the merge. */
export interface WrittenBlock {
  hour: number;
  merged: DecodedSamples;
}

export class SignalSampleStore extends SignalBlockStore {
  /** Whether an alarm is known to be set (saves a storage read per ingestion). */
  private alarmSet = false;
  /**
   * When the storage's own alarm step (`storageAlarm`) is next wanted, ms (undefined: not
   * known in this lifetime, or no retention or hot window known), so that a subclass that
   * set an earlier alarm of its own (the stop detector's) can give the alarm back to it.
   */
  private storageDueAt: number | undefined = undefined;

  /** When the storage's alarm step is next wanted, ms (null: not known, or none wanted). */
  protected storageNextAt(): number | null {
    return this.storageDueAt ?? null;
  }

  /**
   * @param migrations the deployed class's schema steps, which hold this store's tables
   *   (`SIGNAL_TABLES`, ./signal-migrations.ts) and its subclass's.
   */
  constructor(ctx: DurableObjectState, env: Env, migrations: readonly ObjectMigration[]) {
    super(ctx, env, migrations);
    // Samples from the future an ingestion accepted before they were refused go as the
    // object wakes; the machine-state store then repairs its detector (signal-store.ts).
    this.futureDropped = this.dropFutureSamples(Date.now()).length > 0;
  }

  /** True when this object dropped samples from the future as it woke (`dropFutureSamples`). */
  protected readonly futureDropped: boolean;

  /**
   * Stores samples of one signal, rewriting only the blocks (hours) they touch, atomically
   * (one synchronous run of the object: its writes commit together).
   *
   * A sample at an instant that already has one replaces it; within one call the last
   * sample at an instant wins. Samples in an hour whose raw samples retention already
   * removed are not stored (its rollups cannot tell which sample they would replace). A
   * sample in an archived hour is stored: the hour's samples come back from R2 first, and
   * the next archive step rewrites its object (docs/signal-storage.md, "Late samples").
   *
   * @param signalId the signal's internal id (D1 `signals.id`).
   * @param ts instants, integer ms since the epoch, any order; `values[i]` at `ts[i]`, finite.
   * @param retentionMs the company's raw-sample retention, ms, or null to keep them all.
   * @param context the machine (also the archive's path), the signal's role (for
   *   `blocksWritten`) and the company's hot window, ms; absent = the store's last known ones.
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
    const byHour = groupByHour(ts, values);
    if (context?.hotWindowMs !== undefined) {
      this.archive.setSettings(context, context.hotWindowMs);
    }
    const hours = [...byHour.keys()];
    // One writer of the blocks at a time (./block-store.ts `inTurn`): a backfill in pieces
    // is neither overtaken by another ingestion nor by an archive write of its hours.
    const result = await this.inTurn(async () => {
      // A backfill is checked for archived hours, merged and encoded a piece at a time,
      // giving way to the isolate's other work between pieces (docs/bounded-work.md,
      // "Background work gives way"); a live minute or a gateway's batch is one piece.
      // Written in one synchronous step.
      const merged: EncodedHours = { writes: [], accepted: 0 };
      for (const [i, piece] of piecesOf(byHour, hours).entries()) {
        if (i > 0) await yieldToOtherRequests();
        await this.restoreArchived(signalId, piece);
        const encoded = this.mergeHours(signalId, byHour, piece);
        if ("refused" in encoded) return encoded;
        merged.writes.push(...encoded.writes);
        merged.accepted += encoded.accepted;
      }
      return this.commit(signalId, merged, context);
    });
    if ("refused" in result) return { accepted: 0, refused: result.refused };
    this.ctx.storage.sql.exec("UPDATE settings SET retention_ms = ? WHERE id = 1", retentionMs);
    await this.armAlarm(retentionMs, result.writes);
    return { accepted: result.accepted };
  }

  /**
   * Writes the merged blocks of an ingestion and tells `blocksWritten`, in one synchronous
   * step (the writes and what the detector stores of them commit together).
   */
  private commit(
    signalId: number,
    merged: EncodedHours,
    context: IngestContext | undefined,
  ): { writes: WrittenBlock[]; accepted: number } {
    for (const { block } of merged.writes) this.storeBlock(signalId, block);
    const writes = merged.writes.map(({ hour, merged }) => ({ hour, merged }));
    if (writes.length > 0) this.blocksWritten(signalId, writes, context);
    return { writes, accepted: merged.accepted };
  }

  /** A stored block's samples (null when archived) and its archive, or undefined. */
  private readBlock(signalId: number, hour: number): StoredBlock | undefined {
    return this.ctx.storage.sql
      .exec<StoredBlock>(
        "SELECT n, samples, archive_id FROM blocks WHERE signal_id = ? AND hour = ?",
        signalId,
        hour,
      )
      .toArray()[0];
  }

  /**
   * Brings back from R2 the samples of the hours among `hours` that are only archived, with
   * no other call of the object in between (the ingestion's writes then run in one
   * synchronous turn, as always).
   */
  private async restoreArchived(signalId: number, hours: readonly number[]): Promise<void> {
    const archived = hours.flatMap((hour) => {
      const stored = this.readBlock(signalId, hour);
      return stored && stored.samples === null && stored.archive_id !== null
        ? [{ hour, archiveId: stored.archive_id }]
        : [];
    });
    if (archived.length > 0) {
      await this.ctx.blockConcurrencyWhile(() => this.archive.restore(signalId, archived));
    }
  }

  /**
   * The hours `hours` of `byHour` merged into their stored blocks and encoded (hours whose
   * raw samples retention removed are skipped), or a refusal when a block would exceed
   * `MAX_SAMPLES_PER_BLOCK`.
   */
  private mergeHours(
    signalId: number,
    byHour: ReadonlyMap<number, HourSamples>,
    hours: readonly number[],
  ): EncodedHours | { refused: string } {
    const writes: EncodedHours["writes"] = [];
    let accepted = 0;
    for (const hour of hours) {
      const group = byHour.get(hour);
      if (!group) continue;
      const stored = this.readBlock(signalId, hour);
      if (stored !== undefined && stored.samples === null) continue;
      const merged = mergeSamples(
        stored?.samples ? decodeSamples(hour, stored.n, stored.samples) : undefined,
        group.ts,
        group.values,
      );
      if (merged.ts.length > MAX_SAMPLES_PER_BLOCK) {
        return {
          refused: `More than ${MAX_SAMPLES_PER_BLOCK} samples in the hour from ${new Date(hour).toISOString()}`,
        };
      }
      writes.push({ hour, merged, block: encodeBlock(hour, merged) });
      accepted += group.ts.length;
    }
    return { writes, accepted };
  }

  /**
   * Sets the alarm that prunes and archives, once per lifetime of the object while a
   * retention or hot window is known, and sooner when an ingestion wrote hours already past
   * the hot window (a backfill, a late sample).
   */
  private async armAlarm(retentionMs: number | null, writes: readonly WrittenBlock[]) {
    const hotWindowMs = this.archive.settings()?.hotWindowMs;
    if (retentionMs === null && hotWindowMs === undefined) return;
    const past =
      hotWindowMs !== undefined &&
      writes.some(({ hour }) => hour < archivableBefore(Date.now(), hotWindowMs));
    if (!this.alarmSet || past) {
      const alarm = await this.ctx.storage.getAlarm();
      const wanted = Date.now() + (past ? ARCHIVE_SOON_MS : PRUNE_EVERY_MS);
      this.storageDueAt = Math.min(this.storageDueAt ?? wanted, wanted);
      if (alarm === null || (past && alarm > wanted)) await this.ctx.storage.setAlarm(wanted);
    }
    this.alarmSet = true;
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

  /** The archive's objects and how many hours are hot, archived or due (diagnostics). */
  archiveStatus(): ArchiveStatus {
    return archiveStatus(this.ctx.storage.sql, this.archive.settings()?.hotWindowMs);
  }

  /** Size of the object's SQLite database, bytes (for the benchmark and capacity figures). */
  databaseSize(): number {
    return this.ctx.storage.sql.databaseSize;
  }

  /**
   * Removes raw samples of the hours that ended before `now - retention` (retention.ts).
   *
   * @returns the number of blocks pruned (at most `PRUNE_BATCH_BLOCKS`).
   */
  prune(now: number): number {
    return pruneBlocks(this.ctx.storage.sql, now);
  }

  override async alarm(): Promise<void> {
    await this.storageAlarm();
  }

  /** True while the alarm runs the next steps of work it left (a second apart). */
  private continuing = false;

  /**
   * Reads the company's retention and hot window from its shard (one statement) and keeps
   * them as an ingestion would, so that a new setting applies to a machine that uploads
   * nothing at its next alarm, hourly at the latest (docs/signal-storage.md, "Capacity and
   * retention"). Not in the steps a second apart that finish the work an alarm left. A failed
   * read keeps the settings the store has (logged; read again at the next alarm).
   */
  private async readCompanySettings(): Promise<void> {
    const place = this.archive.settings()?.place;
    if (!place || this.continuing) return;
    try {
      const row = await companySignalSettings(
        await companyDb(this.env, place.companyId),
        place.companyId,
      );
      if (!row) return;
      this.ctx.storage.sql.exec(
        "UPDATE settings SET retention_ms = ? WHERE id = 1",
        row.retentionDays === null ? null : row.retentionDays * DAY_MS,
      );
      this.archive.setSettings(place, row.hotWindowDays * DAY_MS);
    } catch (error) {
      logError("signal_settings_read_failed", error, { companyId: place.companyId });
    }
  }

  /**
   * The storage's part of the alarm: prunes raw samples past the retention and removes the
   * archive objects wholly past it, then archives one bounded step of the hours past the hot
   * window; sets the next alarm (a second later while work is left, else in an hour) while
   * either setting is known.
   */
  protected async storageAlarm(): Promise<void> {
    await this.readCompanySettings();
    const now = Date.now();
    const pruned = this.prune(now);
    const setting = this.ctx.storage.sql
      .exec<{ retention_ms: number | null }>("SELECT retention_ms FROM settings WHERE id = 1")
      .one();
    let next = PRUNE_EVERY_MS;
    try {
      const retiring =
        setting.retention_ms !== null && (await this.archive.retire(now - setting.retention_ms));
      if ((await this.archive.step(now)) || retiring || pruned === PRUNE_BATCH_BLOCKS) {
        next = NEXT_STEP_MS;
      }
    } catch (error) {
      // R2 refused or an object read back wrong: nothing was dropped (archive.ts); try again
      // later rather than let the runtime's few alarm retries run out.
      logError("signal_archive_step_failed", error, { retryInMs: ARCHIVE_RETRY_MS });
      next = ARCHIVE_RETRY_MS;
    }
    this.continuing = next === NEXT_STEP_MS;
    if (setting.retention_ms === null && this.archive.settings() === null) {
      this.alarmSet = false;
      this.storageDueAt = undefined;
      return;
    }
    this.storageDueAt = Date.now() + next;
    await this.ctx.storage.setAlarm(this.storageDueAt);
  }
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
): DurableObjectStub<SignalSampleStore> {
  return namedStub(env.SIGNAL_STORE, `${companyId}:${machineId}`);
}
