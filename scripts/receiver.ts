/**
 * A local webhook receiver: `npm run receiver -- --secret whsec_...`.
 *
 * Listens on http://127.0.0.1:9999 (the origin `wrangler.toml` exempts from the
 * endpoint rules in local development), verifies every delivery's
 * `X-Service-Signature` with `@octokit/webhooks-methods` (the signature has
 * GitHub's `X-Hub-Signature-256` form), deduplicates on `eventId`, and prints
 * what it gets. It is also the reference receiver of the README: read the raw
 * body, verify before parsing, answer 2XX fast, deduplicate.
 *
 * Options: `--secret S` (repeatable; or `WEBHOOK_SECRET`, comma-separated: give
 * the old and the new secret during a rotation), `--port N` (9999), `--host H`
 * (127.0.0.1), `--tolerance SECONDS` (reject an `eventTimestamp` older than
 * this; 0 = accept late retries, the default, since duplicates are caught by
 * `eventId`), `--fail-for SECONDS` (answer 503 during the first seconds, to
 * watch retries), `--quiet` (one line per delivery, no payload).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { verify } from "@octokit/webhooks-methods";

/** Options of a receiver. */
export interface ReceiverOptions {
  /** Secrets to verify with; a delivery is accepted when any signature matches any secret. */
  secrets: readonly string[];
  port: number;
  host: string;
  /** Oldest `eventTimestamp` accepted, seconds; 0 = no limit. */
  toleranceSeconds: number;
  /** Answer 503 during the first `failForSeconds` after start. */
  failForSeconds: number;
  /**
   * Never answer during the first `hangForSeconds` after start (the sender's time
   * limit ends the request; nothing is recorded). Default 0.
   */
  hangForSeconds?: number;
  /** Called for every delivery accepted (duplicates included, flagged). */
  onDelivery?: (delivery: ReceivedDelivery) => void;
  /** Print each delivery (default true). */
  log?: boolean;
  /** Print the payload too (default true). */
  verbose?: boolean;
}

/** A verified delivery. */
export interface ReceivedDelivery {
  eventId: string;
  eventType: string;
  eventTimestamp: string;
  requestId: string;
  event: unknown;
  duplicate: boolean;
  /** ms since the epoch, when received. */
  receivedAt: number;
}

/** Most event ids remembered for deduplication (oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

async function readRawBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Verifies `X-Service-Signature`: one `sha256=<hex>`, or two separated by a
 * comma during a secret rotation (new first). Each part is checked with
 * `verify(secret, rawBody, signature)` of `@octokit/webhooks-methods`, which
 * compares in constant time.
 *
 * @returns true when any signature matches any secret.
 */
export async function verifySignature(
  secrets: readonly string[],
  rawBody: string,
  header: string | undefined,
): Promise<boolean> {
  if (!header || rawBody === "") return false;
  for (const signature of header.split(",").map((s) => s.trim())) {
    if (!/^sha256=[0-9a-f]{64}$/.test(signature)) continue;
    for (const secret of secrets) {
      if (await verify(secret, rawBody, signature)) return true;
    }
  }
  return false;
}

function answer(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { "content-type": "text/plain" }).end(text);
}

/**
 * Starts a receiver.
 *
 * @returns the listening server.
 */
