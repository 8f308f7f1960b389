/**
 * Operator routes for webhooks (docs/operator-api.md): registrations, test
 * ping, deliveries with their attempts, replay. The signing secret and its
 * rotation live with the company (companies.ts).
 */

import { OpenAPIHono, z } from "@hono/zod-openapi";
import { and, asc, count, desc, eq, isNull, type SQL, sql } from "drizzle-orm";
import type { AppEnv } from "../app-env";
import { webhookAttempts, webhookDeliveries, webhookEvents, webhooks } from "../db/schema";
import { readSettings } from "../env";
import { ApiError, notFound, type ValidationIssue } from "../http/errors";
import { isoInstant as iso } from "../http/instants";
import { ErrorSchema, jsonResponse } from "../http/openapi";
import { DEFAULT_LIMIT, MAX_LIMIT, paginate } from "../http/pagination";
import { validationHook } from "../http/validation";
import {
  CLASSIFICATION_EVENT_TYPES,
  dispatchDeliveries,
  pingEventStatements,
} from "../webhooks/events";
import { sendDeliveries } from "../webhooks/outbox";
import { checkEndpoint, MAX_URL_LENGTH } from "../webhooks/url-safety";
import { requireCompany } from "./lookups";
import { arrayBody, IntId, operatorRoute, UuidId } from "./schemas";

/** Time allowed to resolve the hosts of one registration call (the attempt limit). */
const REGISTRATION_CHECK_TIMEOUT_MS = 10_000;

const dateTime = () => z.string().openapi({ format: "date-time" });

const WebhookCreate = z
  .object({
    name: z.string().trim().min(1).max(200).openapi({ description: "A label." }),
    url: z.string().openapi({
      description:
        `https:// only, at most ${MAX_URL_LENGTH} characters, no credentials, no #fragment; the ` +
        "host must resolve only to public addresses.",
      example: "https://hooks.example.com/production-monitoring",
    }),
    eventType: z.enum(CLASSIFICATION_EVENT_TYPES),
  })
  .strict();

const WebhookSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    url: z.string(),
    eventType: z.enum(CLASSIFICATION_EVENT_TYPES),
    createdAt: dateTime(),
  })
  .openapi("Webhook");

const AttemptSchema = z
  .object({
    requestId: z.string().openapi({ description: "`X-Service-Request-Id` of the attempt." }),
    at: dateTime().openapi({ description: "When the attempt started." }),
    durationMs: z.number().int(),
    statusCode: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "null when no response came (time-out, network, refused)." }),
    error: z.string().nullable().openapi({
      description: "`timeout`, `network error: ...`, `unsafe destination`, a DNS error, ...",
    }),
  })
  .openapi("WebhookAttempt");

const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

const DeliverySchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    eventId: z.string().openapi({ format: "uuid" }),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(AttemptSchema).openapi({ description: "Oldest first." }),
  })
  .openapi("WebhookDelivery");

const DeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  page: z.coerce
    .number()
    .int()
    .min(1)
    .default(1)
    .openapi({ type: "integer", description: "Page number, from 1." }),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .openapi({ type: "integer", description: `Rows per page, 1 to ${MAX_LIMIT}.` }),
});

const companyParam = z.object({ company_id: IntId("company_id") });
const webhookParam = z.object({ webhook_id: UuidId("webhook_id") });

const webhookColumns = {
  id: webhooks.id,
  name: webhooks.name,
  url: webhooks.url,
  eventType: webhooks.eventType,
  createdAt: webhooks.createdAt,
};

function toWebhookOut(row: {
  id: string;
  name: string;
  url: string;
  eventType: string;
  createdAt: number;
}) {
  const eventType = CLASSIFICATION_EVENT_TYPES.find((t) => t === row.eventType);
  if (!eventType) throw new Error(`unknown event type ${row.eventType} stored`);
  return { ...row, eventType, createdAt: iso(row.createdAt) };
}

