/**
 * Stream events: `GET /v1/realtime/{machine_id}/events` and `GET /v1/realtime/events` (Server-Sent
 * Events, or a WebSocket on the same path with `Upgrade: websocket`), and
 * `POST /v1/realtime/tickets` (a one-use ticket for browsers, which cannot set headers on
 * `EventSource` or `WebSocket`). The streams live in `MachineStream` and
 * `CompanyStream` objects (src/streams/); the Worker authenticates, counts the connection and hands the
 * request to the stream.
 */
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { publicRoute } from "../../app-chain/public-route";
import { type AppEnv, scopeOf } from "../../app-env";
import { admit, authenticate, DEFAULT_RESOLVERS } from "../../auth/middleware";
import { readSettings } from "../../env";
import { ApiError, notAuthenticated } from "../../http/errors";
import {
  createRouter,
  jsonResponse,
  NOT_FOUND_RESPONSE,
  RATE_LIMIT_HEADERS,
} from "../../http/openapi";
import { connectionCounter, SSE_LEASE_MS, WS_LEASE_MS } from "../../streams/connection-leases";
import { companyStream, machineStream } from "../../streams/names";
import { streamObject, ticketObject } from "../../streams/publish";
import { StreamEventSchema, TicketSchema } from "../../streams/schemas";
import { TICKET_TTL_MS, type TicketPrincipal } from "../../streams/tickets";
import { SECOND_MS } from "../../time/units";
import { findMachine } from "../queries";
import { MachineIdParam } from "../schemas";

const SCOPE = "realtime.read";

/** A ticket: `<companyId>.<43 base64url characters>` (256 random bits). */
const TICKET_PATTERN = /^(\d{1,15})\.[A-Za-z0-9_-]{43}$/;

function newTicket(companyId: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const text = btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
  return `${companyId}.${text}`;
}

/**
 * Middleware: authenticates with a credential header, or (only on the events paths) with
 * `?ticket=`, which is taken once. A ticket together with a credential header is a 401.
 *
 * @throws ApiError 401 for an unknown, used or expired ticket.
 */
function authenticateOrTicket(): MiddlewareHandler<AppEnv> {
  const byHeader = authenticate();
  return async function authenticateOrTicketMiddleware(c, next) {
    const ticket = c.req.query("ticket");
    if (ticket === undefined) return byHeader(c, next);
    if (DEFAULT_RESOLVERS.some((r) => c.req.header(r.header) !== undefined)) {
      throw notAuthenticated();
    }
    const match = TICKET_PATTERN.exec(ticket);
    if (!match) throw notAuthenticated();
    const principal = await ticketObject(c.env, Number(match[1])).redeemTicket(ticket);
    if (!principal) throw notAuthenticated();
    const { expiresAt, ...rest } = principal;
    await admit(c, {
      ...rest,
      scopes: new Set(principal.scopes),
      ...(typeof expiresAt === "number" ? { expiresAt } : {}),
    });
    await next();
  };
}

const EVENTS_QUERY = z.object({
  // A string checked by pattern, not `z.coerce.number()`: coercion reads "" (and " ") as 0,
  // which would replay the whole retained log to a client that meant something else.
  since: z
    .string()
    .regex(/^\d{1,15}$/, "since must be a non-negative integer (an event id)")
    .transform(Number)
    .optional()
    .openapi({
      type: "integer",
      minimum: 0,
      maximum: 999_999_999_999_999,
      description:
        "Resume after this event id (as `Last-Event-ID`, which wins when both are given): " +
        "a non-negative integer; anything else (empty included) is a 422.",
    }),
  ticket: z
    .string()
    .optional()
    .openapi({ description: "A ticket from `POST /v1/realtime/tickets`, instead of a header." }),
});

const EVENTS_HEADERS = z.object({
  "last-event-id": z
    .string()
    .optional()
    .openapi({ description: "The id of the last event received (sent by `EventSource`)." }),
});

