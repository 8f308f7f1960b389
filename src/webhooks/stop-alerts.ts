/**
 * The alerts of one machine's stops (docs/webhooks.md, "Alerts"), kept in the SQLite of the
 * machine's stream object, the one place every stop of the machine passes (detected by the
 * signal store, recorded through the operator API, classified by either door): its stream
 * tells this what happened to each stop, and this keeps what is due, when.
 *
 * Two tables, bounded by the stops that still have something to tell:
 *
 * - `alert_stops`: the stops watched, with what the stream said of them (start, end,
 *   programmed, classified) and whether it was open when the stream first told of it
 *   (`live`: only such a stop has threshold events; a stop that arrives already ended is
 *   history, told by `MachineStopEnded` alone);
 * - `alert_due`: one row per alert of a watched stop (event type and threshold), with the
 *   instant it is due, null once written or moot: the primary key keeps one row per alert,
 *   so an alert is planned once however often the stream repeats itself.
 *
 * `run` writes what is due to the webhook outbox (./stop-alert-events.ts: at most once per
 * stop, type and threshold there too), decided on the stop as D1 holds it; the object's alarm
 * is set at `nextDue`. Work per run: one read of the registrations, one of the stops due (up
 * to `RUN_LIMIT`), one write batch; no loop over time.
 */
import { companyScope } from "../db/company-scope";
import type { DirectoryEnv } from "../db/shards";
import type { Env } from "../env";
import { type StopEventRow, stopRowsByIds } from "../reports/stops-report";
import { MAX_THRESHOLD_MINUTES, type StopAlertType, type ThresholdEventType } from "./event-types";
import {
  type AlertRegistrations,
  alertRegistrations,
  alertStatements,
  isRegistered,
  type StopAlert,
} from "./stop-alert-events";
import { dispatchDeliveries } from "./webhook-events";
import type { OutboxBindings } from "./webhook-outbox";

const MINUTE = 60_000;
/** Most alerts one run writes; the rest are due still, and the next run takes them at once. */
const RUN_LIMIT = 50;

/** A stop as its stream events tell it; instants in ms. */
export interface AlertStopFacts {
  id: number;
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
}

/** The bindings a run needs: the company's shard, the outbox's Queue and the deliverers. */
type AlertBindings = DirectoryEnv & OutboxBindings & Pick<Env, "WEBHOOK_ENDPOINT">;

/** One row of `alert_due` (a type alias: SQL rows must be index-signature compatible). */
type DueRow = {
  stop_id: number;
  event_type: StopAlertType;
  threshold: number;
  due_ms: number;
};

/** What becomes of a due alert once its stop is read. */
type Decision = { send: true } | { send: false; dueAt: number | null };

const LONGER_THAN: ThresholdEventType = "MachineStopLongerThan";
const REASON_MISSING: ThresholdEventType = "MachineStopReasonMissing";

/**
 * Whether a due alert is sent, on the stop as D1 holds it at `now` (`row`; undefined when it
 * is deleted): `MachineStopStarted` always; `MachineStopEnded` once it has an end;
 * `MachineStopLongerThan` once it has lasted the threshold (open, or ended after it);
 * `MachineStopReasonMissing` once the threshold has passed since its start without a
 * classification. A programmed stop has no threshold event. Not yet: due again at the
 * instant the stop's start gives (a start moved by later samples or an edit).
 */
export function decide(due: StopAlert, row: StopEventRow | undefined, now: number): Decision {
  if (!row) return { send: false, dueAt: null };
  const start = Date.parse(row.stop.startTime);
  const end = row.stop.endTime === null ? null : Date.parse(row.stop.endTime);
  if (due.type === "MachineStopStarted") return { send: true };
  if (due.type === "MachineStopEnded")
    return end === null ? { send: false, dueAt: null } : { send: true };
  if (row.stop.isProgrammed) return { send: false, dueAt: null };
  const at = start + (due.thresholdMinutes ?? 0) * MINUTE;
  if (due.type === LONGER_THAN) {
    if ((end ?? now) >= at) return { send: true };
    return { send: false, dueAt: end === null ? at : null };
  }
  if (row.classification.id !== null) return { send: false, dueAt: null };
  return now >= at ? { send: true } : { send: false, dueAt: at };
}

