/**
 * `Idempotency-Key`: safe retries of the public calls that create or change something
 * (Stripe's convention; draft-ietf-httpapi-idempotency-key-header). A key is locked per
 * credential in D1 (`idempotency_keys`), the answer stored for `IDEMPOTENCY_TTL_MS` (large
 * ones gzip-compressed in `idempotency_chunks`, written in the batch that marks the key done)
 * and replayed to a retry of the same request; what is and is not stored, and the 409/422
 * answers: docs/api-guide.md ("Safe retries: `Idempotency-Key`").
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { logError } from "../observability/log";
import { DAY_MS, MINUTE_MS } from "../time/units";
import { ApiError } from "./errors";

/** Request header carrying the key. */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
/** Response header of a replayed response. */
export const REPLAYED_HEADER = "Idempotent-Replayed";
/** How long a response is kept for retries: 24 hours. */
export const IDEMPOTENCY_TTL_MS = DAY_MS;
/** A request holding a key longer than this is taken to have died (its lock can be taken over). */
const LOCK_TIMEOUT_MS = MINUTE_MS;
/** Longest key accepted. */
export const MAX_KEY_LENGTH = 255;
/** Largest body kept as text in the key's row, in UTF-8 bytes (D1 allows 2 MB per row). */
const MAX_INLINE_BODY_BYTES = 1_000_000;
/** Largest piece of a compressed body, in bytes (one `idempotency_chunks` row). */
const CHUNK_BYTES = 1_000_000;
/**
 * Most pieces of one compressed body (32 MB). Unreachable by the public routes: a
 * create's answer is its body (at most 4 MiB) plus ids and timestamps. Above it the key
 * is released and the failure logged, rather than a D1 batch of that size attempted.
 */
const MAX_CHUNKS = 32;

/**
 * An `Idempotency-Key` this API takes, as a regular expression (ECMA-262, the one the OpenAPI
 * document states too): 1 to {@link MAX_KEY_LENGTH} printable ASCII characters, not starting
 * or ending with a space (HTTP strips those from a header's value before it arrives).
 */
export const KEY_PATTERN_SOURCE = `^[\\x21-\\x7E](?:[\\x20-\\x7E]{0,${MAX_KEY_LENGTH - 2}}[\\x21-\\x7E])?$`;
const KEY_PATTERN = new RegExp(KEY_PATTERN_SOURCE);
/** Statuses whose response is not kept (see the module comment). */
const isStorable = (status: number) => status < 500 && status !== 409 && status !== 429;
/** Response headers that belong to one answer, not to the stored response. */
const UNSTORED_HEADERS = new Set([
  "x-request-id",
  "ratelimit",
  "ratelimit-policy",
  "retry-after",
  "set-cookie",
  REPLAYED_HEADER.toLowerCase(),
]);

