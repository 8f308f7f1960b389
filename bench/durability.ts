/**
 * `npm run durability`: kill the local Worker hard in the middle of writes and
 * of webhook deliveries, start it again on the same state, and check that every
 * acknowledged write is there and every queued delivery is delivered.
 *
 * 1. builds a frozen bundle of the Worker, applies the migrations to a state
 *    folder of its own (`.wrangler/durability`, emptied first) and starts
 *    `wrangler dev --test-scheduled` on port DUR_PORT (8796), its own process
 *    group; wrangler's output goes to `.wrangler/durability-wrangler.log`;
 * 2. seeds a company (bench/lib/plant.ts: 4 machines, a 24-hour shift, SKUs
 *    with nominal speeds, 1,200 stops on the previous days, a key with every
 *    scope), registers a webhook for `MachineStopClassificationCreated` to a
 *    local receiver (scripts/receiver.ts, on DUR_RECEIVER_PORT 9826, exempted
 *    from the endpoint rules with `--var WEBHOOK_EXEMPT_ORIGINS`), which
 *    verifies signatures and records every eventId;
 * 3. DUR_ROUNDS (2) rounds: 14 writers run at once (3 `POST /v1/skus`, 3
 *    `POST /v1/production-logs` on past days, 4 `POST /v1/realtime/{id}/sku`,
 *    one machine each, and 4 operator `PUT /stops/{id}/classification`, each
 *    stop classified once, so each acknowledged change is one event and one
 *    delivery); after a random 60-100 % of DUR_WRITE_SECONDS (8) the Worker's
 *    process group gets SIGKILL, and it is started again on the same
 *    `--persist-to`. In round 1 the receiver answers 503 for its first
 *    DUR_FAIL_FOR (4) seconds, so that deliveries are between retries at the
 *    kill; in round 2 it is healthy, so deliveries are in flight;
 * 4. after the last restart, checks every acknowledged write (2XX answer, id
 *    kept): SKUs and production logs by paging the search routes, realtime
 *    writes by the machines' `revision` (writes applied in the running
 *    instance, GET /v1/realtime/{id}), classifications in the stops report;
 * 5. runs the outbox sweeper (GET /cdn-cgi/handler/scheduled, standing in for
 *    the cron trigger, which local `wrangler dev` does not fire) every 5 s and
 *    waits (at most DUR_DELIVERY_TIMEOUT s; default 66 + the margin + 34, at
 *    least 120) until the receiver has every eventId of the registration's
 *    deliveries (operator API) and of every acknowledged change. A kill loses
 *    the local Queue's messages (Miniflare keeps them in memory), the delayed
 *    retries included; the service itself re-sends them: its sweeper takes a
 *    sent delivery for lost once it is quiet past its next scheduled handling
 *    by WEBHOOK_STALLED_MARGIN_SECONDS, which the run sets to DUR_STALLED_MARGIN
 *    (20 s; 600 s by default in wrangler.toml), so that a delivery between
 *    rounds (60-66 s of wait) is re-sent within about 90 s rather than 11 min;
 * 6. prints the counts (acknowledged, found, lost; deliveries queued,
 *    delivered, duplicates, lost, with the state of each lost one) and writes
 *    them to bench/durability-results.md. Exits 1 when anything is lost.
 *
 * A realtime write's `revision` is per shift instance: a run across 00:00 UTC
 * would start a new instance and read as lost, so the run refuses to start in
 * the last 10 minutes of a UTC day.
 */
import { writeFileSync } from "node:fs";
import type { Server } from "node:http";
import { join } from "node:path";
import { type ReceivedDelivery, startReceiver } from "../scripts/receiver";
import { envNumber, ROOT } from "./lib/bench-env";
import {
  type LocalWorker,
  operatorCall,
  prepareWorker,
  publicCall,
  requestJson,
  sleep,
  startWorker,
  stopWorker,
} from "./lib/local-worker";
import { DAY_MS, type SeededCompany, seedCompany, todayStart } from "./lib/plant";

