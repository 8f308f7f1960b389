/**
 * The retention of a store's raw samples: the alarm removes the samples of hours older than
 * the company's retention, their rollups staying (docs/signal-storage.md, "Capacity and
 * retention").
 */
import { BLOCK_MS, decodeSamples, minuteRollups } from "./blocks";

/** Most blocks one alarm prunes; more are left to an alarm a second later. */
export const PRUNE_BATCH_BLOCKS = 2_000;

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
 * Removes raw samples of the hours that ended before `now - retention` (the store's
 * setting), keeping each block's hour and minute rollups (computed from the samples if the
 * block had none), and forgets the archive objects that held them (`SignalArchive.retire`
 * then rewrites or removes those objects).
 *
 * @returns the number of blocks pruned (at most `PRUNE_BATCH_BLOCKS`).
 */
export function pruneBlocks(sql: SqlStorage, now: number): number {
  const setting = sql
    .exec<{ retention_ms: number | null }>("SELECT retention_ms FROM settings WHERE id = 1")
    .one();
  if (setting.retention_ms === null) return 0;
  const horizon = now - setting.retention_ms;
  const due = sql
    .exec<DueBlock>(
      `SELECT signal_id, hour, n, minutes IS NOT NULL AS has_minutes,
         CASE WHEN minutes IS NULL THEN samples END AS samples
       FROM blocks WHERE (samples IS NOT NULL OR archive_id IS NOT NULL)
         AND hour + ${BLOCK_MS} <= ? LIMIT ?`,
      horizon,
      PRUNE_BATCH_BLOCKS,
    )
    .toArray();
  for (const block of due) {
    if (block.has_minutes || block.samples === null) {
      sql.exec(
        "UPDATE blocks SET samples = NULL, archive_id = NULL WHERE signal_id = ? AND hour = ?",
        block.signal_id,
        block.hour,
      );
      continue;
    }
    const { ts, values } = decodeSamples(block.hour, block.n, block.samples);
    sql.exec(
      "UPDATE blocks SET minutes = ?, samples = NULL, archive_id = NULL WHERE signal_id = ? AND hour = ?",
      minuteRollups(block.hour, ts, values).buffer,
      block.signal_id,
      block.hour,
    );
  }
  return due.length;
}