/** The alerts of one machine's stops, in its stream object's SQLite. */
export class StopAlerts {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS alert_stops (
      stop_id INTEGER PRIMARY KEY,
      start_ms INTEGER NOT NULL,
      end_ms INTEGER,
      programmed INTEGER NOT NULL,
      classified INTEGER NOT NULL DEFAULT 0,
      live INTEGER NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS alert_due (
      stop_id INTEGER NOT NULL,
      event_type TEXT NOT NULL,
      threshold INTEGER NOT NULL,
      due_ms INTEGER,
      PRIMARY KEY (stop_id, event_type, threshold))`);
    sql.exec(
      "CREATE INDEX IF NOT EXISTS alert_due_at ON alert_due (due_ms) WHERE due_ms IS NOT NULL",
    );
    sql.exec("CREATE TABLE IF NOT EXISTS alert_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  }

  /** A stop opened (`stop.started`): watched live; `MachineStopStarted` due now, its thresholds planned. */
  opened(stop: AlertStopFacts, now: number): void {
    this.sql.exec(
      `INSERT INTO alert_stops (stop_id, start_ms, end_ms, programmed, classified, live)
       VALUES (?, ?, NULL, ?, 0, 1)
       ON CONFLICT (stop_id) DO UPDATE SET start_ms = excluded.start_ms, end_ms = NULL,
         programmed = excluded.programmed, live = 1`,
      stop.id,
      stop.startTime,
      stop.isProgrammed ? 1 : 0,
    );
    this.due(stop.id, "MachineStopStarted", 0, now);
    this.plan(this.thresholds(), stop.id);
  }

  /**
   * A stop has an end (`stop.ended`: it closed, or it was created ended): `MachineStopEnded`
   * due now; a stop not watched yet is watched for that alone.
   */
  ended(stop: AlertStopFacts, now: number): void {
    this.sql.exec(
      `INSERT INTO alert_stops (stop_id, start_ms, end_ms, programmed, classified, live)
       VALUES (?, ?, ?, ?, 0, 0)
       ON CONFLICT (stop_id) DO UPDATE SET start_ms = excluded.start_ms,
         end_ms = excluded.end_ms, programmed = excluded.programmed`,
      stop.id,
      stop.startTime,
      stop.endTime,
      stop.isProgrammed ? 1 : 0,
    );
    this.due(stop.id, "MachineStopEnded", 0, now);
    this.moved(stop.id);
  }

  /** A watched stop's times or flags changed (`stop.updated`); one not watched is left alone. */
  changed(stop: AlertStopFacts): void {
    this.sql.exec(
      "UPDATE alert_stops SET start_ms = ?, end_ms = ?, programmed = ? WHERE stop_id = ?",
      stop.startTime,
      stop.endTime,
      stop.isProgrammed ? 1 : 0,
      stop.id,
    );
    this.moved(stop.id);
  }

  /** A stop is gone (`stop.deleted`): nothing more is told of it. */
  deleted(stopId: number): void {
    this.sql.exec("DELETE FROM alert_due WHERE stop_id = ?", stopId);
    this.sql.exec("DELETE FROM alert_stops WHERE stop_id = ?", stopId);
  }

  /**
   * A stop was given its reason (`stop.classified`: its `MachineStopReasonMissing` not yet
   * sent are dropped) or lost it (`stop.unclassified`: planned again).
   */
  classified(stopId: number, yes: boolean): void {
    this.sql.exec("UPDATE alert_stops SET classified = ? WHERE stop_id = ?", yes ? 1 : 0, stopId);
    if (yes) {
      this.sql.exec(
        "DELETE FROM alert_due WHERE stop_id = ? AND event_type = ? AND due_ms IS NOT NULL",
        stopId,
        REASON_MISSING,
      );
    } else {
      this.plan(this.thresholds(), stopId);
    }
  }

  /** The earliest instant an alert is due, ms; null when none is. */
  nextDue(): number | null {
    const [row] = this.sql
      .exec<{ at: number | null }>(
        "SELECT MIN(due_ms) AS at FROM alert_due WHERE due_ms IS NOT NULL",
      )
      .toArray();
    return row?.at ?? null;
  }

  /** True when an alert is due at `now`. */
  isDue(now: number): boolean {
    const next = this.nextDue();
    return next !== null && next <= now;
  }

  /**
   * Writes the alerts due at `now` (up to `RUN_LIMIT`) to the webhook outbox and hands their
   * deliveries over; plans the thresholds of the watched stops with the registrations read
   * now; forgets the stops with nothing left to tell.
   *
   * @returns true when more alerts are due (the limit was reached).
   * @throws whatever D1 throws: nothing is marked written, the caller retries later.
   */
  async run(env: AlertBindings, companyId: number, now: number): Promise<boolean> {
    const scope = await companyScope(env, companyId);
    const registrations = await alertRegistrations(scope);
    this.sql.exec(
      "INSERT OR REPLACE INTO alert_meta (key, value) VALUES ('thresholds', ?)",
      JSON.stringify(registrations.thresholds),
    );
    this.plan(registrations.thresholds, null);
    const due = this.sql
      .exec<DueRow>(
        `SELECT stop_id, event_type, threshold, due_ms FROM alert_due
         WHERE due_ms IS NOT NULL AND due_ms <= ? ORDER BY due_ms LIMIT ?`,
        now,
        RUN_LIMIT,
      )
      .toArray()
      .map((r) => ({
        type: r.event_type,
        stopId: r.stop_id,
        thresholdMinutes: r.threshold === 0 ? null : r.threshold,
      }));
    const wanted = due.filter((alert) => isRegistered(registrations, alert));
    const rows = await stopRowsByIds(scope, [...new Set(wanted.map((a) => a.stopId))], now);
    const settled: { alert: StopAlert; dueAt: number | null }[] = due
      .filter((alert) => !wanted.includes(alert))
      .map((alert) => ({ alert, dueAt: null }));
    const writes = [];
    for (const alert of wanted) {
      const decision = decide(alert, rows.get(alert.stopId), now);
      const row = rows.get(alert.stopId);
      if (decision.send && row) writes.push(await alertStatements(scope, alert, row, now));
      settled.push({ alert, dueAt: decision.send ? null : decision.dueAt });
    }
    const statements = writes.flatMap((w) => [w.event, w.deliveries]);
    const [head, ...rest] = statements;
    const results = head ? ((await scope.db.batch([head, ...rest])) as unknown[]) : [];
    for (const { alert, dueAt } of settled) {
      this.sql.exec(
        "UPDATE alert_due SET due_ms = ? WHERE stop_id = ? AND event_type = ? AND threshold = ?",
        dueAt,
        alert.stopId,
        alert.type,
        alert.thresholdMinutes ?? 0,
      );
    }
    this.forget(registrations, now);
    await Promise.all(
      writes.map((w, i) =>
        dispatchDeliveries(
          env,
          scope,
          w.eventId,
          (results[2 * i + 1] ?? []) as { id: string; webhookId: string }[],
        ),
      ),
    );
    return due.length === RUN_LIMIT;
  }

  /** Stops watched at the moment (a test's view). */
  watched(): {
    stopId: number;
    due: { type: string; threshold: number; dueAt: number | null }[];
  }[] {
    const stops = this.sql.exec<{ stop_id: number }>("SELECT stop_id FROM alert_stops").toArray();
    return stops.map(({ stop_id }) => ({
      stopId: stop_id,
      due: this.sql
        .exec<{ event_type: string; threshold: number; due_ms: number | null }>(
          "SELECT event_type, threshold, due_ms FROM alert_due WHERE stop_id = ?",
          stop_id,
        )
        .toArray()
        .map((d) => ({ type: d.event_type, threshold: d.threshold, dueAt: d.due_ms })),
    }));
  }

  /** Sets an alert due at `at` (again, for one that was written: D1 keeps it at most once). */
  private due(stopId: number, type: StopAlertType, threshold: number, at: number): void {
    this.sql.exec(
      `INSERT INTO alert_due (stop_id, event_type, threshold, due_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET due_ms = excluded.due_ms`,
      stopId,
      type,
      threshold,
      at,
    );
  }

  /** The thresholds read by the last run (none before the first). */
  private thresholds(): Record<ThresholdEventType, number[]> {
    const [row] = this.sql
      .exec<{ value: string }>("SELECT value FROM alert_meta WHERE key = 'thresholds'")
      .toArray();
    return row
      ? (JSON.parse(row.value) as Record<ThresholdEventType, number[]>)
      : { MachineStopLongerThan: [], MachineStopReasonMissing: [] };
  }

  /**
   * Plans the threshold alerts of the live stops (one stop, or all when `stopId` is null):
   * `MachineStopLongerThan` for a stop open or ended after the threshold,
   * `MachineStopReasonMissing` for a stop without a reason; never for a programmed stop. An
   * alert planned before (written, moot or due) stays as it is.
   */
  private plan(thresholds: Record<ThresholdEventType, number[]>, stopId: number | null): void {
    const only = stopId === null ? "" : " AND stop_id = ?";
    const args = stopId === null ? [] : [stopId];
    const insert = (
      type: ThresholdEventType,
      minutes: number,
      condition: string,
      ...more: number[]
    ) =>
      this.sql.exec(
        `INSERT OR IGNORE INTO alert_due (stop_id, event_type, threshold, due_ms)
         SELECT stop_id, ?, ?, start_ms + ? FROM alert_stops
         WHERE live = 1 AND programmed = 0 AND ${condition}${only}`,
        type,
        minutes,
        minutes * MINUTE,
        ...more,
        ...args,
      );
    for (const minutes of thresholds.MachineStopLongerThan) {
      insert(LONGER_THAN, minutes, "(end_ms IS NULL OR end_ms - start_ms >= ?)", minutes * MINUTE);
    }
    for (const minutes of thresholds.MachineStopReasonMissing) {
      insert(REASON_MISSING, minutes, "classified = 0");
    }
  }

  /**
   * A watched stop's times changed: its threshold alerts not yet sent are due at the new
   * start plus their threshold, and a `MachineStopLongerThan` its end now comes before is moot.
   */
  private moved(stopId: number): void {
    this.sql.exec(
      `UPDATE alert_due SET due_ms = (SELECT start_ms FROM alert_stops s WHERE s.stop_id = alert_due.stop_id) + threshold * ?
       WHERE stop_id = ? AND threshold > 0 AND due_ms IS NOT NULL`,
      MINUTE,
      stopId,
    );
    this.sql.exec(
      `UPDATE alert_due SET due_ms = NULL
       WHERE stop_id = ? AND event_type = ? AND due_ms IS NOT NULL
         AND EXISTS (SELECT 1 FROM alert_stops s WHERE s.stop_id = alert_due.stop_id
           AND s.end_ms IS NOT NULL AND s.end_ms - s.start_ms < alert_due.threshold * ?)`,
      stopId,
      LONGER_THAN,
      MINUTE,
    );
  }

  /**
   * Forgets the stops with nothing left to tell: ended, nothing due, and no reason threshold
   * still to pass (classified, not live, programmed, or past the largest one registered);
   * an open stop is watched until it ends or goes, and none longer than a day past its end.
   */
  private forget(registrations: AlertRegistrations, now: number): void {
    const reasons = registrations.thresholds.MachineStopReasonMissing;
    const longest = (reasons[reasons.length - 1] ?? 0) * MINUTE;
    this.sql.exec(
      `DELETE FROM alert_stops WHERE end_ms IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM alert_due d WHERE d.stop_id = alert_stops.stop_id AND d.due_ms IS NOT NULL)
         AND (classified = 1 OR live = 0 OR programmed = 1 OR start_ms + ? <= ? OR end_ms + ? <= ?)`,
      longest,
      now,
      MAX_THRESHOLD_MINUTES * MINUTE,
      now,
    );
    this.sql.exec("DELETE FROM alert_due WHERE stop_id NOT IN (SELECT stop_id FROM alert_stops)");
  }
}