const PORT = envNumber("DUR_PORT", 8796);
const RECEIVER_PORT = envNumber("DUR_RECEIVER_PORT", 9826);
const ROUNDS = envNumber("DUR_ROUNDS", 2);
const WRITE_SECONDS = envNumber("DUR_WRITE_SECONDS", 8);
const FAIL_FOR = envNumber("DUR_FAIL_FOR", 4);
const STALLED_MARGIN_SECONDS = envNumber("DUR_STALLED_MARGIN", 20);
if (!Number.isInteger(STALLED_MARGIN_SECONDS) || STALLED_MARGIN_SECONDS < 1) {
  throw new Error("DUR_STALLED_MARGIN must be a whole number of seconds >= 1");
}
/** The longest wait before round 2 (60 s + 10 % jitter): the latest lost message is re-sent after it plus the margin. */
const LONGEST_FIRST_WAIT_SECONDS = 66;
const DELIVERY_TIMEOUT_MS =
  envNumber(
    "DUR_DELIVERY_TIMEOUT",
    Math.max(120, LONGEST_FIRST_WAIT_SECONDS + STALLED_MARGIN_SECONDS + 34),
  ) * 1000;
const TOKEN = "durability-operator-token";
const RECEIVER_ORIGIN = `http://127.0.0.1:${RECEIVER_PORT}`;
const RESULTS = join(ROOT, "bench", "durability-results.md");
const PATHS = {
  buildDir: ".wrangler/durability-build",
  persistDir: ".wrangler/durability",
  logFile: join(ROOT, ".wrangler", "durability-wrangler.log"),
};
const MACHINES = 4;
const PAST_DAYS = 3;
const STOPS_PER_DAY = 100;

/** What the writers were told, across rounds. */
interface Ledger {
  /** Ids of SKUs whose create answered 200. */
  skus: Set<string>;
  /** Ids of production logs whose create answered 200. */
  logs: Set<string>;
  /** Realtime writes answered 204, by machine id. */
  realtime: Map<number, number>;
  /** Stops whose classification PUT answered 200. */
  classified: Set<number>;
  /** Requests sent and never answered (cut by a kill), by kind. */
  unanswered: Map<string, number>;
  /** Non-2XX answers, by kind and status (none expected). */
  refused: Map<string, number>;
}

/** What the receiver got. */
interface Received {
  /** First delivery of each eventId. */
  first: Map<string, ReceivedDelivery>;
  duplicates: number;
}

/** One kill: when, and what was acknowledged up to it. */
interface Kill {
  round: number;
  afterMs: number;
  acknowledged: number;
  unanswered: number;
  receivedBefore: number;
}

function bump<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

/**
 * Runs one writer until `stopped()` or until the Worker stops answering.
 *
 * @param kind label for the ledger.
 * @param send one write; returns true when it was acknowledged.
 */
async function writer(
  kind: string,
  ledger: Ledger,
  stopped: () => boolean,
  send: (i: number) => Promise<{ ok: boolean; status: number }>,
): Promise<void> {
  for (let i = 0; !stopped(); i += 1) {
    let answer: { ok: boolean; status: number };
    try {
      answer = await send(i);
    } catch {
      // Cut by the kill (connection reset or refused): not acknowledged, maybe applied.
      bump(ledger.unanswered, kind);
      return;
    }
    if (!answer.ok) bump(ledger.refused, `${kind} ${answer.status}`);
  }
}

/** Total acknowledged writes in the ledger. */
function acknowledgedCount(ledger: Ledger): number {
  let realtime = 0;
  for (const n of ledger.realtime.values()) realtime += n;
  return ledger.skus.size + ledger.logs.size + realtime + ledger.classified.size;
}