interface KeyRow {
  fingerprint: string;
  state: "in_flight" | "done";
  lock_token: string | null;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/** JSON with object keys sorted, so that equal values give equal text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * What makes two requests "the same": method, path, query and body (canonical
 * JSON when it parses, else the raw text), as lowercase hex SHA-256.
 */
async function fingerprintOf(c: Context<AppEnv>): Promise<string> {
  const url = new URL(c.req.url);
  const text = await c.req.text();
  let body = text;
  if (text.trim() !== "") {
    try {
      body = canonicalJson(JSON.parse(text));
    } catch {
      // Not JSON: compared byte for byte.
    }
  }
  const data = new TextEncoder().encode(`${c.req.method} ${url.pathname}${url.search}\n${body}`);
  const digest = await crypto.subtle.digest("SHA-256", data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** gzip of `bytes` (CompressionStream, RFC 1952). */
async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A BLOB column as D1 returns it (an array of bytes, or a buffer). */
function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (Array.isArray(value)) return Uint8Array.from(value as number[]);
  throw new Error("idempotency chunk is not a BLOB");
}

/** The body of a stored response kept in pieces: read in order and decompressed as streamed. */
async function chunkedBody(
  d1: D1Database,
  credentialId: string,
  key: string,
): Promise<ReadableStream<Uint8Array>> {
  const { results } = await d1
    .prepare(
      "SELECT data FROM idempotency_chunks WHERE credential_id = ?1 AND key = ?2 ORDER BY seq",
    )
    .bind(credentialId, key)
    .all<{ data: unknown }>();
  if (results.length === 0) throw new Error("idempotency chunks missing for a stored response");
  return new Blob(results.map((r) => bytesOf(r.data)))
    .stream()
    .pipeThrough(new DecompressionStream("gzip"));
}

async function replay(
  row: KeyRow,
  d1: D1Database,
  credentialId: string,
  key: string,
): Promise<Response> {
  const headers = new Headers(
    row.headers ? (JSON.parse(row.headers) as Record<string, string>) : {},
  );
  headers.set(REPLAYED_HEADER, "true");
  const status = row.status ?? 200;
  if ([204, 205, 304].includes(status)) return new Response(null, { status, headers });
  // A done row keeps its body as text ("" when empty); null means it is in pieces.
  if (row.body === null) {
    return new Response(await chunkedBody(d1, credentialId, key), { status, headers });
  }
  return new Response(row.body === "" ? null : row.body, { status, headers });
}

/** This request's hold on a key: where the key lives and the token that proves the lock. */
interface KeyLock {
  d1: D1Database;
  credentialId: string;
  key: string;
  token: string;
}

/**
 * Checks the header's value against {@link KEY_PATTERN_SOURCE}.
 *
 * @throws ApiError 422 (`value_error` at `header.Idempotency-Key`) when it does not match.
 */
function assertWellFormedKey(key: string): void {
  if (KEY_PATTERN.test(key)) return;
  throw new ApiError(422, [
    {
      loc: ["header", IDEMPOTENCY_HEADER],
      msg: `Must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters, not starting or ending with a space`,
      type: "value_error",
    },
  ]);
}

/**
 * Takes the key for this request in one D1 round trip: drops the credential's expired keys
 * (`expires_at`, epoch ms), inserts the key as `in_flight` with `lock.token` (or takes over an
 * abandoned lock of the same request, older than {@link LOCK_TIMEOUT_MS}), and reads the row
 * as it now is. The lock is this request's when the row's `lock_token` is `lock.token`.
 *
 * @param now the request's instant, epoch ms.
 * @throws Error when the row is missing after its upsert (a D1 fault).
 */
async function takeKey(
  lock: KeyLock,
  companyId: number,
  fingerprint: string,
  now: number,
): Promise<KeyRow> {
  const { d1, credentialId, key, token } = lock;
  const [, , found] = await d1.batch<KeyRow>([
    d1
      .prepare(
        "DELETE FROM idempotency_keys WHERE credential_id = ?1 AND expires_at <= CAST(?2 AS INTEGER)",
      )
      .bind(credentialId, now),
    d1
      .prepare(
        `INSERT INTO idempotency_keys (credential_id, key, company_id, fingerprint, state,
             lock_token, locked_at, created_at, expires_at)
           VALUES (?1, ?2, CAST(?3 AS INTEGER), ?4, 'in_flight', ?5, CAST(?6 AS INTEGER),
             CAST(?6 AS INTEGER), CAST(?7 AS INTEGER))
           ON CONFLICT (credential_id, key) DO UPDATE SET lock_token = excluded.lock_token,
             locked_at = excluded.locked_at, expires_at = excluded.expires_at
           WHERE idempotency_keys.state = 'in_flight'
             AND idempotency_keys.fingerprint = excluded.fingerprint
             AND idempotency_keys.locked_at <= CAST(?8 AS INTEGER)`,
      )
      .bind(
        credentialId,
        key,
        companyId,
        fingerprint,
        token,
        now,
        now + IDEMPOTENCY_TTL_MS,
        now - LOCK_TIMEOUT_MS,
      ),
    d1
      .prepare(
        `SELECT fingerprint, state, lock_token, status, headers, body FROM idempotency_keys
           WHERE credential_id = ?1 AND key = ?2`,
      )
      .bind(credentialId, key),
  ]);
  const row = found?.results[0];
  if (!row) throw new Error("idempotency key row missing after its upsert");
  return row;
}

/**
 * The answer to a request whose key another request holds or held: the stored response
 * replayed when that request is done and was the same request.
 *
 * @throws ApiError 422 (`idempotency_key_reused`) when the key came with another request
 *   (fingerprint); 409 with `Retry-After: 1` while the first request is still running.
 */
function answerForKeyHeldElsewhere(
  row: KeyRow,
  fingerprint: string,
  lock: KeyLock,
): Promise<Response> {
  if (row.fingerprint !== fingerprint) {
    throw new ApiError(422, [
      {
        loc: ["header", IDEMPOTENCY_HEADER],
        msg:
          "This Idempotency-Key was used with a different request (method, path or body) " +
          "in the last 24 hours: use a new key for a new request",
        type: "idempotency_key_reused",
      },
    ]);
  }
  if (row.state === "in_flight") {
    throw new ApiError(
      409,
      "A request with this Idempotency-Key is still being processed: retry later",
      { "Retry-After": "1" },
    );
  }
  return replay(row, lock.d1, lock.credentialId, lock.key);
}

/** Gives the key up (deletes its row while this request still holds the lock). */
async function releaseKey({ d1, credentialId, key, token }: KeyLock): Promise<void> {
  await d1
    .prepare(
      "DELETE FROM idempotency_keys WHERE credential_id = ?1 AND key = ?2 AND lock_token = ?3",
    )
    .bind(credentialId, key, token)
    .run();
}

/**
 * Keeps `res` for retries and marks the key done, in one D1 batch (one transaction: a replay
 * sees every piece or none). The status and the headers but {@link UNSTORED_HEADERS} are
 * kept; a body of up to {@link MAX_INLINE_BODY_BYTES} as text in the key's row, a larger one
 * gzip-compressed in pieces of {@link CHUNK_BYTES} (`idempotency_chunks`), each written only
 * while this request still holds the lock.
 *
 * @throws Error when the compressed body needs more than {@link MAX_CHUNKS} pieces, or D1 fails.
 */
async function storeResponse(lock: KeyLock, res: Response): Promise<void> {
  const { d1, credentialId, key, token } = lock;
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!UNSTORED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  });
  const bytes = new Uint8Array(await res.clone().arrayBuffer());
  const inline = bytes.byteLength <= MAX_INLINE_BODY_BYTES;
  const compressed = inline ? null : await gzip(bytes);
  const chunks: Uint8Array[] = [];
  for (let at = 0; compressed && at < compressed.byteLength; at += CHUNK_BYTES) {
    chunks.push(compressed.subarray(at, at + CHUNK_BYTES));
  }
  if (chunks.length > MAX_CHUNKS) {
    throw new Error(`response of ${bytes.byteLength} bytes is too large to keep`);
  }
  // Pieces first, each only while this request still holds the lock; then the row is
  // marked done.
  await d1.batch([
    ...chunks.map((chunk, seq) =>
      d1
        .prepare(
          `INSERT INTO idempotency_chunks (credential_id, key, seq, data)
               SELECT ?1, ?2, CAST(?4 AS INTEGER), ?5 WHERE EXISTS (
                 SELECT 1 FROM idempotency_keys
                 WHERE credential_id = ?1 AND key = ?2 AND lock_token = ?3)`,
        )
        .bind(credentialId, key, token, seq, chunk),
    ),
    d1
      .prepare(
        `UPDATE idempotency_keys SET state = 'done', lock_token = NULL, status = ?4,
               headers = ?5, body = ?6
             WHERE credential_id = ?1 AND key = ?2 AND lock_token = ?3`,
      )
      .bind(
        credentialId,
        key,
        token,
        res.status,
        JSON.stringify(headers),
        inline ? new TextDecoder().decode(bytes) : null,
      ),
  ]);
}

