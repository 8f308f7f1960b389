/**
 * The realtime object's tables (`meta`, `segments`, `log_operators`, `assignments`, `sync`) in its SQLite
 * storage, and the copy of them it keeps in memory: loaded from storage on first use and
 * changed together with it, so that a write or a flush reads nothing back from SQLite. An
 * operation that throws drops the copy (`forgetCopy`), and the next one reloads it.
 */
import type { RealtimeInstance } from "./machine-types";
import type { Assignment, Segment, SegmentSku } from "./timeline";

export interface MetaRow extends Record<string, SqlStorageValue> {
  company_id: number;
  machine_id: number;
  instance_id: number | null;
  instance_name: string | null;
  instance_start: number | null;
  instance_end: number | null;
  instance_considered: number | null;
  revision: number;
}

interface SegmentRow extends Record<string, SqlStorageValue> {
  log_id: string;
  start: number;
  end: number | null;
  sku: string;
  nominal_speed: number;
  counting_factor: number;
  simple_work_order: string | null;
  quantity: number | null;
  custom: string | null;
  has_log: number;
  projected: string | null;
  /** 1 when a PATCH of the segment's log named its operator (`log_operators`). */
  overridden: number;
  override_operator: number | null;
}

/**
 * Write-behind state: `dirty` = the timeline changed since the last flush;
 * `marked` = D1 has this machine's `realtime_pending` row; `refresh_at` = next
 * forced refresh of the live counts; `alarm_at` = the alarm as last set (ms).
 */
interface SyncRow extends Record<string, SqlStorageValue> {
  dirty: number;
  marked: number;
  refresh_at: number | null;
  alarm_at: number | null;
}

interface AssignmentRow extends Record<string, SqlStorageValue> {
  operator_id: number;
  first_name: string | null;
  last_name: string | null;
  start: number;
}

export interface StoredSegment extends Segment {
  hasLog: boolean;
  projected: string | null;
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

/** One realtime object's tables, in storage and in memory (one operation at a time). */
export class MachineStore {
  /** The `sync` row in memory (see `syncState`). */
  private syncRow: SyncRow | null = null;
  /**
   * Writes held since the last flush, counted in memory only: after an eviction it
   * restarts at 0, and the alarm flushes what the storage marks dirty anyway.
   */
  heldWrites = 0;
  /** The `meta` row in memory (`undefined`: not loaded; null: no row yet). */
  private metaRow: MetaRow | null | undefined = undefined;
  /** The `segments` table in memory, ascending `start` (null: not loaded). */
  private timeline: StoredSegment[] | null = null;
  /** The `assignments` table in memory, by `start` then operator id (null: not loaded). */
  private crew: Assignment[] | null = null;

  /** @param sql the object's SQLite, migrated (./realtime-migrations.ts). */
  constructor(private readonly sql: SqlStorage) {}

  /** Inserts the `meta` row of a new object (instance unset, revision 0). */
  createMeta(companyId: number, machineId: number): MetaRow | null {
    this.sql.exec(
      "INSERT INTO meta (id, company_id, machine_id, revision) VALUES (1, ?, ?, 0)",
      companyId,
      machineId,
    );
    this.metaRow = undefined;
    return this.meta();
  }

  /** Drops the in-memory copy of the tables (they are reloaded from storage on use). */
  forgetCopy(): void {
    this.metaRow = undefined;
    this.timeline = null;
    this.crew = null;
    this.syncRow = null;
  }

  /** The `sync` row, read once: only this object writes it, one operation at a time. */
  syncState(): SyncRow {
    this.syncRow ??= this.sql.exec<SyncRow>("SELECT * FROM sync WHERE id = 1").one();
    return this.syncRow;
  }

  /**
   * Writes the columns of `patch` that differ from `current` to the one row of a
   * single-row table (`meta`, `sync`); returns the row as it now is, for the copy in memory.
   */
  private patchRow<Row extends Record<string, SqlStorageValue>>(
    table: "meta" | "sync",
    current: Row,
    patch: Partial<Row>,
  ): Row {
    const changed = Object.entries(patch).filter(([column, value]) => current[column] !== value);
    if (changed.length === 0) return current;
    this.sql.exec(
      `UPDATE ${table} SET ${changed.map(([column]) => `${column} = ?`).join(", ")} WHERE id = 1`,
      ...changed.map(([, value]) => value ?? null),
    );
    return { ...current, ...patch };
  }

