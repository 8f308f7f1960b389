/**
 * The detector's hour tables in its machine's `SignalStore` SQLite (docs/machine-state.md,
 * "Where the state lives"): the hour summaries of each rule and the stretches waiting to be
 * evaluated. The rest of its tables is ./tables.ts, which extends this. Every access is
 * synchronous, so that a change commits with the samples that caused it.
 */
import type { HourSummary } from "./hour-fold";

/** The count rule's summaries (`detect_hours.rule`). */
export const COUNT_RULE = 0;
/** The analog rule's summaries. */
export const ANALOG_RULE = 1;
export type RuleId = typeof COUNT_RULE | typeof ANALOG_RULE;

/** An hour summary as stored, with the variant the last composition used. */
export interface HourRow {
  summary: HourSummary;
  variant: 0 | 1;
}

type Row = Record<string, SqlStorageValue>;

/** The detector's hour summaries and waiting stretches, over the object's SQLite. */
export class DetectorHourTables {
  /** @param sql the object's SQLite, migrated (./signal-store-migrations.ts). */
  constructor(protected readonly sql: SqlStorage) {}

  /** Stores one hour's summary (its variant is set by the next composition). */
  putHour(rule: RuleId, summary: HourSummary): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO detect_hours (rule, hour, summary, variant) VALUES (?, ?, ?, 0)",
      rule,
      summary.hour,
      JSON.stringify(summary),
    );
  }

  /** Removes the summaries of a rule in `[from, to)` (hours rebuilt from the samples). */
  clearHours(rule: RuleId, from: number, to: number): void {
    this.sql.exec(
      "DELETE FROM detect_hours WHERE rule = ? AND hour >= ? AND hour < ?",
      rule,
      from,
      to,
    );
  }

  /** Records which variant the composition used for an hour. */
  setVariant(rule: RuleId, hour: number, variant: 0 | 1): void {
    this.sql.exec(
      "UPDATE detect_hours SET variant = ? WHERE rule = ? AND hour = ?",
      variant,
      rule,
      hour,
    );
  }

  /**
   * Up to `limit` summaries of a rule from `hour` on: descending from it (`hour` included)
   * when `down`, else ascending after it.
   */
  hours(rule: RuleId, hour: number, down: boolean, limit: number): HourRow[] {
    const rows = this.sql
      .exec<Row>(
        down
          ? "SELECT summary, variant FROM detect_hours WHERE rule = ? AND hour <= ? ORDER BY hour DESC LIMIT ?"
          : "SELECT summary, variant FROM detect_hours WHERE rule = ? AND hour > ? ORDER BY hour ASC LIMIT ?",
        rule,
        hour,
        limit,
      )
      .toArray();
    return rows.map((r) => ({
      summary: JSON.parse(r.summary as string) as HourSummary,
      variant: r.variant === 1 ? 1 : 0,
    }));
  }

  /** True when a rule has a summary of any hour (one index seek). */
  hasHours(rule: RuleId): boolean {
    return (
      this.sql.exec("SELECT 1 FROM detect_hours WHERE rule = ? LIMIT 1", rule).toArray().length > 0
    );
  }

  /** The first hour any rule has a summary of (null: none). */
  firstHour(): number | null {
    const row = this.sql.exec<Row>("SELECT min(hour) AS h FROM detect_hours").one();
    return (row.h as number | null) ?? null;
  }

  /**
   * The instant of the last sample any rule summarized (null: none): the last summary of each
   * rule, one index seek each.
   */
  lastSampleAt(): number | null {
    let last: number | null = null;
    for (const rule of [COUNT_RULE, ANALOG_RULE]) {
      const row = this.sql
        .exec<Row>(
          "SELECT summary FROM detect_hours WHERE rule = ? ORDER BY hour DESC LIMIT 1",
          rule,
        )
        .toArray()[0];
      if (!row) continue;
      const t = (JSON.parse(row.summary as string) as HourSummary).up.lastT;
      last = last === null ? t : Math.max(last, t);
    }
    return last;
  }

  /** The latest start of a detected stop not removed (null: none). */
  lastDetectedStart(): number | null {
    const row = this.sql
      .exec<Row>("SELECT max(start) AS s FROM detected_stops WHERE removed = 0")
      .one();
    return (row.s as number | null) ?? null;
  }

  /**
   * Cuts the stretches waiting to `[.., end)`: those that begin at or after `end` go.
   *
   * @returns true when a stretch was cut or removed.
   */
  cutPending(end: number): boolean {
    const row = this.sql
      .exec<Row>("SELECT count(*) AS n FROM detect_pending WHERE end > ?", end)
      .one();
    if (row.n === 0) return false;
    this.sql.exec("DELETE FROM detect_pending WHERE start >= ?", end);
    this.sql.exec("UPDATE detect_pending SET end = ? WHERE end > ?", end, end);
    this.pendingSpan = undefined;
    return true;
  }

  /**
   * The stretches waiting, joined, as the table holds them (undefined: not read since the
   * object started or since a cut). Only these methods write the table, so the copy stays
   * true; the table is what a restart resumes from.
   */
  private pendingSpan: { start: number; end: number } | null | undefined = undefined;

  /** Adds a stretch `[start, end)` to evaluate. */
  addPending(start: number, end: number): void {
    this.sql.exec("INSERT INTO detect_pending (start, end) VALUES (?, ?)", start, end);
    if (this.pendingSpan === undefined) return;
    this.pendingSpan =
      this.pendingSpan === null
        ? { start, end }
        : {
            start: Math.min(this.pendingSpan.start, start),
            end: Math.max(this.pendingSpan.end, end),
          };
  }

  /**
   * The stretches waiting, joined into one `[start, end)` (null when none): read once, then
   * kept beside the table (every evaluation and every round of `process` asks).
   */
  peekPending(): { start: number; end: number } | null {
    if (this.pendingSpan !== undefined) return this.pendingSpan && { ...this.pendingSpan };
    const row = this.sql
      .exec<Row>("SELECT min(start) AS s, max(end) AS e FROM detect_pending")
      .one();
    this.pendingSpan =
      row.s === null || row.e === null ? null : { start: row.s as number, end: row.e as number };
    return this.pendingSpan && { ...this.pendingSpan };
  }

  /** Clears the stretches waiting (evaluated). */
  clearPending(): void {
    this.sql.exec("DELETE FROM detect_pending");
    this.pendingSpan = null;
  }

  /** True when stretches wait. */
  hasPending(): boolean {
    return this.peekPending() !== null;
  }
}
