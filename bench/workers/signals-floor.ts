/**
 * A Worker for `bench/signals-plant.ts`: the floor of sample ingestion in this runtime.
 * `POST /objects/{name}/samples` takes the operator API's body (`{timestamps, values}`,
 * ISO instants), parses it without validation, and hands the arrays to a bare
 * `SignalStore` that writes the same hour blocks (`src/resources/signals/blocks.ts`)
 * with no API around them: no authentication, no D1 lookup, no merge with stored samples.
 * `GET /answer?bytes=n` serves a constant JSON text of n bytes: the transport floor of a
 * query's answer of that size.
 * It is started with the project's wrangler.toml (same bindings), so its classes carry the
 * project's Durable Object class names; none of this is deployed.
 */
import { DurableObject } from "cloudflare:workers";
import {
  encodeSamples,
  MINUTES_FROM_SAMPLES,
  minuteRollups,
  summarize,
} from "../../src/resources/signals/blocks";
import { hourStart } from "../../src/time/units";

interface FloorEnv {
  SIGNAL_STORE: DurableObjectNamespace<SignalStore>;
}

/** The bare store: one block row per hour touched, written as the real store writes it. */
export class SignalStore extends DurableObject<FloorEnv> {
  constructor(ctx: DurableObjectState, env: FloorEnv) {
    super(ctx, env);
    ctx.storage.sql.exec(`CREATE TABLE IF NOT EXISTS blocks (
      signal_id INTEGER NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, sum REAL NOT NULL,
      lo REAL NOT NULL, hi REAL NOT NULL, minutes BLOB, samples BLOB,
      PRIMARY KEY (signal_id, hour))`);
  }

  /** Stores ascending samples; returns how many. */
  store(ts: readonly number[], values: readonly number[]): number {
    let i = 0;
    while (i < ts.length) {
      const hour = hourStart(ts[i] ?? 0);
      let j = i;
      while (j < ts.length && hourStart(ts[j] ?? 0) === hour) j++;
      const t = ts.slice(i, j);
      const v = values.slice(i, j);
      const s = summarize(v);
      this.ctx.storage.sql.exec(
        "INSERT OR REPLACE INTO blocks VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
        hour,
        s.n,
        s.sum,
        s.min,
        s.max,
        t.length > MINUTES_FROM_SAMPLES ? minuteRollups(hour, t, v).buffer : null,
        encodeSamples(hour, t, v).buffer,
      );
      i = j;
    }
    return ts.length;
  }
}

/** Unused here; declared because the project's configuration binds the class. */
export class RealtimeMachine extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class RateLimiter extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class MachineStream extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class CompanyStream extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class ConnectionLeases extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class RealtimeTickets extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class WebhookEndpoint extends DurableObject<FloorEnv> {}
/** Unused here; declared because the project's configuration binds the class. */
export class CompanyExports extends DurableObject<FloorEnv> {}

/** Answers built so far, by size: the floor serves them with no work but sending. */
const answers = new Map<number, string>();

/**
 * The transport floor of a query's answer: a JSON text of `bytes` bytes, built once and
 * then served as a constant, so that its time is what sending that many bytes costs here.
 */
function constantAnswer(bytes: number): Response {
  const size = Number.isInteger(bytes) && bytes > 2 && bytes <= 4_000_000 ? bytes : 2;
  let text = answers.get(size);
  if (text === undefined) {
    text = `"${"x".repeat(size - 2)}"`;
    answers.set(size, text);
  }
  return new Response(text, { headers: { "content-type": "application/json" } });
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response(null, { status: 204 });
    if (url.pathname === "/answer") return constantAnswer(Number(url.searchParams.get("bytes")));
    const match = /^\/objects\/([^/]+)\/samples$/.exec(url.pathname);
    if (!match?.[1] || request.method !== "POST") return new Response(null, { status: 404 });
    const body = (await request.json()) as { timestamps: string[]; values: number[] };
    const ts = body.timestamps.map((s) => Date.parse(s));
    const ns = env.SIGNAL_STORE;
    const accepted = await ns.get(ns.idFromName(match[1])).store(ts, body.values);
    return Response.json({ accepted });
  },
} satisfies ExportedHandler<FloorEnv>;