const STREAM_TEXT =
  "**Server-Sent Events** (`Accept: text/event-stream`): each event is an `id:` line (strictly " +
  "increasing within the stream), an `event:` line (the type) and one `data:` line (the " +
  "`StreamEvent` JSON); a comment line `: heartbeat` every 15 s. **WebSocket**: the same path " +
  "with `Upgrade: websocket`; each event is one text message (`StreamEvent`); send `ping` to " +
  "get `pong`.\n\n**Resuming**: `Last-Event-ID` (or `?since=`) replays exactly the events " +
  "after that id, then the live ones (`since`: a non-negative integer; anything else, empty " +
  "included, is a 422). The stream keeps at least 24 hours and at least the " +
  "last 10,000 events; a client further behind (or with an id the stream never gave) gets " +
  "one `reset` event with the current state, then the stream events.\n\n**Credentials**: " +
  "revoking the API key closes its connections; a connection opened with an access token " +
  "closes at the token's `exp` plus 60 s of leeway; a ticket opens a stream only while its " +
  "credential is valid.\n\n**Browsers**: " +
  "`EventSource` and `WebSocket` cannot set headers; get a ticket from " +
  "`POST /v1/realtime/tickets` and pass it as `?ticket=` (one use, 60 s). An API key never " +
  "goes in a URL.\n\n**Limits**: a connection counts once against the rate limit; a " +
  "credential may hold `EVENTS_MAX_CONNECTIONS` open connections (default 20), above which " +
  "the answer is a 429 with `Retry-After`.";

const streamResponses = {
  200: {
    description: "The event stream (Server-Sent Events).",
    content: {
      "text/event-stream": {
        schema: z.string().openapi({
          description:
            "`id: <n>` / `event: <type>` / `data: <StreamEvent JSON>` blocks; see `StreamEvent`.",
          example:
            'id: 42\nevent: operator.assigned\ndata: {"id":42,"type":"operator.assigned",...}\n\n',
        }),
      },
    },
    headers: RATE_LIMIT_HEADERS,
  },
  101: { description: "Switched to a WebSocket (`Upgrade: websocket`)." },
  ...NOT_FOUND_RESPONSE,
} as const;

const machineEventsRoute = publicRoute(
  SCOPE,
  {
    method: "get",
    path: "/v1/realtime/{machine_id}/events",
    operationId: "streamMachineEvents",
    tags: ["Realtime"],
    summary: "A machine's events, live (SSE or WebSocket)",
    description:
      "The machine's events as they happen: segment changes (`segment.changed`, " +
      "`segment.updated`), operator assignments, `production` from the `count` signal (at " +
      "most one a second), stops (`stop.started`, `stop.ended`, `stop.updated`, " +
      "`stop.deleted`) and their classification (`stop.classified`, `stop.unclassified`), " +
      "`shift.started` and " +
      "`shift.ended`, and the running shift's `oee` (at most one a second, as the metrics " +
      `report computes it; the last one of a shift has \`final: true\`).\n\n${STREAM_TEXT}`,
    request: { params: MachineIdParam, query: EVENTS_QUERY, headers: EVENTS_HEADERS },
    responses: streamResponses,
  },
  { authenticate: authenticateOrTicket() },
);

const companyEventsRoute = publicRoute(
  SCOPE,
  {
    method: "get",
    path: "/v1/realtime/events",
    operationId: "streamCompanyEvents",
    tags: ["Realtime"],
    summary: "Every machine's events, live (SSE or WebSocket)",
    description:
      "The events of every machine of the company (for plant boards), as " +
      "`GET /v1/realtime/{machine_id}/events` gives them, each with its `machineId` and its " +
      "id in the machine's stream (`machineEventId`); `id` is the company stream's own, for " +
      `resuming.\n\n${STREAM_TEXT}`,
    request: { query: EVENTS_QUERY, headers: EVENTS_HEADERS },
    responses: streamResponses,
  },
  { authenticate: authenticateOrTicket() },
);

