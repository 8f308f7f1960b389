/**
 * `tsx bench/lib/dev-server.ts --port <n> --persist-to <dir> [--config <file>] [--script <entry>] [--var NAME:value]...`
 *
 * The Worker on wrangler's local development server, started through wrangler's
 * own API (`unstable_startWorker`, the engine behind `wrangler dev`: the same
 * Miniflare, workerd, bindings and local D1 / Durable Objects / Queues) with two
 * debugging aids off that the `wrangler dev` command line cannot turn off:
 *
 * - the DevTools inspector: `wrangler dev` enables the DevTools Network domain on
 *   the runtime and forwards every runtime message to its Node process as a
 *   loopback HTTP request, three messages per D1 query or Durable Object call
 *   (about 1.5 ms of CPU per subrequest on this machine, measured with
 *   `bench/lib/cpu.ts`). No deployed Worker pays that, and it falls on exactly the
 *   routes whose cost the benchmarks compare with a bare route;
 * - file watching: an edit anywhere in the tree rebuilds and reloads the Worker
 *   in the middle of a run, dropping requests in flight.
 *
 * `BENCH_INSPECTOR_PORT=<n>` turns the inspector back on at that port, to take a CPU
 * profile of the Worker (Chrome DevTools, or the `Profiler` domain over its WebSocket);
 * numbers measured so are not comparable with the others.
 *
 * Benchmarks spawn it with `spawnDevServer` (`./spawn-dev-server.ts`), in its
 * own process group, as they would spawn `wrangler dev`, and stop it with
 * SIGTERM. It prints `ready on <url>` once the Worker answers.
 */
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const { values } = parseArgs({
  options: {
    config: { type: "string", default: "wrangler.toml" },
    port: { type: "string" },
    ip: { type: "string", default: "127.0.0.1" },
    "persist-to": { type: "string" },
    var: { type: "string", multiple: true, default: [] },
    script: { type: "string" },
  },
});

if (values.port === undefined || values["persist-to"] === undefined) {
  throw new Error("usage: dev-server.ts --port <n> --persist-to <dir> [--var NAME:value]...");
}

/** `NAME:value` pairs as wrangler's `--var` takes them, as plain-text bindings. */
const bindings = Object.fromEntries(
  values.var.map((pair) => {
    const at = pair.indexOf(":");
    if (at <= 0) throw new Error(`--var ${pair}: expected NAME:value`);
    return [pair.slice(0, at), { type: "plain_text" as const, value: pair.slice(at + 1) }];
  }),
);

const INSPECTOR_PORT = process.env.BENCH_INSPECTOR_PORT;

const worker = await unstable_startWorker({
  config: values.config,
  ...(values.script === undefined ? {} : { entrypoint: values.script }),
  bindings,
  sendMetrics: false,
  dev: {
    inspector: INSPECTOR_PORT ? { port: Number(INSPECTOR_PORT) } : false,
    watch: false,
    remote: false,
    persist: values["persist-to"],
    logLevel: "warn",
    server: { hostname: values.ip, port: Number(values.port) },
  },
});
const url = await worker.url;
console.log(`ready on ${url.href}`);

const stop = () => {
  worker.dispose().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
