/**
 * The detector's tables in its machine's `SignalStore` SQLite (docs/machine-state.md, "Where
 * the state lives"): the hour summaries of each rule, the stretches waiting to be evaluated,
 * the machine's settings and cached plan, the plant's recorded stops (with the detected
 * downtime each takes in, wanted and as D1 holds it), and the stops the detector made with
 * what D1 holds of each. Every access is synchronous, so that a change
 * commits with the samples that caused it.
 */
import type { RuleId } from "./hour-tables";
import { DetectorMergeTables, type MergeSpan } from "./merge-tables";
import type { PlanCache } from "./planned-time";
import { DEFAULT_SETTINGS, type DetectionSettings } from "./rules";

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

/**
 * The detector's tables, over the object's SQLite: the hour summaries and the stretches
 * waiting (./hour-tables.ts), and here the state, the recorded stops with the downtime they
 * take in, and the detected stops.
 */
export class DetectorTables extends DetectorMergeTables {
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

  /**
   * What a rule's hour summaries of the last `REEVALUATE_MS` (./rules.ts) were made with
   * (`summaryBasis` in ./detector-summaries.ts; null: not known, as in a store from before
   * this was kept, or mixed, after the count signal changed).
   */
  summarized(rule: RuleId): string | null {
    const raw = this.state().summarized as string | null;
    return raw === null ? null : ((JSON.parse(raw) as Record<string, string | null>)[rule] ?? null);
  }

  /** Records what a rule's recent summaries were made with (null: not known). */
  setSummarized(rule: RuleId, basis: string | null): void {
    if (this.summarized(rule) === basis) return;
    const raw = this.state().summarized as string | null;
    const all = raw === null ? {} : (JSON.parse(raw) as Record<string, string | null>);
    this.setState("summarized", JSON.stringify({ ...all, [rule]: basis }));
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