const ticketRoute = publicRoute(SCOPE, {
  method: "post",
  path: "/v1/realtime/tickets",
  operationId: "createRealtimeTicket",
  tags: ["Realtime"],
  summary: "A one-use ticket for a browser's event stream",
  description:
    "A random ticket, valid 60 s and once, bound to the calling credential (its company, " +
    "scopes, rate limit and connection limit): pass it as `?ticket=` to " +
    "`GET /v1/realtime/{machine_id}/events` or `GET /v1/realtime/events` (only there). No body.",
  responses: { 201: jsonResponse(TicketSchema, "The ticket.") },
});

/** The `since` of a subscription: `Last-Event-ID` wins (EventSource resends it on reconnect). */
function resumeFrom(c: Context<AppEnv>, since: number | undefined): number | null {
  const header = c.req.header("last-event-id")?.trim();
  if (header !== undefined && /^\d{1,15}$/.test(header)) return Number(header);
  return since ?? null;
}

/**
 * Takes a connection lease of the caller's credential and hands the request to the stream.
 *
 * @throws ApiError 429 with `Retry-After` when the credential holds its most connections.
 */
async function subscribe(
  c: Context<AppEnv>,
  stream: string,
  since: number | null,
): Promise<Response> {
  const principal = c.get("principal");
  const websocket = c.req.header("upgrade")?.toLowerCase() === "websocket";
  const leaseId = crypto.randomUUID();
  const counter = connectionCounter(c.env, principal.credentialId);
  const decision = await counter.acquire(
    leaseId,
    readSettings(c.env).eventsMaxConnections,
    websocket ? WS_LEASE_MS : SSE_LEASE_MS,
    stream,
  );
  // Revoked since this isolate cached it, or since its ticket was issued.
  if (!decision.ok && decision.revoked) throw notAuthenticated();
  if (!decision.ok) {
    throw new ApiError(429, "Too many open event connections for this credential", {
      "Retry-After": String(Math.max(1, Math.ceil(decision.retryAfterMs / SECOND_MS))),
    });
  }
  const url = new URL("https://events.internal/subscribe");
  url.searchParams.set("stream", stream);
  if (since !== null) url.searchParams.set("since", String(since));
  const headers = new Headers({
    "x-lease-credential": principal.credentialId,
    "x-lease-id": leaseId,
  });
  if (websocket) headers.set("upgrade", "websocket");
  if (principal.expiresAt !== undefined) headers.set("x-closes-at", String(principal.expiresAt));
  let response: Response;
  try {
    response = await streamObject(c.env, stream).fetch(url, { headers });
  } catch (error) {
    await counter.release(leaseId);
    throw error;
  }
  if (response.status === 401) {
    await counter.release(leaseId);
    throw notAuthenticated();
  }
  return response;
}

export const streamRoutes = createRouter()
  .openapi(companyEventsRoute, async (c) => {
    const { since } = c.req.valid("query");
    return subscribe(c, companyStream(c.get("principal").companyId), resumeFrom(c, since));
  })
  .openapi(machineEventsRoute, async (c) => {
    const { machine_id } = c.req.valid("param");
    const { since } = c.req.valid("query");
    const principal = c.get("principal");
    await findMachine(scopeOf(c), machine_id);
    return subscribe(c, machineStream(principal.companyId, machine_id), resumeFrom(c, since));
  })
  .openapi(ticketRoute, async (c) => {
    const p = c.get("principal");
    const ticket = newTicket(p.companyId);
    const principal: TicketPrincipal = {
      companyId: p.companyId,
      companyName: p.companyName,
      timezone: p.timezone,
      credentialId: p.credentialId,
      kind: p.kind,
      scopes: [...p.scopes],
      rateLimit: p.rateLimit,
      expiresAt: p.expiresAt ?? null,
    };
    await ticketObject(c.env, p.companyId).issueTicket(ticket, principal);
    return c.json(
      {
        ticket,
        expiresAt: new Date(Date.now() + TICKET_TTL_MS).toISOString(),
        company: { id: p.companyId, name: p.companyName, timezone: p.timezone },
      },
      201,
    );
  });

// Not the schema of any one response (the SSE body is text): registered so that clients find it.
streamRoutes.openAPIRegistry.register("StreamEvent", StreamEventSchema);