  /** Updates columns of the `sync` row, in storage and in memory; skips an unchanged value. */
  setSync(patch: Partial<Pick<SyncRow, "dirty" | "marked" | "refresh_at" | "alarm_at">>) {
    this.syncRow = this.patchRow<SyncRow>("sync", this.syncState(), patch);
  }

  /** The `meta` row (from memory once loaded); null before the object's first operation. */
  meta(): MetaRow | null {
    if (this.metaRow === undefined) {
      this.metaRow = this.sql.exec<MetaRow>("SELECT * FROM meta WHERE id = 1").toArray()[0] ?? null;
    }
    return this.metaRow;
  }

  /**
   * Updates columns of the `meta` row, in storage and in memory (the row must exist);
   * skips an unchanged value.
   */
  setMeta(
    patch: Partial<
      Pick<
        MetaRow,
        | "instance_id"
        | "instance_name"
        | "instance_start"
        | "instance_end"
        | "instance_considered"
        | "revision"
      >
    >,
  ): void {
    const current = this.meta();
    if (!current) throw new Error("RealtimeMachine: meta row missing");
    this.metaRow = this.patchRow<MetaRow>("meta", current, patch);
  }

  instanceOf(meta: MetaRow | null): RealtimeInstance | null {
    if (
      !meta ||
      meta.instance_id === null ||
      meta.instance_start === null ||
      meta.instance_end === null
    ) {
      return null;
    }
    return {
      id: meta.instance_id,
      name: meta.instance_name ?? "",
      start: meta.instance_start,
      end: meta.instance_end,
      isConsidered: meta.instance_considered === 1,
    };
  }

  /**
   * The segments in ascending `start`, from memory once loaded. The array and its items
   * are the object's copy: change them only together with storage (`putSegment`,
   * `markProjected`, `clearTimeline`).
   */
  segments(): readonly StoredSegment[] {
    this.timeline ??= this.sql
      .exec<SegmentRow>(
        `SELECT s.*, o.log_id IS NOT NULL AS overridden, o.operator_id AS override_operator
         FROM segments AS s LEFT JOIN log_operators AS o ON o.log_id = s.log_id ORDER BY s.start`,
      )
      .toArray()
      .map((r) => ({
        logId: r.log_id,
        start: r.start,
        end: r.end,
        sku: JSON.parse(r.sku) as SegmentSku,
        nominalSpeed: r.nominal_speed,
        countingFactor: r.counting_factor,
        simpleWorkOrder: parseJson<{ id: string; name: string }>(r.simple_work_order),
        quantity: r.quantity,
        customJson: r.custom,
        hasLog: r.has_log === 1,
        projected: r.projected,
        ...(r.overridden === 1 ? { operator: r.override_operator } : {}),
      }));
    return this.timeline;
  }

  /** The operator assignments by `start` then operator id, from memory once loaded. */
  assignments(): readonly Assignment[] {
    this.crew ??= this.sql
      .exec<AssignmentRow>("SELECT * FROM assignments ORDER BY start, operator_id")
      .toArray()
      .map((r) => ({
        operatorId: r.operator_id,
        firstName: r.first_name,
        lastName: r.last_name,
        start: r.start,
      }));
    return this.crew;
  }

  /** Assigns an operator from `assignment.start` (moving their start when assigned already). */
  putAssignment(assignment: Assignment): void {
    const crew = this.assignments().filter((a) => a.operatorId !== assignment.operatorId);
    this.sql.exec(
      `INSERT INTO assignments (operator_id, first_name, last_name, start) VALUES (?, ?, ?, ?)
       ON CONFLICT (operator_id) DO UPDATE SET first_name = excluded.first_name,
         last_name = excluded.last_name, start = excluded.start`,
      assignment.operatorId,
      assignment.firstName,
      assignment.lastName,
      assignment.start,
    );
    crew.push({ ...assignment });
    crew.sort((a, b) => a.start - b.start || a.operatorId - b.operatorId);
    this.crew = crew;
  }

