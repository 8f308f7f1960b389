/**
 * Another company's requests beside heavy work (docs/benchmarks.md, "Fair share"): a
 * neighbour company of its own, whose `GET /v1/machines` the benchmark sends one at a time,
 * back to back, alone (the floor) and while the work runs, to read what the work costs
 * the others of the isolate (median and p90 of the neighbour's answers).
 */
import { ok } from "../../scripts/lib/http";
import { connectOperator } from "../../scripts/lib/operator-api";
import { issueBenchKey } from "./bench-key";
import { percentile } from "./local-worker";

/** The neighbour's latencies, ms: how many, median, p90, slowest. */
export interface ProbeStats {
  count: number;
  median: number;
  p90: number;
  max: number;
}

/** Median, p90 and slowest of latencies (ms). */
export function probeStats(latencies: readonly number[]): ProbeStats {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    median: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** A neighbour: its key, and its probe (one timed `GET /v1/machines`, ms). */
export interface Neighbour {
  key: string;
  probe(): Promise<number>;
}

/** Longest a probe waits for its answer; one not answered by then counts as this long, ms. */
export const PROBE_TIMEOUT_MS = 120_000;

/**
 * The neighbour of a key made before (a benchmark that reuses its state).
 *
 * @throws Error from a probe answered with another status than 200.
 */
export function neighbourOf(base: string, key: string): Neighbour {
  return {
    key,
    async probe() {
      const started = performance.now();
      try {
        const res = await fetch(`${base}/v1/machines`, {
          headers: { "x-api-key": key },
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`neighbour GET /v1/machines -> ${res.status}`);
      } catch (error) {
        if (!(error instanceof DOMException && error.name === "TimeoutError")) throw error;
        // Not answered in time: as slow as the wait, at least.
      }
      return performance.now() - started;
    },
  };
}

/**
 * Creates a company with 20 machines and a `machines.read` key (a rate limit the runs never
 * reach), through the operator API of the server at `base`.
 *
 * @throws Error when a call is refused, or later when a probe is not a 200.
 */
export async function createNeighbour(base: string, token: string): Promise<Neighbour> {
  const { api } = connectOperator(base, token);
  const [company] = ok(
    "POST",
    await api.POST("/companies", { body: [{ name: "Neighbour", timezone: "UTC" }] }),
  );
  if (!company) throw new Error("no neighbour company");
  const path = { params: { path: { company_id: company.id } } };
  ok(
    "POST",
    await api.POST("/companies/{company_id}/machines", {
      ...path,
      body: Array.from({ length: 20 }, (_, i) => ({ name: `Neighbour ${i + 1}` })),
    }),
  );
  const key = await issueBenchKey({ api }, company.id, ["machines.read"], { name: "neighbour" });
  return neighbourOf(base, key);
}

/**
 * The neighbour alone: `warmups` probes, then `runs` probes, one after the other.
 *
 * @returns the stats of the `runs` probes.
 */
export async function neighbourFloor(
  neighbour: Neighbour,
  runs: number,
  warmups = 5,
): Promise<ProbeStats> {
  for (let i = 0; i < warmups; i++) await neighbour.probe();
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) latencies.push(await neighbour.probe());
  return probeStats(latencies);
}

/**
 * Runs `work` while the neighbour's probes run back to back, one at a time, until `work`
 * ends.
 *
 * @param skipMs probes sent in the first `skipMs` of the work are left out of the stats
 *   (work that starts after a known delay, as an alarm set 10 s ahead).
 * @returns `work`'s value and the stats of the probes answered meanwhile.
 */
export async function probeDuring<T>(
  neighbour: Neighbour,
  work: () => Promise<T>,
  skipMs = 0,
): Promise<{ value: T; probes: ProbeStats }> {
  const latencies: number[] = [];
  const started = performance.now();
  let done = false;
  const prober = (async () => {
    while (!done) {
      const sent = performance.now();
      const ms = await neighbour.probe();
      if (sent - started >= skipMs) latencies.push(ms);
    }
  })();
  // A failed probe fails the run where it is awaited, not as an unhandled rejection.
  prober.catch(() => undefined);
  try {
    const value = await work();
    done = true;
    await prober;
    return { value, probes: probeStats(latencies) };
  } finally {
    done = true;
    await prober.catch(() => undefined);
  }
}
