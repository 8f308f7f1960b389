/**
 * Operator routes for webhooks (docs/operator-api.md): registrations, test
 * ping, deliveries with their attempts, replay. The signing secret and its
 * rotation are with the company routes (../companies/routes.ts). Schemas in ./schemas.ts,
 * D1 queries in ./queries.ts.
 */

import { z } from "@hono/zod-openapi";
import { readSettings } from "../../env";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import { isoInstant as iso } from "../../http/instants";
import { createRouter, ErrorSchema, jsonResponse } from "../../http/openapi";
import { pageEnvelope } from "../../http/pagination";
import { arrayBody, UuidId } from "../../http/schemas";
import { checkEndpoint } from "../../webhooks/url-safety";
import { dispatchDeliveries, pingEventStatements } from "../../webhooks/webhook-events";
import { sendDeliveries } from "../../webhooks/webhook-outbox";
import { requireCompanyScope, requireDeliveryScope, requireKeyScope } from "../lookups";
import { companyRoute, operatorRoute } from "../schemas";
import {
  deleteWebhook,
  deliveriesPage,
  deliveryForReplay,
  insertWebhooks,
  listWebhooks,
  liveWebhook,
  resetForReplay,
  webhookExists,
} from "./queries";
import {
  DeliveriesQuery,
  DeliverySchema,
  WebhookCreate,
  WebhookSchema,
  webhookParam,
} from "./schemas";

/** Time allowed to resolve the hosts of one registration call (the attempt limit). */
const REGISTRATION_CHECK_TIMEOUT_MS = 10_000;

export const operatorWebhooksRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/webhooks",
      tags: ["Webhooks"],
      summary: "Register webhooks",
      description:
        "All or none. Every URL is checked against the endpoint rules, its host resolved " +
        "through DNS-over-HTTPS; a refused URL is a 422 naming the rule (`type` " +
        "`value_error.url.<rule>`). A registration receives one event type; the threshold " +
        "types (`MachineStopLongerThan`, `MachineStopReasonMissing`) take `thresholdsMinutes` " +
        "and the others refuse it. A `Ping` reaches any registration.",
      request: { body: arrayBody(WebhookCreate) },
      responses: {
        201: jsonResponse(z.array(WebhookSchema), "The registrations, in order."),
        503: jsonResponse(ErrorSchema, "The DNS-over-HTTPS resolver could not be reached."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
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
      // The URLs are judged before the company is looked up: a 422 about the body comes
      // before a 404 about the path, as validation does on every route.
      if (issues.length > 0) throw new ApiError(422, issues);
      const scope = await requireCompanyScope(c.env, company_id);
      return c.json(await insertWebhooks(c.env, scope, items), 201);
    },
  )
  .openapi(
    companyRoute({
      method: "get",
      path: "/companies/{company_id}/webhooks",
      tags: ["Webhooks"],
      summary: "List a company's webhook registrations",
      responses: {
        200: jsonResponse(z.array(WebhookSchema), "Registrations not deleted, oldest first."),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const scope = await requireCompanyScope(c.env, company_id);
      return c.json(await listWebhooks(scope), 200);
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
      const { db } = await requireKeyScope(c.env, "webhook", webhook_id, "Webhook not found");
      if (!(await deleteWebhook(db, webhook_id, Date.now()))) throw notFound("Webhook not found");
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
      const scope = await requireKeyScope(c.env, "webhook", webhook_id, "Webhook not found");
      const { db } = scope;
      const webhook = await liveWebhook(db, webhook_id);
      if (!webhook) throw notFound("Webhook not found");
      const ping = pingEventStatements(db, webhook);
      const [, deliveries] = await db.batch([ping.event, ping.deliveries]);
      await dispatchDeliveries(c.env, scope, ping.eventId, deliveries);
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
      const { db } = await requireKeyScope(c.env, "webhook", webhook_id, "Webhook not found");
      if (!(await webhookExists(db, webhook_id))) throw notFound("Webhook not found");
      const { page, attempts } = await deliveriesPage(db, webhook_id, query);
      return c.json(
        pageEnvelope("deliveries", page, ({ nextAttemptAt, ...row }) => ({
          ...row,
          nextAttemptAt: nextAttemptAt === null ? null : iso(nextAttemptAt),
          attempts: (attempts.get(row.id) ?? []).map((a) => ({ ...a, at: iso(a.at) })),
        })),
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
      const { db, companyId } = await requireDeliveryScope(c.env, delivery_id);
      const found = await deliveryForReplay(db, delivery_id);
      if (!found) throw notFound("Delivery not found");
      if (found.webhookDeletedAt !== null) {
        throw new ApiError(409, "The delivery's webhook registration was deleted");
      }
      const now = Date.now();
      // Guarded on the status, so that two replays at once queue one message.
      const reset = await resetForReplay(db, delivery_id, now);
      if (!reset) throw new ApiError(409, "The delivery is pending: it is being delivered");
      try {
        await sendDeliveries(c.env, db, [{ id: delivery_id, companyId }], now);
      } catch (error) {
        // Reset and committed: the sweeper sends it within a minute.
        console.error(
          JSON.stringify({ level: "error", msg: "replay send failed", error: String(error) }),
        );
      }
      return c.json({ deliveryId: delivery_id }, 202);
    },
  );
