/**
 * The detector's tables in its machine's `SignalStore` SQLite (docs/machine-state.md, "Where
 * the state lives"): the hour summaries of each rule, the stretches waiting to be evaluated,
 * the machine's settings and cached plan, the plant's recorded stops (with the detected
 * downtime each takes in, wanted and as D1 holds it), and the stops the detector made with
 * what D1 holds of each. Every access is synchronous, so that a change
 * commits with the samples that caused it.
 */
import type { HourSummary } from "./hour-fold";
import type { PlanCache } from "./planned-time";
import { DEFAULT_SETTINGS, type DetectionSettings } from "./rules";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS detect_hours (
  rule INTEGER NOT NULL,
  hour INTEGER NOT NULL,
  summary TEXT NOT NULL,
  variant INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (rule, hour)
);
CREATE TABLE IF NOT EXISTS detect_pending (
  id INTEGER PRIMARY KEY,
  start INTEGER NOT NULL,
  end INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS detect_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  company_id INTEGER,
  machine_id INTEGER,
  count_signal INTEGER,
  settings TEXT,
  plan TEXT,
  recorded_at INTEGER,
  wake_at INTEGER
);
INSERT OR IGNORE INTO detect_state (id) VALUES (1);
CREATE TABLE IF NOT EXISTS recorded_stops (
  id INTEGER PRIMARY KEY,
  start INTEGER NOT NULL,
  end INTEGER,
  dismissed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS recorded_stops_start ON recorded_stops (start);
CREATE TABLE IF NOT EXISTS recorded_merges (
  id INTEGER PRIMARY KEY,
  want_start INTEGER,
  want_end INTEGER,
  synced TEXT,
  dirty INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS recorded_merges_want ON recorded_merges (want_start);
CREATE INDEX IF NOT EXISTS recorded_merges_dirty ON recorded_merges (dirty) WHERE dirty = 1;
CREATE TABLE IF NOT EXISTS detected_stops (
  key TEXT PRIMARY KEY,
  start INTEGER NOT NULL,
  end INTEGER,
  removed INTEGER NOT NULL DEFAULT 0,
  stop_id INTEGER,
  synced TEXT,
  dirty INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS detected_stops_start ON detected_stops (start);
CREATE INDEX IF NOT EXISTS detected_stops_dirty ON detected_stops (dirty) WHERE dirty = 1;
CREATE INDEX IF NOT EXISTS detected_stops_open ON detected_stops (start) WHERE end IS NULL AND removed = 0;
`;

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

/** What D1 holds of a detected stop (null: not written yet). */
export interface Synced {
  start: number;
  end: number | null;
  removed: boolean;
}

/** A detected stop as the store keeps it. */
export interface DetectedRow {
  key: string;
  start: number;
  end: number | null;
  removed: boolean;
  stopId: number | null;
  synced: Synced | null;
}

type Row = Record<string, SqlStorageValue>;

/** The detector's tables, over the object's SQLite. */
export class DetectorTables {
  /** Summary rows read since the object started (for the benchmark's "only the touched hours"). */
  summariesRead = 0;

  constructor(private readonly sql: SqlStorage) {
    sql.exec(SCHEMA);
  }

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
    this.summariesRead += rows.length;
    return rows.map((r) => ({
      summary: JSON.parse(r.summary as string) as HourSummary,
      variant: r.variant === 1 ? 1 : 0,
    }));
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

  /** The state row, kept in memory between its writes (every ingestion reads it). */
  private stateRow: Row | null = null;

  private state(): Row {
    this.stateRow ??= this.sql.exec<Row>("SELECT * FROM detect_state WHERE id = 1").one();
    return this.stateRow;
  }

  /**
   * Writes one column of the state row, unless it holds `value` already (every evaluation
   * sets the wake, most often to what it was), and keeps the row in memory up to date.
   */
  private setState(column: string, value: SqlStorageValue): void {
    const row = this.state();
    if (row[column] === value) return;
    this.sql.exec(`UPDATE detect_state SET ${column} = ? WHERE id = 1`, value);
    this.stateRow = { ...row, [column]: value };
    if (column === "settings") this.parsedSettings = null;
  }

  private parsedSettings: (DetectionSettings & { analogSignalId: number | null }) | null = null;

  /** The machine this store belongs to, once an ingestion or the operator told it. */
  machine(): { companyId: number; machineId: number } | null {
    const s = this.state();
    if (s.company_id === null || s.machine_id === null) return null;
    return { companyId: s.company_id as number, machineId: s.machine_id as number };
  }

  setMachine(companyId: number, machineId: number): void {
    const known = this.machine();
    if (known?.companyId === companyId && known.machineId === machineId) return;
    this.setState("company_id", companyId);
    this.setState("machine_id", machineId);
  }

  /** The signal id of the machine's count signal, as the ingestion route named it. */
  countSignal(): number | null {
    return (this.state().count_signal as number | null) ?? null;
  }

  setCountSignal(id: number): void {
    this.setState("count_signal", id);
  }

  /** The settings, defaults filled in. */
  settings(): DetectionSettings & { analogSignalId: number | null } {
    if (this.parsedSettings) return this.parsedSettings;
    const raw = this.state().settings as string | null;
    const stored = raw === null ? {} : (JSON.parse(raw) as Partial<DetectionSettings>);
    this.parsedSettings = { ...DEFAULT_SETTINGS, analogSignalId: null, ...stored };
    return this.parsedSettings;
  }

  setSettings(settings: DetectionSettings & { analogSignalId: number | null }): void {
    this.setState("settings", JSON.stringify(settings));
  }

  plan(): PlanCache | null {
    const raw = this.state().plan as string | null;
    return raw === null ? null : (JSON.parse(raw) as PlanCache);
  }

  setPlan(plan: PlanCache | null): void {
    this.setState("plan", plan && JSON.stringify(plan));
  }

  /** When the recorded stops were loaded from D1 (null: never). */
  recordedAt(): number | null {
    return (this.state().recorded_at as number | null) ?? null;
  }

  /**
   * Replaces every recorded stop with those read from D1 (the detected stops a person
   * deleted, known only here, stay).
   */
  loadRecorded(
    rows: readonly {
      id: number;
      start: number;
      end: number | null;
      /** The detected downtime D1 shows it took in (null: none). */
      taken: MergeSpan | null;
    }[],
    at: number,
  ): void {
    this.sql.exec("DELETE FROM recorded_stops WHERE dismissed = 0");
    for (const r of rows) {
      this.putRecorded(r.id, r.start, r.end);
      this.mergeSynced(r.id, r.taken);
    }
    this.sql.exec(
      "DELETE FROM recorded_merges WHERE id NOT IN (SELECT id FROM recorded_stops WHERE dismissed = 0)",
    );
    this.setState("recorded_at", at);
  }

  /**
   * Keeps a recorded stop (its time is no detected stop); `dismissed` for a detected stop a
   * person deleted (its time is no stop at all).
   */
  putRecorded(id: number, start: number, end: number | null, dismissed = false): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO recorded_stops (id, start, end, dismissed) VALUES (?, ?, ?, ?)",
      id,
      start,
      end,
      dismissed ? 1 : 0,
    );
  }

  removeRecorded(id: number): void {
    this.sql.exec("DELETE FROM recorded_stops WHERE id = ?", id);
  }

  /**
   * Stops overlapping or touching `[from, to]`: the recorded ones (by id), and the detected
   * ones a person deleted (`dismissed`).
   */
  recordedTouching(
    from: number,
    to: number,
  ): { id: number; start: number; end: number | null; dismissed: boolean }[] {
    return this.sql
      .exec<Row>(
        "SELECT id, start, end, dismissed FROM recorded_stops WHERE start <= ? AND (end IS NULL OR end >= ?) ORDER BY start, id",
        to,
        from,
      )
      .toArray()
      .map((r) => ({
        id: r.id as number,
        start: r.start as number,
        end: (r.end as number | null) ?? null,
        dismissed: r.dismissed === 1,
      }));
  }

  /** A recorded stop's own times (null: not known here, or a dismissed detected stop). */
  recorded(id: number): { start: number; end: number | null } | null {
    const row = this.sql
      .exec<Row>("SELECT start, end FROM recorded_stops WHERE id = ? AND dismissed = 0", id)
      .toArray()[0];
    return row ? { start: row.start as number, end: (row.end as number | null) ?? null } : null;
  }

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

  /** True when a detected stop or a recorded stop's taken-in downtime waits to be written. */
  hasWrites(): boolean {
    return (
      this.hasDirty() ||
      this.sql.exec("SELECT 1 FROM recorded_merges WHERE dirty = 1 LIMIT 1").toArray().length > 0
    );
  }

  /** When the next evaluation by the clock is due (null: none). */
  wakeAt(): number | null {
    return (this.state().wake_at as number | null) ?? null;
  }

  setWakeAt(at: number | null): void {
    this.setState("wake_at", at);
  }

  /** The detected stops (not removed) that start in `[from, to)`. */
  detectedStarting(from: number, to: number): DetectedRow[] {
    return this.sql
      .exec<Row>(
        "SELECT * FROM detected_stops WHERE removed = 0 AND start >= ? AND start < ? ORDER BY start",
        from,
        to,
      )
      .toArray()
      .map(toDetected);
  }

  /** The detected stop going on (not removed, no end), if any. */
  openDetected(): DetectedRow | null {
    const row = this.sql
      .exec<Row>("SELECT * FROM detected_stops WHERE removed = 0 AND end IS NULL LIMIT 1")
      .toArray()[0];
    return row ? toDetected(row) : null;
  }

  /** A detected stop by its key. */
  detected(key: string): DetectedRow | null {
    const row = this.sql.exec<Row>("SELECT * FROM detected_stops WHERE key = ?", key).toArray()[0];
    return row ? toDetected(row) : null;
  }

  /** A detected stop by its D1 id. */
  detectedByStopId(stopId: number): DetectedRow | null {
    const row = this.sql
      .exec<Row>("SELECT * FROM detected_stops WHERE stop_id = ?", stopId)
      .toArray()[0];
    return row ? toDetected(row) : null;
  }

  /** Sets a detected stop's wanted times (a new key inserts it); marks it to write when changed. */
  wantDetected(key: string, start: number, end: number | null): void {
    const { rowsWritten } = this.sql.exec(
      `INSERT INTO detected_stops (key, start, end, removed, dirty) VALUES (?, ?, ?, 0, 1)
       ON CONFLICT (key) DO UPDATE SET start = excluded.start, end = excluded.end, removed = 0, dirty = 1
       WHERE detected_stops.start IS NOT excluded.start OR detected_stops.end IS NOT excluded.end
         OR detected_stops.removed = 1`,
      key,
      start,
      end,
    );
    if (rowsWritten > 0) this.anyDirty = true;
  }

  /**
   * Whether a detected stop waits to be written to D1, as last known (undefined: ask the
   * table): set by the writes that mark one, forgotten by those that may clear one.
   */
  private anyDirty: boolean | undefined = undefined;

  /** True when a detected stop waits to be written to D1 (one index seek, then from memory). */
  hasDirty(): boolean {
    this.anyDirty ??=
      this.sql.exec("SELECT 1 FROM detected_stops WHERE dirty = 1 LIMIT 1").toArray().length > 0;
    return this.anyDirty;
  }

  /** Marks a detected stop gone (written to D1 as deleted, when D1 has it). */
  removeDetected(key: string): void {
    const { rowsWritten } = this.sql.exec(
      "UPDATE detected_stops SET removed = 1, dirty = 1 WHERE key = ? AND removed = 0",
      key,
    );
    if (rowsWritten > 0) this.anyDirty = true;
  }

  /** Forgets a detected stop (a person took it over, or it never reached D1 and is gone). */
  forgetDetected(key: string): void {
    this.sql.exec("DELETE FROM detected_stops WHERE key = ?", key);
    this.anyDirty = undefined;
  }

  /** Up to `limit` detected stops whose wanted state D1 does not hold yet. */
  dirty(limit: number): DetectedRow[] {
    return this.sql
      .exec<Row>("SELECT * FROM detected_stops WHERE dirty = 1 ORDER BY start LIMIT ?", limit)
      .toArray()
      .map(toDetected);
  }

  /**
   * Records what D1 now holds of a stop; it stays dirty when its wanted state changed since
   * `written` was read. A removed stop D1 holds as removed is forgotten.
   */
  markSynced(key: string, stopId: number | null, written: Synced): void {
    const row = this.detected(key);
    if (!row) return;
    const same =
      row.start === written.start && row.end === written.end && row.removed === written.removed;
    if (same && written.removed) {
      this.forgetDetected(key);
      return;
    }
    this.sql.exec(
      "UPDATE detected_stops SET stop_id = ?, synced = ?, dirty = ? WHERE key = ?",
      stopId,
      JSON.stringify(written),
      same ? 0 : 1,
      key,
    );
    this.anyDirty = same ? undefined : true;
  }
}

/** Detected downtime a recorded stop takes in: `end` null while it goes on. */
export interface MergeSpan {
  start: number;
  end: number | null;
}

function sameMerge(a: MergeSpan | null, b: MergeSpan | null): boolean {
  return a === null || b === null ? a === b : a.start === b.start && a.end === b.end;
}

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

function toDetected(r: Row): DetectedRow {
  return {
    key: r.key as string,
    start: r.start as number,
    end: (r.end as number | null) ?? null,
    removed: r.removed === 1,
    stopId: (r.stop_id as number | null) ?? null,
    synced: r.synced === null ? null : (JSON.parse(r.synced as string) as Synced),
  };
}