/** Starts every writer of one round; resolves when all have ended. */
async function writeRound(
  base: string,
  company: SeededCompany,
  round: number,
  ledger: Ledger,
  stops: number[],
  stopped: () => boolean,
): Promise<void> {
  const key = company.key;
  const today = todayStart();
  const writers: Promise<void>[] = [];
  for (let w = 0; w < 3; w += 1) {
    writers.push(
      writer("POST /v1/skus", ledger, stopped, async (i) => {
        const answer = await requestJson<{ id: string }[]>(
          `${base}/v1/skus`,
          "POST",
          { "x-api-key": key },
          [{ sku: `DUR-${round}-${w}-${i}`, name: `Durability ${round}/${w}/${i}` }],
        );
        const id = answer.body?.[0]?.id;
        if (answer.status === 200 && id) ledger.skus.add(id);
        return { ok: answer.status === 200, status: answer.status };
      }),
    );
  }
  for (let w = 0; w < 3; w += 1) {
    writers.push(
      writer("POST /v1/production-logs", ledger, stopped, async (i) => {
        const machine = company.machines[(w + i) % company.machines.length];
        // Days before today: the running 24-hour instance is today's.
        // 500 two-minute slots per writer and round: 4 days at most, all before today.
        const start = today - 10 * DAY_MS + (((round - 1) * 3 + w) * 500 + (i % 500)) * 120_000;
        const answer = await requestJson<{ id: string }[]>(
          `${base}/v1/production-logs`,
          "POST",
          { "x-api-key": key },
          [
            {
              machine: { id: machine?.id },
              sku: { id: company.skus[i % company.skus.length]?.id },
              start: new Date(start).toISOString(),
              end: new Date(start + 60_000).toISOString(),
              count: 10 + (i % 50),
            },
          ],
        );
        const id = answer.body?.[0]?.id;
        if (answer.status === 200 && id) ledger.logs.add(id);
        return { ok: answer.status === 200, status: answer.status };
      }),
    );
  }
  for (const machine of company.machines) {
    writers.push(
      writer("POST /v1/realtime/{machine_id}/sku", ledger, stopped, async (i) => {
        const answer = await requestJson(
          `${base}/v1/realtime/${machine.id}/sku`,
          "POST",
          { "x-api-key": key },
          { skuId: company.skus[i % company.skus.length]?.id, quantity: i },
        );
        if (answer.status === 204) bump(ledger.realtime, machine.id);
        return { ok: answer.status === 204, status: answer.status };
      }),
    );
  }
  for (let w = 0; w < 4; w += 1) {
    writers.push(
      writer("PUT /operator/v1/stops/{stop_id}/classification", ledger, stopped, async () => {
        const stopId = stops.shift();
        if (stopId === undefined) {
          await sleep(100);
          return { ok: true, status: 200 };
        }
        const answer = await requestJson(
          `${base}/operator/v1/stops/${stopId}/classification`,
          "PUT",
          { authorization: `Bearer ${TOKEN}` },
          {
            description: `durability round ${round}`,
            generalCause: { name: "Mechanical" },
            specificCause: { name: `Cause ${stopId % 5}` },
          },
        );
        if (answer.status === 200) ledger.classified.add(stopId);
        return { ok: answer.status === 200, status: answer.status };
      }),
    );
  }
  await Promise.all(writers);
}

/** Pages a search route to the end; returns every row's `id`. */
async function pageIds(
  base: string,
  key: string,
  path: string,
  field: string,
  filters: Record<string, unknown>,
): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page += 1) {
    const body = await publicCall<Record<string, unknown> & { totalPages: number }>(
      base,
      key,
      "POST",
      path,
      { ...filters, page, limit: 100 },
    );
    const rows = (body[field] ?? []) as { id: string }[];
    for (const row of rows) ids.add(row.id);
    if (page >= body.totalPages) return ids;
  }
}

/** Stops (of the past days) that the stops report shows classified. */
async function classifiedStops(base: string, key: string): Promise<Set<number>> {
  const today = todayStart();
  const found = new Set<number>();
  for (let page = 1; ; page += 1) {
    const body = await publicCall<{
      totalPages: number;
      stops: { stop: { id: number }; classification: { id: number | null } }[];
    }>(base, key, "POST", "/v1/reports/stops", {
      startDate: {
        between: {
          start: new Date(today - (PAST_DAYS + 1) * DAY_MS).toISOString(),
          end: new Date(today).toISOString(),
        },
      },
      page,
      limit: 100,
    });
    for (const row of body.stops) if (row.classification.id !== null) found.add(row.stop.id);
    if (page >= body.totalPages) return found;
  }
}