/**
 * Middleware (after authentication and the scope check) of the public routes
 * that create or change something: see the module comment. Requests without
 * the header pass through untouched. Its steps: check the key, take it (or answer from
 * the request that holds it), run the route, keep its answer (or release the key when the
 * answer is not kept or the route threw).
 *
 * @throws ApiError 422 for a malformed key or a key reused with another request;
 *   409 while the first request with the key is still running.
 */
export function idempotency(): MiddlewareHandler<AppEnv> {
  return async function idempotencyMiddleware(c, next) {
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) return next();
    assertWellFormedKey(key);
    const { credentialId, companyId } = c.get("principal");
    // The request's session on the company's shard (set by `authenticate` with the
    // principal: src/db/shards.ts); SQL text goes to it directly, no Drizzle client needed.
    const d1 = c.get("session");
    if (!d1) throw new Error("idempotency: no session (the route is not past authenticate)");
    const fingerprint = await fingerprintOf(c);
    const lock: KeyLock = { d1, credentialId, key, token: crypto.randomUUID() };
    const row = await takeKey(lock, companyId, fingerprint, Date.now());
    if (row.lock_token !== lock.token) return answerForKeyHeldElsewhere(row, fingerprint, lock);

    try {
      await next();
    } catch (error) {
      await releaseKey(lock);
      throw error;
    }
    if (!isStorable(c.res.status)) {
      await releaseKey(lock);
      return;
    }
    try {
      await storeResponse(lock, c.res);
    } catch (error) {
      // The call itself succeeded; without a stored response, a retry runs it again.
      logError("idempotency_store_failed", error, { requestId: c.get("requestId") });
      await releaseKey(lock).catch(() => undefined);
    }
  };
}
