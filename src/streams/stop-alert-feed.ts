/**
 * The alerts of a machine's stops, fed by its stream (docs/webhooks.md, "Alerts"): every
 * stop event the machine's stream records (`stop.started`, `stop.ended`, `stop.updated`,
 * `stop.deleted`, `stop.classified`, `stop.unclassified`), whichever door made it (the
 * detector's stop sync, the operator API, the classification path), is told to the machine's
 * `StopAlerts` (src/webhooks/stop-alerts.ts) in the same synchronous step as the append, so
 * an alert is stored before the append answers. What is due is written at once, in the
 * background, one run at a time; what is due later wakes the object's alarm.
 */
import type { Env } from "../env";
import { type AlertStopFacts, StopAlerts } from "../webhooks/stop-alerts";
import type { StreamEventInput } from "./names";

/** After a failed run (D1 unreachable), the next is tried this much later, ms. */
const RETRY_MS = 30_000;

/** The `stop` of a stop event's data (src/streams/payloads.ts `stopEvent`), instants in ms. */
function stopOf(data: unknown): AlertStopFacts | null {
  const stop = (data as { stop?: Record<string, unknown> } | null)?.stop;
  if (!stop || typeof stop.id !== "number" || typeof stop.startTime !== "string") return null;
  return {
    id: stop.id,
    startTime: Date.parse(stop.startTime),
    endTime: typeof stop.endTime === "string" ? Date.parse(stop.endTime) : null,
    isProgrammed: stop.isProgrammed === true,
  };
}

/** The `stopId` of a classification event's data. */
function stopIdOf(data: unknown): number | null {
  const id = (data as { stopId?: unknown } | null)?.stopId;
  return typeof id === "number" ? id : null;
}

/** A machine stream's alerts: what its stop events make due, and the runs that write it. */
export class StopAlertFeed {
  private readonly alerts: StopAlerts;
  private running: Promise<void> | null = null;
  private again = false;
  /** When the last run failed, ms (null after a success): the next waits `RETRY_MS`. */
  private failedAt: number | null = null;

  /**
   * @param sql the stream object's SQLite (the alerts' tables).
   * @param env the bindings: the company's shard, the webhook Queue and deliverers.
   * @param wakeBy sets the object's alarm to an instant unless it is set no later already.
   */
  constructor(
    sql: SqlStorage,
    private readonly env: Env,
    private readonly wakeBy: (at: number) => Promise<void>,
  ) {
    this.alerts = new StopAlerts(sql);
  }

  /**
   * Tells the alerts a stream event (synchronous: stored with the append).
   *
   * @returns true when something may be due now (the caller starts `run`).
   */
  note(input: StreamEventInput, now: number = Date.now()): boolean {
    if (input.type === "stop.classified" || input.type === "stop.unclassified") {
      const stopId = stopIdOf(input.data);
      if (stopId !== null) this.alerts.classified(stopId, input.type === "stop.classified");
      return false;
    }
    if (!input.type.startsWith("stop.")) return false;
    const stop = stopOf(input.data);
    if (!stop) return false;
    if (input.type === "stop.started") this.alerts.opened(stop, now);
    else if (input.type === "stop.ended") this.alerts.ended(stop, now);
    else if (input.type === "stop.updated") this.alerts.changed(stop);
    else if (input.type === "stop.deleted") this.alerts.deleted(stop.id);
    return input.type === "stop.started" || input.type === "stop.ended";
  }

  /**
   * Writes what is due, one run at a time (a run asked for meanwhile follows the one under
   * way), until nothing is due now or a run fails.
   *
   * @param companyId the machine's company.
   * @returns settled once done and the alarm set for what is due later; never rejects (a
   *   failure is logged and retried by the alarm).
   */
  run(companyId: number): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const now = Date.now();
        try {
          const more = await this.alerts.run(this.env, companyId, now);
          this.failedAt = null;
          if (more) this.again = true;
        } catch (error) {
          this.failedAt = now;
          console.error(
            JSON.stringify({
              level: "error",
              event: "stop_alerts",
              companyId,
              error: String(error),
            }),
          );
          return;
        }
      } while (this.again);
    })()
      .finally(() => {
        this.running = null;
      })
      .then(async () => {
        // Alerts due later (a threshold), or a retry: the object's alarm.
        const at = this.nextWake();
        if (at !== null) await this.wakeBy(at);
      })
      .catch((error: unknown) => {
        console.error(
          JSON.stringify({ level: "error", event: "stop_alerts_wake", error: String(error) }),
        );
      });
    return this.running;
  }

  /** Runs when an alert is due and no failure is being waited out (the object's alarm). */
  async runIfDue(companyId: number, now: number = Date.now()): Promise<void> {
    if (this.running) await this.running;
    if (this.failedAt !== null && now < this.failedAt + RETRY_MS) return;
    if (this.alerts.isDue(now)) await this.run(companyId);
  }

  /**
   * When the object must wake for the alerts: the next alert due, or after a failure the
   * retry; null when nothing is due.
   */
  nextWake(now: number = Date.now()): number | null {
    const next = this.alerts.nextDue();
    if (next === null) return null;
    if (this.failedAt !== null) return Math.max(next, this.failedAt + RETRY_MS);
    return Math.max(next, now);
  }

  /** The stops watched and their alerts (a test's view). */
  watched() {
    return this.alerts.watched();
  }
}