/** One delivery as the operator API lists it. */
interface Delivery {
  id: string;
  eventId: string;
  status: string;
  attempts: { statusCode: number | null; error: string | null; at: string }[];
}

async function listDeliveries(base: string, webhookId: number): Promise<Delivery[]> {
  const out: Delivery[] = [];
  for (let page = 1; ; page += 1) {
    const body = await operatorCall<{ totalPages: number; deliveries: Delivery[] }>(
      base,
      TOKEN,
      "GET",
      `/webhooks/${webhookId}/deliveries?page=${page}&limit=100`,
    );
    out.push(...body.deliveries);
    if (page >= body.totalPages) return out;
  }
}

async function main(): Promise<void> {
  const untilMidnight = todayStart() + DAY_MS - Date.now();
  if (untilMidnight < 10 * 60_000) {
    throw new Error("Less than 10 minutes to 00:00 UTC: the running shift instance would change.");
  }
  console.error("Building the Worker and applying the migrations...");
  prepareWorker(PATHS);
  const startOptions = {
    paths: PATHS,
    port: PORT,
    testScheduled: true,
    vars: {
      OPERATOR_TOKEN: TOKEN,
      WEBHOOK_EXEMPT_ORIGINS: RECEIVER_ORIGIN,
      RATE_LIMIT_ENABLED: "true",
      WEBHOOK_STALLED_MARGIN_SECONDS: String(STALLED_MARGIN_SECONDS),
    },
  };
  let worker: LocalWorker | undefined;
  let receiver: Server | undefined;
  const cleanup = async () => {
    receiver?.close();
    if (worker) await stopWorker(worker);
  };
  process.once("SIGINT", () => {
    void cleanup().then(() => process.exit(130));
  });
  try {
    worker = await startWorker(startOptions);
    console.error(`Worker on ${worker.base}; seeding...`);
    const company = await seedCompany(worker.base, TOKEN, {
      name: "Durability plant",
      machines: MACHINES,
      pastDays: PAST_DAYS,
      stopsPerDay: STOPS_PER_DAY,
      logsPerDay: 0,
      sampleDays: 0,
    });
    const [registration] = await operatorCall<{ id: number }[]>(
      worker.base,
      TOKEN,
      "POST",
      `/companies/${company.id}/webhooks`,
      [
        {
          name: "durability receiver",
          url: `${RECEIVER_ORIGIN}/hooks`,
          eventType: "MachineStopClassificationCreated",
        },
      ],
    );
    if (!registration) throw new Error("no webhook registration");

    const received: Received = { first: new Map(), duplicates: 0 };
    receiver = await startReceiver({
      secrets: [company.webhookSecret],
      port: RECEIVER_PORT,
      host: "127.0.0.1",
      toleranceSeconds: 0,
      failForSeconds: FAIL_FOR,
      log: false,
      onDelivery: (d) => {
        if (d.duplicate) received.duplicates += 1;
        else received.first.set(d.eventId, d);
      },
    });

    const ledger: Ledger = {
      skus: new Set(),
      logs: new Set(),
      realtime: new Map(),
      classified: new Set(),
      unanswered: new Map(),
      refused: new Map(),
    };
    const stops = [...company.stopIds];
    const kills: Kill[] = [];
    for (let round = 1; round <= ROUNDS; round += 1) {
      let stopped = false;
      const began = Date.now();
      const writing = writeRound(worker.base, company, round, ledger, stops, () => stopped);
      const killAfter = Math.round(WRITE_SECONDS * 1000 * (0.6 + 0.4 * Math.random()));
      await sleep(killAfter);
      const receivedBefore = received.first.size;
      await stopWorker(worker, "SIGKILL");
      stopped = true;
      await writing;
      let unanswered = 0;
      for (const n of ledger.unanswered.values()) unanswered += n;
      kills.push({
        round,
        afterMs: Date.now() - began,
        acknowledged: acknowledgedCount(ledger),
        unanswered,
        receivedBefore,
      });
      console.error(
        `Round ${round}: killed after ${killAfter} ms; ${acknowledgedCount(ledger)} writes ` +
          `acknowledged so far, ${received.first.size} events received; restarting...`,
      );
      worker = await startWorker(startOptions);
    }

    // Writes: every acknowledged one must be found.
    const base = worker.base;
    const skuIds = await pageIds(base, company.key, "/v1/skus/filters", "skus", {});
    const logIds = await pageIds(
      base,
      company.key,
      "/v1/production-logs/filters",
      "productionLogs",
      {},
    );
    const classified = await classifiedStops(base, company.key);
    const revisions = new Map<number, number>();
    for (const machine of company.machines) {
      const state = await publicCall<{ revision: number }>(
        base,
        company.key,
        "GET",
        `/v1/realtime/${machine.id}`,
      );
      revisions.set(machine.id, state.revision);
    }
    const missing = (acked: Set<string> | Set<number>, found: Set<string> | Set<number>) =>
      [...acked].filter((id) => !(found as Set<typeof id>).has(id));
    const lostSkus = missing(ledger.skus, skuIds);
    const lostLogs = missing(ledger.logs, logIds);
    const lostClassifications = missing(ledger.classified, classified);
    let realtimeAcked = 0;
    let realtimeFound = 0;
    let realtimeLost = 0;
    for (const machine of company.machines) {
      const acked = ledger.realtime.get(machine.id) ?? 0;
      const revision = revisions.get(machine.id) ?? 0;
      realtimeAcked += acked;
      realtimeFound += Math.min(acked, revision);
      realtimeLost += Math.max(0, acked - revision);
    }

    // Deliveries: sweep until the receiver has every queued event, or time out.
    const began = Date.now();
    let deliveries = await listDeliveries(base, registration.id);
    const ackedStops = () => {
      const delivered = new Set<number>();
      for (const d of received.first.values()) {
        const stopId = (d.event as { stop?: { id?: number } }).stop?.id;
        if (stopId !== undefined) delivered.add(stopId);
      }
      return [...ledger.classified].filter((id) => !delivered.has(id));
    };
    let sweeps = 0;
    while (Date.now() - began < DELIVERY_TIMEOUT_MS) {
      deliveries = await listDeliveries(base, registration.id);
      const waiting = deliveries.filter((d) => !received.first.has(d.eventId)).length;
      const withoutEvent = ackedStops().length;
      process.stderr.write(
        `\r${((Date.now() - began) / 1000).toFixed(0)} s: ${received.first.size} events received, ` +
          `${waiting} queued not received, ${withoutEvent} acknowledged changes without an event   `,
      );
      if (waiting === 0 && withoutEvent === 0) break;
      const sweep = await fetch(`${base}/cdn-cgi/handler/scheduled`);
      await sweep.body?.cancel();
      if (sweep.status !== 200) throw new Error(`the sweeper answered ${sweep.status}`);
      sweeps += 1;
      await sleep(5_000);
    }
    process.stderr.write("\n");
    deliveries = await listDeliveries(base, registration.id);
    const waitedS = ((Date.now() - began) / 1000).toFixed(0);
    const lostDeliveries = deliveries.filter((d) => !received.first.has(d.eventId));
    const changesWithoutEvent = ackedStops();
    const byStatus = new Map<string, number>();
    for (const d of deliveries) bump(byStatus, d.status);

    const lostWrites =
      lostSkus.length + lostLogs.length + realtimeLost + lostClassifications.length;
    const failed = lostWrites > 0 || lostDeliveries.length > 0 || changesWithoutEvent.length > 0;
    const row = (name: string, acked: number, found: number, lost: number) =>
      `| ${name} | ${acked} | ${found} | ${lost} | ${ledger.unanswered.get(name) ?? 0} |`;
    const lines = [
      "# Durability run",
      "",
      `${new Date().toISOString().slice(0, 16)}Z; local \`wrangler dev\` (frozen bundle, ` +
        `\`--persist-to ${PATHS.persistDir}\`), ${spelled(ROUNDS)} SIGKILL of its process group, each ` +
        `60-100 % into ${WRITE_SECONDS} s of writes by 14 concurrent writers, then a restart on the same ` +
        `state. Receiver answering 503 for its first ${FAIL_FOR} s.`,
      "",
      "| kill | after ms | writes acknowledged so far | requests cut so far | events received before it |",
      "|---|---|---|---|---|",
      ...kills.map(
        (k) =>
          `| ${k.round} | ${k.afterMs} | ${k.acknowledged} | ${k.unanswered} | ${k.receivedBefore} |`,
      ),
      "",
      "| write | acknowledged (2XX) | found after restart | lost | cut by a kill (no answer) |",
      "|---|---|---|---|---|",
      row("POST /v1/skus", ledger.skus.size, ledger.skus.size - lostSkus.length, lostSkus.length),
      row(
        "POST /v1/production-logs",
        ledger.logs.size,
        ledger.logs.size - lostLogs.length,
        lostLogs.length,
      ),
      row("POST /v1/realtime/{machine_id}/sku", realtimeAcked, realtimeFound, realtimeLost),
      row(
        "PUT /operator/v1/stops/{stop_id}/classification",
        ledger.classified.size,
        ledger.classified.size - lostClassifications.length,
        lostClassifications.length,
      ),
      "",
      "| webhook deliveries | count |",
      "|---|---|",
      `| queued (deliveries in the outbox) | ${deliveries.length} |`,
      `| delivered (distinct eventIds received) | ${received.first.size} |`,
      `| duplicates received | ${received.duplicates} |`,
      `| lost (queued, never received) | ${lostDeliveries.length} |`,
      `| acknowledged changes without a delivery | ${changesWithoutEvent.length} |`,
      `| status in the outbox at the end | ${[...byStatus].map(([s, n]) => `${s} ${n}`).join(", ")} |`,
      "",
      `Waited ${waitedS} s after the last restart, ${sweeps} sweeps (GET /cdn-cgi/handler/scheduled, ` +
        `every 5 s); stalled margin ${STALLED_MARGIN_SECONDS} s ` +
        `(\`--var WEBHOOK_STALLED_MARGIN_SECONDS:${STALLED_MARGIN_SECONDS}\`).`,
      `Non-2XX answers: ${[...ledger.refused].map(([k, n]) => `${k}: ${n}`).join(", ") || "none"}.`,
      "",
      `Result: ${failed ? "**FAILED**" : "passed"} (target: nothing lost).`,
      "",
    ];
    if (lostDeliveries.length > 0) {
      lines.push("Lost deliveries (first 10), as the operator API lists them:", "");
      for (const d of lostDeliveries.slice(0, 10)) {
        const attempts = d.attempts.map((a) => `${a.at} ${a.statusCode ?? a.error}`).join("; ");
        lines.push(`- ${d.id} (event ${d.eventId}): ${d.status}; attempts: ${attempts || "none"}`);
      }
      lines.push("");
    }
    for (const [name, ids] of [
      ["SKUs", lostSkus],
      ["production logs", lostLogs],
      ["classifications", lostClassifications],
    ] as const) {
      if (ids.length > 0) lines.push(`Lost ${name}: ${ids.slice(0, 10).join(", ")}`);
    }
    const text = lines.join("\n");
    console.log(text);
    writeFileSync(RESULTS, text);
    console.error(`Written to ${RESULTS}; wrangler's output is in ${PATHS.logFile}.`);
    if (failed) process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** "one", "two"... for the summary line. */
function spelled(n: number): string {
  return ["no", "one", "two", "three", "four", "five"][n] ?? String(n);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
