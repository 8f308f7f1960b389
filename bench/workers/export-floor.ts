/**
 * The project's Worker for `bench/exports.ts`, with two routes that are not deployed:
 *
 * - `POST /__bench/export-floor` with `{companyId, request}` (a `POST /v1/exports` body):
 *   the floor of an export, the same rows read by the same functions in the same order
 *   (`prepareExport`, then `readBatch` batch after batch, through a D1 session that may use
 *   a replica, as the exports object reads them), with nothing encoded or written. Answers
 *   `{rows, batches, ms}`;
 * - `GET /__bench/export/{companyId}/{id}`: what the company's exports object keeps of an
 *   export, its steps and the most bytes a step held included (`ExportRecord`).
 *
 * Every other request goes to the project's Worker; the classes are the project's.
 */
import { openSession } from "../../src/db/session";
import { companyShard } from "../../src/db/shards";
import { namedStub } from "../../src/durable/named-stub";
import type { Env } from "../../src/env";
import type { CompanyExportsRpc } from "../../src/exports/exports-rpc";
import { prepareExport } from "../../src/exports/prepare";
import { ExportRequestSchema } from "../../src/exports/schemas";
import { type Cursor, exportColumns, firstCursor, readBatch } from "../../src/exports/sources";
import * as project from "../../src/index";
import type { WebhookMessage } from "../../src/webhooks/webhook-outbox";

export {
  CompanyExports,
  CompanyStream,
  ConnectionLeases,
  MachineStream,
  RateLimiter,
  RealtimeMachine,
  RealtimeTickets,
  SignalStore,
  WebhookEndpoint,
} from "../../src/index";

/** Reads every row of an export's request without encoding them. */
async function floor(env: Env, companyId: number, body: unknown): Promise<Response> {
  const request = ExportRequestSchema.parse(body);
  const shard = await companyShard(env, companyId);
  const row = await shard.binding
    .prepare("SELECT name, timezone FROM companies WHERE id = ?1")
    .bind(companyId)
    .first<{ name: string; timezone: string }>();
  if (!row) return new Response("no company", { status: 404 });
  const session = openSession(shard.binding, shard.name, "first-unconstrained", null);
  const scope = {
    get db() {
      return session.db;
    },
    companyId,
    companyName: row.name,
    timezone: row.timezone,
  };
  const started = performance.now();
  const { spec } = await prepareExport(env, scope, request, Date.now());
  const columns = exportColumns(spec);
  let cursor: Cursor | null = firstCursor(spec);
  let rows = 0;
  let batches = 0;
  while (cursor !== null) {
    const { batch, next } = await readBatch({ env, scope }, spec, cursor, columns);
    rows += batch.length;
    batches += 1;
    cursor = next;
  }
  return Response.json({ rows, batches, ms: performance.now() - started });
}

const worker = project.default;

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/export-floor" && request.method === "POST") {
      const { companyId, request: body } = (await request.json()) as {
        companyId: number;
        request: unknown;
      };
      return floor(env, companyId, body);
    }
    const kept = /^\/__bench\/export\/(\d+)\/([\w-]+)$/.exec(url.pathname);
    if (kept) {
      const companyId = Number(kept[1]);
      const stub: DurableObjectStub<CompanyExportsRpc> = namedStub(
        env.COMPANY_EXPORTS,
        String(companyId),
      );
      return Response.json(await stub.describe(companyId, kept[2] ?? ""));
    }
    return worker.fetch(request, env, ctx);
  },
  queue: worker.queue,
  scheduled: worker.scheduled,
} satisfies ExportedHandler<Env, WebhookMessage>;
