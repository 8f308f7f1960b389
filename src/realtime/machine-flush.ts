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
   */
  async flush(
    force: boolean,
    options: { closing?: RealtimeInstance; mark?: "add" | "remove"; counts?: boolean } = {},
  ): Promise<Map<string, LogCounts>> {
    const counts = new Map<string, LogCounts>();
    const meta = this.store.meta();
    const instance = options.closing ?? this.store.instanceOf(meta);
    if (!meta) return counts;
    // The company's shard, from the directory (cached: src/db/shards.ts).
    const d1 = await companyD1(this.env, meta.company_id);
    if (!instance) {
      if (options.mark) await d1.batch([this.markStatement(d1, meta, options.mark)]);
      this.afterFlush(options.mark);
      return counts;
    }
    const closing = options.closing !== undefined;
    const now = closing ? Math.max(Date.now(), instance.end) : Date.now();
    const segments = this.store.segments();
    const projections = projectTimeline(segments, this.store.assignments(), instance, now);
    const statements: D1PreparedStatement[] = [];
    const logs: Omit<LiveLog, "sensorCount">[] = [];
    const updates: { segment: StoredSegment; hasLog: boolean; projected: string | null }[] = [];
    const withLogs: string[] = [];
    projections.forEach((p, i) => {
      const stored = segments[i];
      if (!stored) return;
      if (p.logEnd === null) {
        if (stored.hasLog) {
          statements.push(deleteLiveLog(d1, meta.company_id, stored.logId));
          updates.push({ segment: stored, hasLog: false, projected: null });
        }
        return;
      }
      withLogs.push(stored.logId);
      const signature = JSON.stringify([p.logEnd, p.operatorId, instance.id, !closing]);
      if (!force && stored.hasLog && stored.projected === signature) return;
      logs.push({
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
      updates.push({ segment: stored, hasLog: true, projected: signature });
    });
    const owner = { companyId: meta.company_id, machineId: meta.machine_id };
    // The pulses come from the machine's signal store, before the D1 batch that stores them.
    const sums = await sumCountSignal(this.env, owner, logs, this.waitUntil);
    const counted = logs.map((log, i) => ({ ...log, sensorCount: sums[i] ?? 0 }));
    statements.push(...upsertLiveLogs(d1, owner, counted));
    if (options.counts) statements.push(...readLogCounts(d1, meta.company_id, withLogs));
    if (options.mark) statements.push(this.markStatement(d1, meta, options.mark));
    if (statements.length === 0) {
      this.afterFlush(options.mark);
      return counts;
    }
    const results = await d1.batch<{ id: string; sensor_count: number; count: number }>(statements);
    for (const result of results) {
      for (const row of result.results ?? []) {
        counts.set(row.id, { id: row.id, sensorCount: row.sensor_count, count: row.count });
      }
    }
    for (const u of updates) this.store.markProjected(u.segment, u.hasLog, u.projected);
    this.afterFlush(options.mark);
    // D1 shows changed logs: the machine's live figures (its stream's OEE) are stale. The
    // stream is told what D1 now holds, so that it recomputes them (at most once a second,
    // however often this runs) from memory rather than reading the logs back.
    if (updates.length > 0) {
      const written = new Map(counted.map((log) => [log.id, log]));
      const change: LiveLogChange = {
        instanceId: instance.id,
        upserted: [...counts.values()].flatMap((c) => {
          const log = written.get(c.id);
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
      this.waitUntil(nudgeLive(this.env, meta.company_id, meta.machine_id, change));
    }
    return counts;
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
