/**
 * The detected downtime each recorded stop takes in (one breakdown, one stop:
 * docs/machine-state.md), wanted and as D1 holds it, in the machine's `SignalStore` SQLite
 * (`recorded_merges`). ./tables.ts extends this with the rest of the detector's tables.
 */
import { DetectorHourTables } from "./hour-tables";

type Row = Record<string, SqlStorageValue>;

/** Detected downtime a recorded stop takes in: `end` null while it goes on. */
export interface MergeSpan {
  start: number;
  end: number | null;
}

/** Whether two spans are the same (both null, or equal ends). */
function sameMerge(a: MergeSpan | null, b: MergeSpan | null): boolean {
  return a === null || b === null ? a === b : a.start === b.start && a.end === b.end;
}

/** A `recorded_merges` row as the detector reads it. */
function toMerge(r: Row): { id: number; wanted: MergeSpan | null; synced: MergeSpan | null } {
  return {
    id: r.id as number,
    wanted:
      r.want_start === null
        ? null
        : { start: r.want_start as number, end: (r.want_end as number | null) ?? null },
    synced: r.synced === null ? null : (JSON.parse(r.synced as string) as MergeSpan),
  };
}

/** The detector's hour tables and the recorded stops' taken-in downtime, over the object's SQLite. */
export class DetectorMergeTables extends DetectorHourTables {
  /** Ids of the recorded stops whose wanted detected downtime starts in `[from, to)`. */
  mergesStarting(from: number, to: number): number[] {
    return this.sql
      .exec<Row>(
        "SELECT id FROM recorded_merges WHERE want_start >= ? AND want_start < ?",
        from,
        to,
      )
      .toArray()
      .map((r) => r.id as number);
  }

  /**
   * Sets the detected downtime a recorded stop should take in (null: none); marks it to
   * write when D1 holds otherwise.
   */
  wantMerge(id: number, taken: MergeSpan | null): void {
    const known = this.merge(id);
    const synced = known ? known.synced : null;
    if (!known && taken === null) return;
    this.sql.exec(
      `INSERT INTO recorded_merges (id, want_start, want_end, synced, dirty) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET want_start = excluded.want_start,
         want_end = excluded.want_end, dirty = excluded.dirty`,
      id,
      taken?.start ?? null,
      taken?.end ?? null,
      synced === null ? null : JSON.stringify(synced),
      sameMerge(taken, synced) ? 0 : 1,
    );
    if (taken === null && synced === null) this.forgetMerge(id);
  }

  /** Records what D1 holds of a recorded stop's taken-in downtime (after a write or a read). */
  mergeSynced(id: number, written: MergeSpan | null): void {
    const known = this.merge(id);
    if (!known) {
      if (written !== null) {
        this.sql.exec(
          "INSERT INTO recorded_merges (id, want_start, want_end, synced, dirty) VALUES (?, ?, ?, ?, 0)",
          id,
          written.start,
          written.end,
          JSON.stringify(written),
        );
      }
      return;
    }
    if (known.wanted === null && written === null) {
      this.forgetMerge(id);
      return;
    }
    this.sql.exec(
      "UPDATE recorded_merges SET synced = ?, dirty = ? WHERE id = ?",
      written === null ? null : JSON.stringify(written),
      sameMerge(known.wanted, written) ? 0 : 1,
      id,
    );
  }

  forgetMerge(id: number): void {
    this.sql.exec("DELETE FROM recorded_merges WHERE id = ?", id);
  }

  /** A recorded stop's taken-in downtime, wanted and as D1 holds it (null: neither). */
  merge(id: number): { id: number; wanted: MergeSpan | null; synced: MergeSpan | null } | null {
    const row = this.sql.exec<Row>("SELECT * FROM recorded_merges WHERE id = ?", id).toArray()[0];
    return row ? toMerge(row) : null;
  }

  /** Up to `limit` recorded stops whose taken-in downtime D1 does not hold yet. */
  dirtyMerges(limit: number): { id: number; wanted: MergeSpan | null; synced: MergeSpan | null }[] {
    return this.sql
      .exec<Row>("SELECT * FROM recorded_merges WHERE dirty = 1 ORDER BY id LIMIT ?", limit)
      .toArray()
      .map(toMerge);
  }
}