  /**
   * Makes `operatorId` (null: nobody) the operator of the segment whose log is `logId`,
   * whatever the assignments say (a PATCH of the log: src/resources/production-logs/running-shift.ts).
   *
   * @returns false when no segment of the timeline has that log.
   */
  setLogOperator(logId: string, operatorId: number | null): boolean {
    const segment = (this.segments() as StoredSegment[]).find((s) => s.logId === logId);
    if (!segment) return false;
    this.sql.exec(
      `INSERT INTO log_operators (log_id, operator_id) VALUES (?, ?)
       ON CONFLICT (log_id) DO UPDATE SET operator_id = excluded.operator_id`,
      logId,
      operatorId,
    );
    segment.operator = operatorId;
    return true;
  }

  /** Empties the timeline and the assignments (the instance is closed). */
  clearTimeline(): void {
    this.sql.exec("DELETE FROM segments");
    this.sql.exec("DELETE FROM log_operators");
    this.sql.exec("DELETE FROM assignments");
    this.timeline = [];
    this.crew = [];
  }

  /**
   * Records what D1 now holds for a segment's log (see `flush`); writes nothing when that
   * is what the segment already records (a refresh of a log that kept its end).
   */
  markProjected(segment: StoredSegment, hasLog: boolean, projected: string | null): void {
    if (segment.hasLog === hasLog && segment.projected === projected) return;
    this.sql.exec(
      "UPDATE segments SET has_log = ?, projected = ? WHERE log_id = ?",
      hasLog ? 1 : 0,
      projected,
      segment.logId,
    );
    segment.hasLog = hasLog;
    segment.projected = projected;
  }

  /**
   * Inserts or replaces the segment starting at `segment.start` (a replaced one keeps its
   * log id and whether D1 has its log; its projection is stale).
   */
  putSegment(segment: Omit<Segment, "logId">): void {
    const timeline = this.segments() as StoredSegment[];
    const logId = crypto.randomUUID();
    this.sql.exec(
      `INSERT INTO segments (log_id, start, end, sku, nominal_speed, counting_factor,
         simple_work_order, quantity, custom, has_log, projected)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, NULL)
       ON CONFLICT (start) DO UPDATE SET end = excluded.end, sku = excluded.sku,
         nominal_speed = excluded.nominal_speed, counting_factor = excluded.counting_factor,
         simple_work_order = excluded.simple_work_order, quantity = excluded.quantity,
         custom = excluded.custom, projected = NULL`,
      logId,
      segment.start,
      segment.end,
      JSON.stringify(segment.sku),
      segment.nominalSpeed,
      segment.countingFactor,
      segment.simpleWorkOrder === null ? null : JSON.stringify(segment.simpleWorkOrder),
      segment.quantity,
      segment.customJson,
    );
    // Field by field: a carried segment comes with its old log id, which must not win.
    const fields = {
      start: segment.start,
      end: segment.end,
      sku: segment.sku,
      nominalSpeed: segment.nominalSpeed,
      countingFactor: segment.countingFactor,
      simpleWorkOrder: segment.simpleWorkOrder,
      quantity: segment.quantity,
      customJson: segment.customJson,
      projected: null,
    };
    // Writes usually start now, after every segment: search from the end.
    let at = timeline.length;
    while (at > 0 && (timeline[at - 1]?.start ?? 0) > segment.start) at -= 1;
    const same = timeline[at - 1];
    if (same && same.start === segment.start) {
      timeline[at - 1] = { ...same, ...fields };
    } else {
      timeline.splice(at, 0, { logId, hasLog: false, ...fields });
    }
  }

  /** Counts one more write applied in this instance; returns the new revision. */
  bumpRevision(): number {
    const revision = (this.meta()?.revision ?? 0) + 1;
    this.setMeta({ revision });
    return revision;
  }
}
