/**
 * Throughput of one scenario with autocannon, with the CPU it cost: a warm-up run,
 * then the measured run, reading the CPU time of the server's process group (and
 * of this process, which runs autocannon) around the measured run only.
 */
import { groupCpuMs } from "./cpu";

/** One request of a scenario that cycles through several (autocannon's `requests`). */
export interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** The subset of autocannon's programmatic options used here (it ships no types). */
export interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: AutocannonRequest[];
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  "2xx": number;
}

type Autocannon = (options: AutocannonOptions) => Promise<AutocannonResult>;

/** One measured scenario. */
export interface Measure {
  name: string;
  /** Mean requests per second of the measured run. */
  requestsPerSecond: number;
  /** Latency percentiles of the measured run, ms. */
  p50: number;
  p99: number;
  /** Requests answered in the measured run. */
  requests: number;
  /** Non-2XX answers and errors (connection errors and time-outs), warm-up included. */
  non2xx: number;
  errors: number;
  /** 2XX answers in warm-up and measurement together. */
  ok: number;
  /** CPU time of the server's process group and of this process per request, ms. */
  cpuMsPerRequest: number;
}

let loaded: Autocannon | undefined;

/**
 * Runs `options` for `warmupSeconds` (none when 0), then for `durationSeconds`, measured.
 *
 * @param pgid the server's process group (see `spawnDevServer`).
 * @param connections concurrent connections of both runs.
 */
export async function measureThroughput(
  name: string,
  pgid: number,
  options: Omit<AutocannonOptions, "duration" | "connections">,
  run: { connections: number; warmupSeconds: number; durationSeconds: number },
): Promise<Measure> {
  loaded ??= ((await import("autocannon")) as { default: Autocannon }).default;
  const autocannon = loaded;
  const warm =
    run.warmupSeconds > 0
      ? await autocannon({ ...options, connections: run.connections, duration: run.warmupSeconds })
      : { non2xx: 0, errors: 0, timeouts: 0, "2xx": 0 };
  const cpuBefore = groupCpuMs(pgid);
  const r = await autocannon({
    ...options,
    connections: run.connections,
    duration: run.durationSeconds,
  });
  const cpuMs = groupCpuMs(pgid) - cpuBefore;
  return {
    name,
    requestsPerSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx + warm.non2xx,
    errors: r.errors + r.timeouts + warm.errors + warm.timeouts,
    ok: r["2xx"] + warm["2xx"],
    cpuMsPerRequest: cpuMs / Math.max(1, r.requests.total),
  };
}
