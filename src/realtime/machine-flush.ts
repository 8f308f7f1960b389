/**
 * The realtime object's flush: its timeline shown in D1 as live production logs, in one
 * batch (write-behind, see `./realtime-machine.ts`), with the machine's `realtime_pending`
 * mark added or removed in the same batch when asked.
 */
import { ownedText } from "../db/company-scope";
import { companyD1 } from "../db/shards";
import type { Env } from "../env";
import { sumCountSignal } from "../resources/signals/count-sums";
import type { LiveLogChange } from "../streams/live-inputs";
import { nudgeLive } from "../streams/publish";
import type { MachineStore, MetaRow, StoredSegment } from "./machine-store";
import type { RealtimeInstance } from "./machine-types";
import {
  deleteLiveLog,
  type LiveLog,
  type LogCounts,
  readLogCounts,
  upsertLiveLogs,
} from "./projection";
import { projectTimeline } from "./timeline";

/** A segment's projection as D1 holds it once the flush's batch ran. */
interface SegmentUpdate {
  segment: StoredSegment;
  /** Whether a log shows the segment. */
  hasLog: boolean;
  /** The signature of what its log holds (end, operator, instance, live), or null. */
  projected: string | null;
}

/** What one flush writes: see `MachineFlush.planLogs`. */
interface FlushPlan {
  /** The deletions of logs whose segment has not begun (a write moved it later). */
  deletions: D1PreparedStatement[];
  /** The logs to write, their sensor counts not yet summed. */
  logs: Omit<LiveLog, "sensorCount">[];
  updates: SegmentUpdate[];
  /** The ids of every log the timeline shows (the counts read). */
  withLogs: string[];
}

/**
 * Runs a flush's statements as one D1 batch.
 *
 * @returns the counts of the rows the statements answer (the upserts' RETURNING and the
 *   counts reads): `sensorCount` in pulses, `count` in SKU units, by log id.
 */
async function countsOfBatch(
  d1: D1Database,
  statements: D1PreparedStatement[],
): Promise<Map<string, LogCounts>> {
  const counts = new Map<string, LogCounts>();
  const results = await d1.batch<{ id: string; sensor_count: number; count: number }>(statements);
  for (const result of results) {
    for (const row of result.results ?? []) {
      counts.set(row.id, { id: row.id, sensorCount: row.sensor_count, count: row.count });
    }
  }
  return counts;
}

/**
 * What the machine's stream is told after a flush: the logs written with their counts
 * (instants in ms, `count` in SKU units), and the logs removed.
 *
 * @param written the logs the flush wrote.
 * @param counts the counts D1 answered, by log id (a log without one is left out).
 */
function liveLogChange(
  instanceId: number,
  written: readonly LiveLog[],
  counts: ReadonlyMap<string, LogCounts>,
  updates: readonly SegmentUpdate[],
): LiveLogChange {
  const byId = new Map(written.map((log) => [log.id, log]));
  return {
    instanceId,
    upserted: [...counts.values()].flatMap((c) => {
      const log = byId.get(c.id);
      return log
        ? [
            {
              id: log.id,
              start: log.start,
              end: log.end,
              type: "total" as const,
              count: c.count,
              nominalSpeed: log.nominalSpeed,
            },
          ]
        : [];
    }),
    removed: updates.filter((u) => !u.hasLog).map((u) => u.segment.logId),
  };
}

/** Pushes one realtime object's timeline to D1. */
export class MachineFlush {
  /**
   * @param bindings the object's bindings (`DB`, `SIGNAL_STORE` for the counts,
   *   `MACHINE_STREAM`), read at each flush: the object's `env` as it is then.
   * @param store the object's tables.
   * @param waitUntil keeps the object alive for work after the flush (the stream's nudge).
   */
  constructor(
    private readonly bindings: () => Env,
    private readonly store: MachineStore,
    private readonly waitUntil: (promise: Promise<unknown>) => void,
  ) {}

  private get env(): Env {
    return this.bindings();
  }

