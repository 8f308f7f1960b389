/**
 * A Worker for `bench/storage-floor.ts`: the least a realtime write can cost in
 * this runtime. It is started with the project's wrangler.toml (same bindings),
 * so its classes carry the project's Durable Object class names; none of this
 * is deployed.
 *
 * - `GET /healthz`: 204, no work (the floor, as in the real Worker).
 * - `POST /objects/{name}?writes=0|1|2`: calls the object `name`, which applies
 *   that many SQLite writes (an INSERT of a 200-byte row, then an UPDATE of a
 *   counter) and answers; 204. `writes=0` is the call alone.
 */
import { DurableObject } from "cloudflare:workers";

interface StorageFloorEnv {
  REALTIME_MACHINE: DurableObjectNamespace<RealtimeMachine>;
}

/** The object under test, named as the project's realtime class so the bindings match. */
export class RealtimeMachine extends DurableObject<StorageFloorEnv> {
  constructor(ctx: DurableObjectState, env: StorageFloorEnv) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);
      INSERT OR IGNORE INTO counter VALUES (1, 0);`);
  }

  /** Applies `writes` SQLite writes (0, 1 or 2); they commit before the answer leaves. */
  async write(writes: number): Promise<void> {
    if (writes >= 1)
      this.ctx.storage.sql.exec("INSERT INTO rows (body) VALUES (?)", "x".repeat(200));
    if (writes >= 2) this.ctx.storage.sql.exec("UPDATE counter SET n = n + 1 WHERE id = 1");
  }
}

/** Unused here; declared because the project's configuration binds the class. */
export class RateLimiter extends DurableObject<StorageFloorEnv> {}

/** Unused here; declared because the project's configuration binds the class. */
export class SignalStore extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class MachineStream extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class CompanyStream extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class ConnectionLeases extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class RealtimeTickets extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class WebhookEndpoint extends DurableObject<StorageFloorEnv> {}

/** Bound by wrangler.toml; unused here. */
export class CompanyExports extends DurableObject<StorageFloorEnv> {}

export default {
  async fetch(request: Request, env: StorageFloorEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return new Response(null, { status: 204 });
    const match = /^\/objects\/([^/]+)$/.exec(url.pathname);
    if (!match?.[1] || request.method !== "POST") return new Response(null, { status: 404 });
    const ns = env.REALTIME_MACHINE;
    await ns.get(ns.idFromName(match[1])).write(Number(url.searchParams.get("writes") ?? 1));
    return new Response(null, { status: 204 });
  },
} satisfies ExportedHandler<StorageFloorEnv>;
