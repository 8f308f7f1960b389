/**
 * The demo replay: Demo Plant A's recorded week played again at the current time of day
 * (scripts/lib/replay-plan.ts says what plays when), sent as a plant's collectors and
 * scanners would, through the public and operator APIs only:
 *
 * - `power` and `count` samples: operator ingestion (`POST /operator/v1/signals/{id}/samples`);
 * - SKU changes: `POST /v1/realtime/{machine_id}/sku` with the run's `start`;
 * - operators at each shift start: `POST /v1/realtime/{machine_id}/operator`;
 * - alarms: unplanned stops through the operator API, opened and then closed.
 *
 * It first fills the last 7 days before the running shift as the plant's systems would have
 * recorded them (scripts/lib/replay-week.ts: samples, the closed shifts' production logs
 * through the public API, stops), then plays the running shift so far as realtime writes
 * (the SKU a machine was making when the shift began is set at the shift's start), then
 * every minute what became due. Everything it sends is idempotent on a restart: a
 * sample at an existing instant replaces it, a realtime write with the same `start`
 * replaces it, an assignment with the same start changes nothing, and a stop is looked up
 * by its start (stops report) before one is opened.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { demoFetch, type Fetch } from "./demo-fetch";
import { parseSmeRows, type SmeRow } from "./demo-operations";
import { DEMO_OPERATORS } from "./demo-seed-operations";
import { pause } from "./pause";
import { PROJECT_ROOT } from "./project";
import { type ReplayEvent, replayEvents, skusRunningAt } from "./replay-plan";
import { fillWeek } from "./replay-week";

/** Where and as whom the replay sends. */
export interface ReplayTarget {
  /** Origin of the deployment, for example `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** An API key of Demo Plant A with machines, signals, operators, realtime and reports scopes. */
  key: string;
  /** The deployment's operator token. */
  operatorToken: string;
}

/** A line of the replay's log. */
export type ReplayLog = (line: string) => void;

const TICK_MS = 60_000;
const SME_FILE = "data/sme-manufacturing-atzeni2023/company_A_labelled_subset.csv";

export interface Machine {
  id: number;
  powerId: string;
  countId: string;
}

/** A failed call; `status` 0 for a network error. */
export class CallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What one pass sent. */
export interface ReplayCounts {
  samples: number;
  skuWrites: number;
  operatorWrites: number;
  stopsOpened: number;
  stopsClosed: number;
}

/**
 * One replay against a deployment: resolves the plant's machines, signals and operators
 * once, then plays windows of time.
 */
export class Replay {
  /** The "Asset N" machines by asset number, once `resolve` has run. */
  readonly machines = new Map<number, Machine>();
  private operatorIds: number[] = [];
  /** Open stops the replay created, by `machineId:startMs`, for closing them later. */
  readonly openStops = new Map<string, number>();
  /** The recorded rows by asset. */
  readonly rows: Map<number, SmeRow[]>;
  /** Every call goes through it: it retries what says nothing was done (./demo-fetch.ts). */
  private readonly send: Fetch;

  constructor(
    private readonly target: ReplayTarget,
    private readonly log: ReplayLog = console.log,
    smeCsv = readFileSync(join(PROJECT_ROOT, SME_FILE), "utf8"),
  ) {
    this.rows = parseSmeRows(smeCsv);
    this.send = demoFetch({ onRetry: (line) => this.log(`Replay: retrying ${line}`) });
  }