  /**
   * Pushes the logs of the timeline to D1 in one batch.
   *
   * @param force rewrite every log (the counts may have changed with new samples),
   *   not only those whose fields or end changed.
   * @param options.closing close this instance: every log ends where its segment
   *   ends and becomes `live = false`.
   * @param options.mark also add or remove the machine's `realtime_pending` row, in the
   *   same batch (see the file comment).
   * @param options.counts also read every log's counts, in the same batch.
   * @returns the counts of the logs written (with `options.counts`: of every log), by
   *   log id.
   * @throws D1's error or the signal store's (nothing marked projected then: the next flush
   *   writes the same logs again).
   */
  async flush(
    force: boolean,
    options: { closing?: RealtimeInstance; mark?: "add" | "remove"; counts?: boolean } = {},
  ): Promise<Map<string, LogCounts>> {
    const meta = this.store.meta();
    const instance = options.closing ?? this.store.instanceOf(meta);
    if (!meta) return new Map();
    // The company's shard, from the directory (cached: src/db/shards.ts).
    const d1 = await companyD1(this.env, meta.company_id);
    if (!instance) {
      if (options.mark) await d1.batch([this.markStatement(d1, meta, options.mark)]);
      this.afterFlush(options.mark);
      return new Map();
    }
    const plan = this.planLogs(d1, meta, instance, options.closing !== undefined, force);
    const owner = { companyId: meta.company_id, machineId: meta.machine_id };
    // The pulses come from the machine's signal store, before the D1 batch that stores them.
    const sums = await sumCountSignal(this.env, owner, plan.logs, this.waitUntil);
    const counted = plan.logs.map((log, i) => ({ ...log, sensorCount: sums[i] ?? 0 }));
    const statements = [...plan.deletions, ...upsertLiveLogs(d1, owner, counted)];
    if (options.counts) statements.push(...readLogCounts(d1, meta.company_id, plan.withLogs));
    if (options.mark) statements.push(this.markStatement(d1, meta, options.mark));
    if (statements.length === 0) {
      this.afterFlush(options.mark);
      return new Map();
    }
    const counts = await countsOfBatch(d1, statements);
    for (const u of plan.updates) this.store.markProjected(u.segment, u.hasLog, u.projected);
    this.afterFlush(options.mark);
    // D1 shows changed logs: the machine's live figures (its stream's OEE) are stale. The
    // stream is told what D1 now holds, so that it recomputes them (at most once a second,
    // however often this runs) from memory rather than reading the logs back.
    if (plan.updates.length > 0) {
      const change = liveLogChange(instance.id, counted, counts, plan.updates);
      this.waitUntil(nudgeLive(this.env, meta.company_id, meta.machine_id, change));
    }
    return counts;
  }

  /**
   * What the timeline asks of D1 now: each stored segment's log projected at this instant
   * (at the instance's end or later when closing), compared with what the segment says D1
   * holds (its `projected` signature).
   *
   * @param closing the logs end where their segments end and are no longer live.
   * @param force every log with an end is written again, changed or not.
   * @returns the deletions of logs whose segment has not begun, the logs to write (their
   *   counts not summed yet), the segments' new projections, and the ids of every log the
   *   timeline shows.
   */
  private planLogs(
    d1: D1Database,
    meta: MetaRow,
    instance: RealtimeInstance,
    closing: boolean,
    force: boolean,
  ): FlushPlan {
    const now = closing ? Math.max(Date.now(), instance.end) : Date.now();
    const segments = this.store.segments();
    const projections = projectTimeline(segments, this.store.assignments(), instance, now);
    const plan: FlushPlan = { deletions: [], logs: [], updates: [], withLogs: [] };
    projections.forEach((p, i) => {
      const stored = segments[i];
      if (!stored) return;
      if (p.logEnd === null) {
        if (stored.hasLog) {
          plan.deletions.push(deleteLiveLog(d1, meta.company_id, stored.logId));
          plan.updates.push({ segment: stored, hasLog: false, projected: null });
        }
        return;
      }
      plan.withLogs.push(stored.logId);
      const signature = JSON.stringify([p.logEnd, p.operatorId, instance.id, !closing]);
      if (!force && stored.hasLog && stored.projected === signature) return;
      plan.logs.push({
        id: stored.logId,
        skuId: stored.sku.id,
        shiftInstanceId: instance.id,
        operatorId: p.operatorId,
        simpleWorkOrderId: stored.simpleWorkOrder?.id ?? null,
        nominalSpeed: stored.nominalSpeed,
        countingFactor: stored.countingFactor,
        start: stored.start,
        end: p.logEnd,
        live: !closing,
        now: Date.now(),
      });
      plan.updates.push({ segment: stored, hasLog: true, projected: signature });
    });
    return plan;
  }

  /** The statement adding or removing this machine's `realtime_pending` row. */
  private markStatement(
    d1: D1Database,
    meta: MetaRow,
    mark: "add" | "remove",
  ): D1PreparedStatement {
    return mark === "add"
      ? d1
          .prepare(
            `INSERT INTO realtime_pending (company_id, machine_id, since)
           VALUES (CAST(?1 AS INTEGER), CAST(?2 AS INTEGER), CAST(?3 AS INTEGER))
           ON CONFLICT (company_id, machine_id) DO NOTHING`,
          )
          .bind(meta.company_id, meta.machine_id, Date.now())
      : d1
          .prepare(
            `DELETE FROM realtime_pending
           WHERE ${ownedText("?1")} AND machine_id = CAST(?2 AS INTEGER)`,
          )
          .bind(meta.company_id, meta.machine_id);
  }

  /** After a successful flush: nothing is waiting for D1; the mark as the flush left it. */
  private afterFlush(mark: "add" | "remove" | undefined): void {
    this.store.heldWrites = 0;
    this.store.setSync(mark ? { dirty: 0, marked: mark === "add" ? 1 : 0 } : { dirty: 0 });
  }
}