export function startReceiver(options: ReceiverOptions): Promise<Server> {
  const seen = new Set<string>();
  const started = Date.now();
  const log = options.log ?? true;
  const server = createServer(async (request, response) => {
    if (request.method !== "POST") return answer(response, 405, "POST only\n");
    // 1. The raw bytes, exactly as sent: the signature covers them, not a re-serialisation.
    const rawBody = await readRawBody(request);
    // 2. Verify before trusting anything in the body.
    const header = request.headers["x-service-signature"];
    const signature = Array.isArray(header) ? header[0] : header;
    if (!(await verifySignature(options.secrets, rawBody, signature))) {
      if (log) console.error(`[${new Date().toISOString()}] rejected: bad signature`);
      return answer(response, 401, "bad signature\n");
    }
    if (Date.now() - started < (options.hangForSeconds ?? 0) * 1000) return;
    if (Date.now() - started < options.failForSeconds * 1000) {
      return answer(response, 503, "failing on purpose (--fail-for)\n");
    }
    const envelope = JSON.parse(rawBody) as {
      eventId: string;
      eventTimestamp: string;
      eventType: string;
      event: unknown;
    };
    // 3. Optionally refuse old events (a replayed capture); retries keep their timestamp.
    const age = Date.now() - Date.parse(envelope.eventTimestamp);
    if (options.toleranceSeconds > 0 && age > options.toleranceSeconds * 1000) {
      return answer(response, 400, "event too old\n");
    }
    // 4. Deduplicate on eventId: retries and replays carry the same one.
    const duplicate = seen.has(envelope.eventId);
    if (!duplicate) {
      seen.add(envelope.eventId);
      if (seen.size > MAX_REMEMBERED) {
        const oldest = seen.values().next().value;
        if (oldest !== undefined) seen.delete(oldest);
      }
    }
    const requestId = String(request.headers["x-service-request-id"] ?? "");
    const delivery: ReceivedDelivery = {
      eventId: envelope.eventId,
      eventType: envelope.eventType,
      eventTimestamp: envelope.eventTimestamp,
      requestId,
      event: envelope.event,
      duplicate,
      receivedAt: Date.now(),
    };
    options.onDelivery?.(delivery);
    if (log) {
      const mark = duplicate ? "duplicate, ignored" : "new";
      console.log(
        `[${new Date().toISOString()}] ${envelope.eventType} ${envelope.eventId} (${mark}; ` +
          `request ${requestId}; queued ${envelope.eventTimestamp})`,
      );
      if (!duplicate && (options.verbose ?? true)) {
        console.log(JSON.stringify(envelope.event, null, 2));
      }
    }
    // 5. Answer at once: 200 for something already handled, 202 for something new.
    return answer(response, duplicate ? 200 : 202, "ok\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve(server));
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      secret: { type: "string", multiple: true },
      port: { type: "string", default: "9999" },
      host: { type: "string", default: "127.0.0.1" },
      tolerance: { type: "string", default: "0" },
      "fail-for": { type: "string", default: "0" },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    console.log(
      "npm run receiver -- --secret whsec_... [--secret whsec_old...] [--port 9999] " +
        "[--host 127.0.0.1] [--tolerance SECONDS] [--fail-for SECONDS] [--quiet]\n" +
        "The secret may also come from WEBHOOK_SECRET (comma-separated).",
    );
    return;
  }
  const secrets = [
    ...(values.secret ?? []),
    ...(process.env.WEBHOOK_SECRET ?? "").split(",").map((s) => s.trim()),
  ].filter((s) => s !== "");
  if (secrets.length === 0) {
    console.error(
      "A signing secret is needed: --secret whsec_... or WEBHOOK_SECRET (the company's " +
        "webhookSecret, printed when the company is created or its secret rotated).",
    );
    process.exit(2);
  }
  const number = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0) {
      console.error(`--${name} must be a number >= 0`);
      process.exit(2);
    }
    return n;
  };
  const options: ReceiverOptions = {
    secrets,
    port: number("port", values.port),
    host: values.host,
    toleranceSeconds: number("tolerance", values.tolerance),
    failForSeconds: number("fail-for", values["fail-for"]),
    verbose: !values.quiet,
  };
  await startReceiver(options);
  console.error(
    `Receiving webhooks on http://${options.host}:${options.port}/ (any path); ` +
      `register it with: npm run operator -- request POST /companies/<id>/webhooks --body ` +
      `'[{"name":"local","url":"http://${options.host}:${options.port}/hooks","eventType":"MachineStopClassificationCreated"}]'`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