  /**
   * One call: the public API with the key, or the operator API with `operator: true`;
   * JSON in and out.
   *
   * @throws CallError with the status (0 for a network error) on an answer other than 2XX.
   */
  async call<T>(
    path: string,
    init: { method?: string; body?: unknown; operator?: boolean } = {},
  ): Promise<T> {
    const headers: Record<string, string> = init.operator
      ? { authorization: `Bearer ${this.target.operatorToken}` }
      : { "x-api-key": this.target.key };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    let res: Response;
    try {
      res = await this.send(
        new Request(`${this.target.baseUrl}${path}`, {
          method: init.method ?? (init.body === undefined ? "GET" : "POST"),
          headers,
          body: init.body === undefined ? undefined : JSON.stringify(init.body),
        }),
      );
    } catch (error) {
      throw new CallError(0, `${path}: ${String(error)}`);
    }
    const text = await res.text();
    if (!res.ok) throw new CallError(res.status, `${path}: ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Finds "Asset N" machines with their signals, and the operators, of the key's company. */
  async resolve(): Promise<void> {
    const machines =
      await this.call<{ id: number; uuid: string | null; name: string }[]>("/v1/machines");
    for (const m of machines) {
      const asset = /^Asset (\d+)$/.exec(m.name)?.[1];
      if (asset === undefined || !m.uuid) continue;
      const { signals } = await this.call<{ signals: { public_id: string; name: string }[] }>(
        `/v1/machines/${m.uuid}/signals`,
      );
      const power = signals.find((s) => s.name === "power");
      const count = signals.find((s) => s.name === "count");
      if (power && count) {
        this.machines.set(Number(asset), {
          id: m.id,
          powerId: power.public_id,
          countId: count.public_id,
        });
      }
    }
    if (this.machines.size === 0) {
      throw new Error('No "Asset N" machine with power and count signals: is this Demo Plant A?');
    }
    const { operators } = await this.call<{
      operators: { id: number; firstName: string | null; lastName: string | null }[];
    }>("/v1/operators/filters", { body: { limit: 100 } });
    // The data's roster only: an operator someone created (a /docs example) is not put to work.
    this.operatorIds = DEMO_OPERATORS.flatMap(
      (person) =>
        operators.find((o) => o.firstName === person.firstName && o.lastName === person.lastName)
          ?.id ?? [],
    );
  }

  /** A realtime write; a machine outside its running shift (409, 422 `start`) is skipped. */
  private async realtime(
    machineId: number,
    what: "sku" | "operator",
    body: unknown,
  ): Promise<boolean> {
    try {
      await this.call(`/v1/realtime/${machineId}/${what}`, { body });
      return true;
    } catch (error) {
      if (error instanceof CallError && (error.status === 409 || error.status === 422))
        return false;
      throw error;
    }
  }

  /** The id of the recorded (manual) stop of `machineId` that starts at `at`, from the stops report. */
  private async findStop(
    machineId: number,
    at: number,
  ): Promise<{ id: number; open: boolean } | null> {
    const { stops } = await this.call<{
      stops: { stop: { id: number; endTime: string | null; isManual: boolean } }[];
    }>("/v1/reports/stops", {
      body: {
        machines: { include: [machineId] },
        startDate: { equal: new Date(at).toISOString() },
        limit: 10,
      },
    });
    // The alarm stop the replay recorded, not one the count signal detected.
    const found = stops.find((row) => row.stop.isManual)?.stop;
    return found ? { id: found.id, open: found.endTime === null } : null;
  }

  /**
   * Sends the events with `from < at <= to`.
   *
   * @param options.startOfShift also set, at the start of each machine's running shift,
   *   the SKU it was making then (the first pass, which begins mid-shift).
   */
  async play(
    from: number,
    to: number,
    options: { startOfShift?: boolean } = {},
  ): Promise<ReplayCounts> {
    const counts: ReplayCounts = {
      samples: 0,
      skuWrites: 0,
      operatorWrites: 0,
      stopsOpened: 0,
      stopsClosed: 0,
    };
    const events = replayEvents(this.rows, from, to);
    await this.sendSamples(events, counts);
    if (options.startOfShift) await this.setShiftStartSkus(to, counts);
    for (const event of events) {
      if (event.kind === "sample") continue;
      await this.sendEvent(event, counts);
    }
    return counts;
  }

  private async sendSamples(events: readonly ReplayEvent[], counts: ReplayCounts): Promise<void> {
    for (const [asset, machine] of this.machines) {
      const samples = events.filter(
        (e): e is Extract<ReplayEvent, { kind: "sample" }> =>
          e.kind === "sample" && e.asset === asset,
      );
      for (let i = 0; i < samples.length; i += 10_000) {
        const chunk = samples.slice(i, i + 10_000);
        const timestamps = chunk.map((s) => new Date(s.at).toISOString());
        await this.call(`/operator/v1/signals/${machine.powerId}/samples`, {
          operator: true,
          body: { timestamps, values: chunk.map((s) => s.power) },
        });
        await this.call(`/operator/v1/signals/${machine.countId}/samples`, {
          operator: true,
          body: { timestamps, values: chunk.map((s) => s.count) },
        });
        counts.samples += chunk.length * 2;
      }
    }
  }

  private async setShiftStartSkus(now: number, counts: ReplayCounts): Promise<void> {
    for (const [asset, machine] of this.machines) {
      let shiftStart: number;
      try {
        const state = await this.call<{ shift: { start: string } }>(`/v1/realtime/${machine.id}`);
        shiftStart = Date.parse(state.shift.start);
      } catch (error) {
        if (error instanceof CallError && error.status === 409) continue;
        throw error;
      }
      const sku =
        skusRunningAt(this.rows, shiftStart).get(asset) ?? skusRunningAt(this.rows, now).get(asset);
      if (!sku) continue;
      if (
        await this.realtime(machine.id, "sku", { sku, start: new Date(shiftStart).toISOString() })
      ) {
        counts.skuWrites += 1;
      }
    }
  }

  private async sendEvent(
    event: Exclude<ReplayEvent, { kind: "sample" }>,
    counts: ReplayCounts,
  ): Promise<void> {
    const iso = new Date(event.at).toISOString();
    switch (event.kind) {
      case "shift-start": {
        if (this.operatorIds.length === 0) return;
        let k = Math.floor(event.at / (8 * 3_600_000));
        for (const machine of this.machines.values()) {
          const operatorId = this.operatorIds[k % this.operatorIds.length];
          k += 1;
          if (await this.realtime(machine.id, "operator", { operatorId, start: iso })) {
            counts.operatorWrites += 1;
          }
        }
        return;
      }
      case "sku": {
        const machine = this.machines.get(event.asset);
        if (machine && (await this.realtime(machine.id, "sku", { sku: event.sku, start: iso }))) {
          counts.skuWrites += 1;
        }
        return;
      }
      case "stop-open": {
        const machine = this.machines.get(event.asset);
        if (!machine) return;
        const key = `${machine.id}:${event.at}`;
        const existing = await this.findStop(machine.id, event.at);
        if (existing) {
          if (existing.open) this.openStops.set(key, existing.id);
          return;
        }
        const [created] = await this.call<{ id: number }[]>(
          `/operator/v1/machines/${machine.id}/stops`,
          {
            operator: true,
            body: [
              {
                startTime: iso,
                isProgrammed: false,
                isIncludedInAvailability: true,
                isIncludedInStops: true,
                isManual: true,
              },
            ],
          },
        );
        if (created) this.openStops.set(key, created.id);
        counts.stopsOpened += 1;
        return;
      }
      case "stop-close": {
        const machine = this.machines.get(event.asset);
        if (!machine) return;
        const key = `${machine.id}:${event.openedAt}`;
        let id = this.openStops.get(key);
        if (id === undefined) {
          const found = await this.findStop(machine.id, event.openedAt);
          if (!found?.open) return;
          id = found.id;
        }
        await this.call(`/operator/v1/stops/${id}`, {
          method: "PATCH",
          operator: true,
          body: { endTime: iso },
        });
        this.openStops.delete(key);
        counts.stopsClosed += 1;
        return;
      }
    }
  }
}

/**
 * Starts the replay: resolves the plant, fills the last 7 days (scripts/lib/replay-week.ts:
 * samples, the closed shifts' production logs, stops), plays the running shift so far as
 * live realtime writes, then returns while it goes on playing every minute until `signal`
 * aborts.
 *
 * @returns once the first pass is done: the promise of the rest (resolves when aborted).
 */
export async function startReplay(
  target: ReplayTarget,
  options: { log?: ReplayLog; signal?: AbortSignal } = {},
): Promise<{ running: Promise<void> }> {
  const log = options.log ?? console.log;
  const replay = new Replay(target, log);
  await replay.resolve();
  const now = Date.now();
  const { counts: week, plan } = await fillWeek(replay, now);
  // From just before the running shift's start, so that its operators are assigned.
  const first = await replay.play(plan.until - 1, now, { startOfShift: true });
  log(
    `Replay: Demo Plant A's recorded week plays at the current time of day. The last 7 days ` +
      `(from ${new Date(plan.from).toISOString()}): ${week.samples} samples, ` +
      `${week.productionLogs} production logs of closed shifts` +
      (week.shiftsKept > 0 ? ` (${week.shiftsKept} machine shifts already had theirs)` : "") +
      `, ${week.stopsCreated} stops created, ${week.stopsClosed} closed, ` +
      `${week.closuresCreated} closures of the plant calendar created; the running shift: ` +
      `${first.skuWrites} SKU writes, ${first.operatorWrites} operator writes, ` +
      `${first.stopsOpened} stops opened, ${first.stopsClosed} closed.`,
  );
  return { running: loop(replay, now, log, options.signal) };
}

/** Every minute, what became due since `from`, until `signal` aborts. */
async function loop(
  replay: Replay,
  from: number,
  log: ReplayLog,
  signal?: AbortSignal,
): Promise<void> {
  let last = from;
  while (!signal?.aborted) {
    if (!(await pause(TICK_MS, signal))) break;
    const now = Date.now();
    try {
      await replay.play(last, now);
      last = now;
    } catch (error) {
      log(`Replay: ${String(error)} (retrying next minute)`);
    }
  }
}
