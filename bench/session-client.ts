/**
 * `npm run bench` (bench/all.ts): what a request pays for its Drizzle client now that every
 * request works in a D1 session of its own (src/db/session.ts), so that its client cannot
 * be shared by the isolate's requests any more (src/db/client.ts).
 *
 * Times, in this Node process (V8, like workerd; workerd's own clock does not advance
 * during CPU work, so it cannot time this):
 * - `drizzle(d1, { schema })` per request, the naive way: Drizzle walks the whole schema
 *   for its relational config every time;
 * - `createSessionDb(d1)`, what a request does: the config computed once per isolate, then
 *   a dialect, a session and one query builder per table.
 *
 * Target: a request's client costs under half the naive one and under 25 µs (a request
 * of the API costs milliseconds of CPU). The first call of an isolate, cold, is shown too:
 * it computes the config, which every later request reuses. Prints a
 * markdown table with the machine's load, writes it to bench/session-client-results.md, and
 * exits 1 when the target is missed.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { drizzle } from "drizzle-orm/d1";
import { createSessionDb } from "../src/db/client";
import * as schema from "../src/db/schema";
import { ROOT } from "./lib/bench-env";

const RUNS = 2_000;
const ROUNDS = 5;

/** Statements are never sent: only the construction is timed. */
const d1 = {
  prepare: () => {
    throw new Error("not sent");
  },
  batch: () => Promise.reject(new Error("not sent")),
} as unknown as D1Database;

/** Median over rounds of the mean µs per call of `make`. */
function microsPerCall(make: () => unknown): number {
  const rounds: number[] = [];
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < RUNS; i++) if (make()) sink++;
    rounds.push(Number(process.hrtime.bigint() - start) / 1_000 / RUNS);
  }
  if (sink !== ROUNDS * RUNS) throw new Error("a client was not made");
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(ROUNDS / 2)] ?? Number.NaN;
}

// The first call of an isolate: cold code, and the config computed.
const coldStart = process.hrtime.bigint();
createSessionDb(d1);
const cold = Number(process.hrtime.bigint() - coldStart) / 1_000;

// Warm-up (JIT).
microsPerCall(() => drizzle(d1, { schema }));
microsPerCall(() => createSessionDb(d1));

const naive = microsPerCall(() => drizzle(d1, { schema }));
const perRequest = microsPerCall(() => createSessionDb(d1));
const share = perRequest / naive;
const met = share < 0.5 && perRequest < 25;
const [load1] = loadavg();

const table = [
  "| Drizzle client per request | µs of CPU per request (median of 5 x 2,000) |",
  "|---|---:|",
  `| \`drizzle(d1, { schema })\` (walks the schema) | ${naive.toFixed(1)} |`,
  `| \`createSessionDb(d1)\` (config once per isolate) | ${perRequest.toFixed(2)} |`,
  `| \`createSessionDb(d1)\`, first call of an isolate (cold, computes the config) | ${cold.toFixed(0)} |`,
  "",
  `Per-request client: ${(share * 100).toFixed(1)} % of the naive one (target < 50 % and < 25 µs): ` +
    `${met ? "met" : "MISSED"}. Node ${process.version}, ${cpus().length} cores, load ` +
    `${load1?.toFixed(1) ?? "?"}.`,
].join("\n");
console.log(table);
writeFileSync(join(ROOT, "bench/session-client-results.md"), `${table}\n`);
if (!met) process.exitCode = 1;
