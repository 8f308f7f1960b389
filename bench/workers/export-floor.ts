/**
 * The project's Worker for `bench/exports.ts`, with two routes that are not deployed:
 *
 * - `POST /__bench/export-floor` with `{companyId, request}` (a `POST /v1/exports` body):
 *   the floor of an export, the same rows read by the same functions in the same order
 *   (`prepareExport`, then `readBatch` batch after batch, through a D1 session that may use
 *   a replica, as the exports object reads them), with nothing encoded or written. Answers
 *   `{rows, batches, ms}`;
 *   With `{encode: true}`, each batch is also encoded in the request's format by the
 *   exports' own encoder, into a sink that only counts the bytes (nothing written): the
 *   floor plus the encoding, to tell its cost from the upload's;
 * - `POST /__bench/r2-write` with `{bytes}`: that many bytes (CSV-like text) written to R2
 *   through the exports' own file writer (its parts, or `partBytes` when given), pushed
 *   256 KiB at a time, nothing encoded: the upload's own cost;
 * - `GET /__bench/export/{companyId}/{id}`: what the company's exports object keeps of an
 *   export, its steps and the most bytes a step held included (`ExportRecord`).
 *
 * Every other request goes to the project's Worker; the classes are the project's.
 */
import { openSession } from "../../src/db/session";
import { companyShard } from "../../src/db/shards";
import { namedStub } from "../../src/durable/named-stub";
import type { Env } from "../../src/env";
import { newEncoder } from "../../src/exports/encoders";
import type { CompanyExportsRpc } from "../../src/exports/exports-rpc";
import { prepareExport } from "../../src/exports/prepare";
import { R2FileWriter } from "../../src/exports/r2-file";
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

/** Reads every row of an export's request; encodes them, into nothing, when asked. */
async function floor(
  env: Env,
  companyId: number,
  body: unknown,
  encode: boolean,
): Promise<Response> {
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
  let bytes = 0;
  const sink = {
    push: async (chunk: Uint8Array) => {
      bytes += chunk.length;
    },
  };
  const encoder = encode ? await newEncoder(spec.format, columns, sink) : null;
  while (cursor !== null) {
    const { batch, next } = await readBatch({ env, scope }, spec, cursor, columns);
    await encoder?.write(batch);
    rows += batch.length;
    batches += 1;
    cursor = next;
  }
  await encoder?.finish();
  return Response.json({ rows, batches, bytes, ms: performance.now() - started });
}

/** Writes `bytes` bytes of CSV-like text to R2 through the exports' file writer, then deletes it. */
async function r2Write(env: Env, bytes: number, partBytes?: number): Promise<Response> {
  const chunk = new TextEncoder().encode(
    "0f8e2f4c-5a6b-4c7d-8e9f-0a1b2c3d4e5f,7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f,power,2025-06-01T00:00:00.000Z,50.25\r\n".repeat(
      2_400,
    ),
  );
  const key = `exports/bench/${crypto.randomUUID()}/part-00001.csv`;
  const started = performance.now();
  const writer = new R2FileWriter(env.HISTORY, key, "text/csv", undefined, partBytes);
  for (let at = 0; at < bytes; at += chunk.length) {
    await writer.push(chunk.subarray(0, Math.min(chunk.length, bytes - at)));
  }
  const written = await writer.close();
  const ms = performance.now() - started;
  await env.HISTORY.delete(key);
  return Response.json({ bytes: written, ms });
}

const worker = project.default;

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/export-floor" && request.method === "POST") {
      const {
        companyId,
        request: body,
        encode,
      } = (await request.json()) as {
        companyId: number;
        request: unknown;
        encode?: boolean;
      };
      return floor(env, companyId, body, encode === true);
    }
    if (url.pathname === "/__bench/r2-write" && request.method === "POST") {
      const { bytes, partBytes } = (await request.json()) as { bytes: number; partBytes?: number };
      return r2Write(env, bytes, partBytes);
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