export const operatorWebhooksRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook })
  .openapi(
    operatorRoute({
      method: "post",
      path: "/companies/{company_id}/webhooks",
      tags: ["Webhooks"],
      summary: "Register webhooks",
      description:
        "All or none. Every URL is checked against the endpoint rules, its host resolved " +
        "through DNS-over-HTTPS; a refused URL is a 422 naming the rule (`type` " +
        "`value_error.url.<rule>`). A `Ping` reaches any registration.",
      request: { params: companyParam, body: arrayBody(WebhookCreate) },
      responses: {
        201: jsonResponse(z.array(WebhookSchema), "The registrations, in order."),
        503: jsonResponse(ErrorSchema, "The DNS-over-HTTPS resolver could not be reached."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const db = c.var.db;
      await requireCompany(db, company_id);
      const settings = readSettings(c.env).webhooks;
      const options = { environment: readSettings(c.env).environment, ...settings };
      const signal = AbortSignal.timeout(REGISTRATION_CHECK_TIMEOUT_MS);
      const checks = await Promise.all(
        items.map((item) => checkEndpoint(item.url, options, signal)),
      );
      const issues: ValidationIssue[] = [];
      for (const [index, check] of checks.entries()) {
        const loc = ["body", index, "url"];
        if (check.kind === "refused") {
          issues.push({ loc, msg: check.message, type: `value_error.url.${check.rule}` });
        } else if (check.kind === "unresolved") {
          if (check.resolverError) {
            throw new ApiError(503, `Could not check the webhook host: ${check.message}`);
          }
          issues.push({ loc, msg: check.message, type: "value_error.url.resolve" });
        }
      }
      if (issues.length > 0) throw new ApiError(422, issues);
      const [first, ...rest] = items.map((item) =>
        db
          .insert(webhooks)
          .values({
            id: crypto.randomUUID(),
            companyId: company_id,
            name: item.name,
            url: item.url,
            eventType: item.eventType,
          })
          .returning(webhookColumns),
      );
      if (!first) return c.json([], 201);
      const results = await db.batch([first, ...rest]);
      return c.json(results.flat().map(toWebhookOut), 201);
    },
  )
  .openapi(
    operatorRoute({
      method: "get",
      path: "/companies/{company_id}/webhooks",
      tags: ["Webhooks"],
      summary: "List a company's webhook registrations",
      request: { params: companyParam },
      responses: {
        200: jsonResponse(z.array(WebhookSchema), "Registrations not deleted, oldest first."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const db = c.var.db;
      await requireCompany(db, company_id);
      const rows = await db
        .select(webhookColumns)
        .from(webhooks)
        .where(and(eq(webhooks.companyId, company_id), isNull(webhooks.deletedAt)))
        .orderBy(asc(webhooks.createdAt), asc(webhooks.id))
        .all();
      return c.json(rows.map(toWebhookOut), 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/webhooks/{webhook_id}",
      tags: ["Webhooks"],
      summary: "Delete a webhook registration",
      description:
        "No new delivery is made to it; its pending deliveries end as failed. Its " +
        "deliveries stay listed.",
      request: { params: webhookParam },
      responses: { 204: { description: "Deleted." } },
    }),
    async (c) => {
      const { webhook_id } = c.req.valid("param");
      const row = await c.var.db
        .update(webhooks)
        .set({ deletedAt: Date.now() })
        .where(and(eq(webhooks.id, webhook_id), isNull(webhooks.deletedAt)))
        .returning({ id: webhooks.id })
        .get();
      if (!row) throw notFound("Webhook not found");
      return c.body(null, 204);
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/webhooks/{webhook_id}/ping",
      tags: ["Webhooks"],
      summary: "Send a test ping",
      description:
        'Queues the event `Ping` (`{"text": "ping"}`) to this registration, whatever its event type.',
      request: { params: webhookParam },
      responses: {
        202: jsonResponse(
          z.object({
            eventId: z.string().openapi({ format: "uuid" }),
            deliveryId: z.string().openapi({ format: "uuid" }),
          }),
          "Queued.",
        ),
      },
    }),
    async (c) => {
      const { webhook_id } = c.req.valid("param");
      const db = c.var.db;
      const webhook = await db
        .select({ id: webhooks.id, companyId: webhooks.companyId })
        .from(webhooks)
        .where(and(eq(webhooks.id, webhook_id), isNull(webhooks.deletedAt)))
        .get();
      if (!webhook) throw notFound("Webhook not found");
      const ping = pingEventStatements(db, webhook);
      const [, deliveries] = await db.batch([ping.event, ping.deliveries]);
      await dispatchDeliveries(c.env, db, ping.eventId, deliveries);
      return c.json({ eventId: ping.eventId, deliveryId: ping.deliveryId }, 202);
    },
  )
  .openapi(
    operatorRoute({
      method: "get",
      path: "/webhooks/{webhook_id}/deliveries",
      tags: ["Webhooks"],
      summary: "List deliveries of a registration, with their attempts",
      description: "Newest first. A deleted registration's deliveries are still listed.",
      request: { params: webhookParam, query: DeliveriesQuery },
      responses: {
        200: jsonResponse(
          z.object({
            totalCount: z.number().int(),
            totalPages: z.number().int(),
            currentPage: z.number().int(),
            deliveries: z.array(DeliverySchema),
          }),
          "One page of deliveries.",
        ),
      },
    }),
    async (c) => {
      const { webhook_id } = c.req.valid("param");
      const query = c.req.valid("query");
      const db = c.var.db;
      const webhook = await db
        .select({ id: webhooks.id })
        .from(webhooks)
        .where(eq(webhooks.id, webhook_id))
        .get();
      if (!webhook) throw notFound("Webhook not found");
      const where: SQL | undefined = and(
        eq(webhookDeliveries.webhookId, webhook_id),
        query.status === undefined ? undefined : eq(webhookDeliveries.status, query.status),
      );
      const page = await paginate(
        { page: query.page, limit: query.limit },
        db.select({ count: count() }).from(webhookDeliveries).where(where),
        ({ limit, offset }) =>
          db
            .select({
              id: webhookDeliveries.id,
              eventId: webhookDeliveries.eventId,
              eventType: webhookEvents.eventType,
              status: webhookDeliveries.status,
            })
            .from(webhookDeliveries)
            .innerJoin(webhookEvents, eq(webhookEvents.id, webhookDeliveries.eventId))
            .where(where)
            .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
            .limit(limit)
            .offset(offset),
      );
      const ids = page.rows.map((r) => r.id);
      const attempts =
        ids.length === 0
          ? []
          : await db
              .select({
                deliveryId: webhookAttempts.deliveryId,
                requestId: webhookAttempts.requestId,
                at: webhookAttempts.at,
                durationMs: webhookAttempts.durationMs,
                statusCode: webhookAttempts.statusCode,
                error: webhookAttempts.error,
              })
              .from(webhookAttempts)
              .where(
                sql`${webhookAttempts.deliveryId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
              )
              .orderBy(asc(webhookAttempts.at), asc(webhookAttempts.id))
              .all();
      return c.json(
        {
          totalCount: page.totalCount,
          totalPages: page.totalPages,
          currentPage: page.currentPage,
          deliveries: page.rows.map((row) => ({
            ...row,
            attempts: attempts
              .filter((a) => a.deliveryId === row.id)
              .map((a) => ({
                requestId: a.requestId,
                at: iso(a.at),
                durationMs: a.durationMs,
                statusCode: a.statusCode,
                error: a.error,
              })),
          })),
        },
        200,
      );
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/deliveries/{delivery_id}/replay",
      tags: ["Webhooks"],
      summary: "Replay a delivery",
      description:
        "Sends a delivery that has ended (failed, or delivered) again: same `eventId`, same " +
        "body and `eventTimestamp`, a new request id per attempt, a fresh set of rounds.",
      request: { params: z.object({ delivery_id: UuidId("delivery_id") }) },
      responses: {
        202: jsonResponse(
          z.object({ deliveryId: z.string().openapi({ format: "uuid" }) }),
          "Queued again.",
        ),
        409: jsonResponse(
          ErrorSchema,
          "The delivery is still pending, or its registration was deleted.",
        ),
      },
    }),
    async (c) => {
      const { delivery_id } = c.req.valid("param");
      const db = c.var.db;
      const found = await db
        .select({ status: webhookDeliveries.status, webhookDeletedAt: webhooks.deletedAt })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .where(eq(webhookDeliveries.id, delivery_id))
        .get();
      if (!found) throw notFound("Delivery not found");
      if (found.webhookDeletedAt !== null) {
        throw new ApiError(409, "The delivery's webhook registration was deleted");
      }
      const now = Date.now();
      // Guarded on the status, so that two replays at once queue one message.
      const reset = await db
        .update(webhookDeliveries)
        .set({ status: "pending", rounds: 0, enqueuedAt: null, updatedAt: now })
        .where(
          and(eq(webhookDeliveries.id, delivery_id), sql`${webhookDeliveries.status} <> 'pending'`),
        )
        .returning({ id: webhookDeliveries.id })
        .get();
      if (!reset) throw new ApiError(409, "The delivery is pending: it is being delivered");
      try {
        await sendDeliveries(c.env, db, [delivery_id], now);
      } catch (error) {
        // Reset and committed: the sweeper sends it within a minute.
        console.error(
          JSON.stringify({ level: "error", msg: "replay send failed", error: String(error) }),
        );
      }
      return c.json({ deliveryId: delivery_id }, 202);
    },
  );
