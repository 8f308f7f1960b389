/**
 * Stream events: fan-out latency and resuming, on wrangler's local dev server.
 *
 * 1. applies the migrations to a database of its own (in memory under /dev/shm where there
 *    is one, else on disk) and starts the dev server on port 8796 (BENCH_EV_PORT), rate
 *    limiter on, `EVENTS_MAX_CONNECTIONS` raised to 5,000;
 * 2. seeds a company with 200 machines, a 24-hour shift, a SKU with a nominal speed on every
 *    machine and a key (`realtime.read`/`realtime.write`) whose limit is never reached;
 * 3. scenarios, each with Server-Sent Events subscribers read by Node's `fetch`:
 *    - **1,000 subscribers on one machine**: BENCH_EV_WRITES = 20 realtime writes (a
 *      quantity change each), one every 250 ms; the latency of a delivery is from the moment
 *      the write was sent to the moment a subscriber parsed its event; target p99 <= 500 ms
 *      and every subscriber gets every write, in order;
 *    - **200 machines x 5 subscribers**: one write per machine, 200 writes spread over 4 s;
 *      same measure and checks (each subscriber gets exactly its machine's write);
 *    - **reconnect after 1,000 missed events**: a subscriber notes its last id and leaves;
 *      1,000 writes follow (8 at a time); it comes back with `Last-Event-ID` and must get
 *      every event after its id (ids contiguous), among them the 1,000 writes in order.
 * 4. prints a markdown table; exits 1 when a target is missed. Stops the server (its own
 *    process group, by its id), also on error or Ctrl-C.
 *
 * Run with `npx tsx bench/events.ts`.
 */

import { existsSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { envNumber, ROOT } from "./lib/bench-env";
import { publicCall } from "./lib/local-worker";
import { type RealtimePlant, seedRealtimePlant } from "./lib/realtime-plant";
import {
  applyMigrations,
  spawnDevServer,
  stopDevServer,
  waitForHealthz,
} from "./lib/spawn-dev-server";

const TOKEN = "bench-events-token";
const PORT = envNumber("BENCH_EV_PORT", 8796);
const WRITES = envNumber("BENCH_EV_WRITES", 20);
const BASE = `http://127.0.0.1:${PORT}`;
const MACHINES = 200;
const FAN_OUT = 1_000;
const PER_MACHINE = 5;
const MISSED = 1_000;
/** Target: p99 of the fan-out latency, ms. */
export const P99_TARGET_MS = 500;
const STATE_DIR = existsSync("/dev/shm")
  ? `/dev/shm/production-monitoring-bench-events-${process.pid}`
  : ".wrangler/bench-events";

interface StreamEvent {
  id: number;
  type: string;
  machineId: number | null;
  data: { quantity?: number };
}

const post = <T>(key: string, path: string, body: unknown) =>
  publicCall<T>(BASE, key, "POST", path, body);

type Seed = RealtimePlant;

const seed = () => seedRealtimePlant(BASE, TOKEN, { name: "Events bench", machines: MACHINES });

/** One SSE subscriber: parses events as they arrive and notes when each came. */
class Subscriber {
  readonly events: { event: StreamEvent; at: number }[] = [];
  private readonly controller = new AbortController();
  private reading: Promise<void> = Promise.resolve();

  async open(path: string, key: string, lastEventId?: number): Promise<void> {
    const res = await fetch(`${BASE}${path}`, {
      headers: {
        "x-api-key": key,
        accept: "text/event-stream",
        ...(lastEventId === undefined ? {} : { "last-event-id": String(lastEventId) }),
      },
      signal: this.controller.signal,
    });
    if (res.status !== 200 || !res.body) throw new Error(`${path} -> ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    this.reading = (async () => {
      let buffer = "";
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += decoder.decode(value, { stream: true });
          for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block.split("\n").find((l) => l.startsWith("data: "));
            if (data) this.events.push({ event: JSON.parse(data.slice(6)), at: performance.now() });
          }
        }
      } catch {
        // aborted
      }
    })();
  }

  /** Arrival time of the write that set this quantity; undefined when not (yet) received. */
  arrival(quantity: number): number | undefined {
    return this.events.find((e) => e.event.data.quantity === quantity)?.at;
  }

  writes(): number[] {
    return this.events
      .filter((e) => e.event.type === "segment.updated")
      .map((e) => e.event.data.quantity ?? -1);
  }

  lastId(): number {
    return this.events.at(-1)?.event.id ?? 0;
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.reading;
  }
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Opens subscribers, 50 at a time. */
async function openAll(s: Seed, paths: string[]): Promise<Subscriber[]> {
  const subs: Subscriber[] = [];
  for (let i = 0; i < paths.length; i += 50) {
    const chunk = paths.slice(i, i + 50).map(async (path) => {
      const sub = new Subscriber();
      await sub.open(path, s.key);
      return sub;
    });
    subs.push(...(await Promise.all(chunk)));
  }
  return subs;
}

/** A write changing the quantity of the machine's running segment; returns when it was sent. */
async function write(s: Seed, machineId: number, quantity: number): Promise<number> {
  const sentAt = performance.now();
  await post(s.key, `/v1/realtime/${machineId}/sku`, { quantity });
  return sentAt;
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(100);
  }
  return check();
}

interface Row {
  name: string;
  deliveries: number;
  expected: number;
  p50: number;
  p99: number;
  max: number;
  ok: boolean;
}

/** Writes (machine, quantity) pairs at a pace and measures every subscriber's delivery. */
async function fanOut(
  name: string,
  s: Seed,
  subsByMachine: Map<number, Subscriber[]>,
  writes: { machineId: number; quantity: number }[],
  spacingMs: number,
): Promise<Row> {
  const sent = new Map<number, number>();
  for (const w of writes) {
    sent.set(w.quantity, await write(s, w.machineId, w.quantity));
    await sleep(spacingMs);
  }
  const expected = writes.reduce((n, w) => n + (subsByMachine.get(w.machineId)?.length ?? 0), 0);
  const received = () =>
    writes.reduce(
      (n, w) =>
        n +
        (subsByMachine.get(w.machineId) ?? []).filter(
          (sub) => sub.arrival(w.quantity) !== undefined,
        ).length,
      0,
    );
  await waitUntil(() => received() === expected, 20_000);
  const latencies: number[] = [];
  let inOrder = true;
  for (const [machineId, subs] of subsByMachine) {
    const mine = writes.filter((w) => w.machineId === machineId).map((w) => w.quantity);
    for (const sub of subs) {
      if (JSON.stringify(sub.writes()) !== JSON.stringify(mine)) inOrder = false;
      for (const q of mine) {
        const at = sub.arrival(q);
        const from = sent.get(q);
        if (at !== undefined && from !== undefined) latencies.push(at - from);
      }
    }
  }
  const p99 = percentile(latencies, 99);
  return {
    name,
    deliveries: latencies.length,
    expected,
    p50: percentile(latencies, 50),
    p99,
    max: Math.max(...latencies),
    ok: latencies.length === expected && inOrder && p99 <= P99_TARGET_MS,
  };
}

async function main(): Promise<void> {
  rmSync(resolve(ROOT, STATE_DIR), { recursive: true, force: true });
  applyMigrations(STATE_DIR);
  const child = spawnDevServer({
    port: PORT,
    persistTo: STATE_DIR,
    vars: [`OPERATOR_TOKEN:${TOKEN}`, "EVENTS_MAX_CONNECTIONS:5000"],
  });
  const stop = () => void stopDevServer(child);
  process.once("SIGINT", stop);
  const rows: Row[] = [];
  let resumeLine = "";
  let resumeOk = false;
  try {
    await waitForHealthz(BASE, child);
    const s = await seed();
    const [one] = s.machineIds;
    if (one === undefined) throw new Error("no machines");
    // Every machine runs a SKU: the writes below change its quantity.
    for (const id of s.machineIds) {
      await post(s.key, `/v1/realtime/${id}/sku`, { skuId: s.skuId });
    }

    // 1,000 subscribers on one machine.
    let subs = await openAll(
      s,
      Array.from({ length: FAN_OUT }, () => `/v1/realtime/${one}/events`),
    );
    rows.push(
      await fanOut(
        `${FAN_OUT} subscribers on 1 machine, ${WRITES} writes`,
        s,
        new Map([[one, subs]]),
        Array.from({ length: WRITES }, (_, i) => ({ machineId: one, quantity: 1_000 + i })),
        250,
      ),
    );
    await Promise.all(subs.map((sub) => sub.close()));

    // 200 machines x 5 subscribers.
    const paths = s.machineIds.flatMap((id) =>
      Array.from({ length: PER_MACHINE }, () => `/v1/realtime/${id}/events`),
    );
    subs = await openAll(s, paths);
    const byMachine = new Map<number, Subscriber[]>();
    subs.forEach((sub, i) => {
      const id = s.machineIds[Math.floor(i / PER_MACHINE)] ?? 0;
      byMachine.set(id, [...(byMachine.get(id) ?? []), sub]);
    });
    rows.push(
      await fanOut(
        `${MACHINES} machines x ${PER_MACHINE} subscribers, 1 write each`,
        s,
        byMachine,
        s.machineIds.map((id, i) => ({ machineId: id, quantity: 5_000 + i })),
        20,
      ),
    );
    await Promise.all(subs.map((sub) => sub.close()));

    // Reconnect after 1,000 missed events.
    const machine = s.machineIds[1] ?? one;
    const first = new Subscriber();
    await first.open(`/v1/realtime/${machine}/events`, s.key);
    await write(s, machine, 9_999);
    await waitUntil(() => first.arrival(9_999) !== undefined, 10_000);
    const lastSeen = first.lastId();
    await first.close();
    const quantities = Array.from({ length: MISSED }, (_, i) => 10_000 + i);
    for (let i = 0; i < quantities.length; i += 8) {
      // 8 at a time, each batch in order: the object applies writes to a machine one by one.
      for (const q of quantities.slice(i, i + 8)) await write(s, machine, q);
    }
    const back = new Subscriber();
    const started = performance.now();
    await back.open(`/v1/realtime/${machine}/events`, s.key, lastSeen);
    const lastQuantity = quantities.at(-1) ?? 0;
    await waitUntil(() => back.arrival(lastQuantity) !== undefined, 30_000);
    const replayMs = performance.now() - started;
    const ids = back.events.map((e) => e.event.id);
    const contiguous = ids.every((id, i) => id === lastSeen + 1 + i);
    const got = back.writes();
    resumeOk = contiguous && JSON.stringify(got) === JSON.stringify(quantities);
    resumeLine =
      `| reconnect after ${MISSED} missed writes | ${got.length} writes of ${MISSED} in order, ` +
      `${ids.length} events in all, ids ${contiguous ? "contiguous" : "NOT contiguous"} from ` +
      `${lastSeen + 1} | replayed in ${replayMs.toFixed(0)} ms | ${resumeOk ? "ok" : "MISSED"} |`;
    await back.close();
  } finally {
    await stopDevServer(child);
    rmSync(resolve(ROOT, STATE_DIR), { recursive: true, force: true });
  }

  console.log("\n| scenario | deliveries | p50 ms | p99 ms | max ms | target |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(
      `| ${r.name} | ${r.deliveries} of ${r.expected} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} | ` +
        `${r.max.toFixed(0)} | ${r.ok ? "ok" : `MISSED (p99 <= ${P99_TARGET_MS} ms, all, in order)`} |`,
    );
  }
  console.log("\n| scenario | result | time | target |\n|---|---|---|---|");
  console.log(resumeLine);
  process.exitCode = rows.every((r) => r.ok) && resumeOk ? 0 : 1;
}

await main();
