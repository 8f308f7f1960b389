/**
 * Operator routes for companies: create and list them, their signal retention and their
 * webhook signing secret. Their API keys are in ./api-keys.ts.
 */
import { z } from "@hono/zod-openapi";
import { asc, eq } from "drizzle-orm";
import { randomToken } from "../auth/api-keys";
import { companies } from "../db/schema";
import { notFound } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { arrayBody, IntId, objectBody } from "../http/schemas";
import { forgetCompanySignals } from "../resources/signals/signal-lookup";
import { operatorRoute } from "./schemas";

/** How long deliveries carry the old signature after a rotation (docs/webhooks.md). */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;

/** A new webhook signing secret: `whsec_` + 32 random bytes in base64url (docs/webhooks.md). */
export function newWebhookSecret(): string {
  return `whsec_${randomToken(32)}`;
}

/** True when `tz` is an IANA time zone the runtime knows. */
export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const CompanySchema = z
  .object({ id: z.number().int(), name: z.string(), timezone: z.string() })
  .openapi("Company");

const CompanyCreate = z
  .object({
    name: z.string().trim().min(1).max(200),
    timezone: z
      .string()
      .refine(isValidTimeZone, { message: "Must be an IANA time zone, for example Europe/Rome" }),
  })
  .strict();

const companyParam = z.object({ company_id: IntId("company_id") });

const SignalRetention = z
  .object({
    days: z.number().int().min(1).max(36_500).nullable().openapi({
      description: "Days of raw samples kept; null = kept forever.",
      example: 90,
    }),
  })
  .strict()
  .openapi("SignalRetention");

export const operatorCompaniesRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "put",
      path: "/companies/{company_id}/signal-retention",
      tags: ["Companies"],
      summary: "Set how long raw signal samples are kept",
      description:
        "Raw samples older than `days` are removed by each machine's signal store (its alarm, " +
        "hourly); their hour and minute rollups are kept, so queries of whole minutes and hours " +
        "still answer. A store learns the setting with the machine's next ingestion call.",
      request: {
        params: companyParam,
        body: objectBody(SignalRetention),
      },
      responses: { 200: jsonResponse(SignalRetention, "The setting now in force.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const { days } = c.req.valid("json");
      const row = await c.var.db
        .update(companies)
        .set({ signalRetentionDays: days })
        .where(eq(companies.id, company_id))
        .returning({ days: companies.signalRetentionDays })
        .get();
      if (!row) throw notFound("Company not found");
      forgetCompanySignals(company_id);
      return c.json({ days: row.days }, 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/companies",
      tags: ["Companies"],
      summary: "Create companies",
      request: { body: arrayBody(CompanyCreate) },
      responses: {
        201: jsonResponse(
          z.array(CompanySchema.extend({ webhookSecret: z.string() })),
          "Created companies with their signing secret.",
        ),
      },
    }),
    async (c) => {
      const items = c.req.valid("json");
      const db = c.var.db;
      const inserts = items.map((item) =>
        db
          .insert(companies)
          .values({ name: item.name, timezone: item.timezone, webhookSecret: newWebhookSecret() })
          .returning({
            id: companies.id,
            name: companies.name,
            timezone: companies.timezone,
            webhookSecret: companies.webhookSecret,
          }),
      );
      const [first, ...rest] = inserts;
      if (!first) return c.json([], 201);
      const results = await db.batch([first, ...rest]);
      return c.json(results.flat(), 201);
    },
  )
  .openapi(
    operatorRoute({
      method: "get",
      path: "/companies",
      tags: ["Companies"],
      summary: "List companies",
      responses: {
        200: jsonResponse(z.array(CompanySchema), "Every company, by id (no secrets)."),
      },
    }),
    async (c) => {
      const rows = await c.var.db
        .select({ id: companies.id, name: companies.name, timezone: companies.timezone })
        .from(companies)
        .orderBy(asc(companies.id))
        .all();
      return c.json(rows, 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/companies/{company_id}/webhook-secret/rotate",
      tags: ["Companies"],
      summary: "Rotate the webhook signing secret",
      description: "Issues a new secret; for 24 hours deliveries carry both signatures, new first.",
      request: { params: companyParam },
      responses: { 200: jsonResponse(z.object({ webhookSecret: z.string() }), "The new secret.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const db = c.var.db;
      const current = await db
        .select({ secret: companies.webhookSecret })
        .from(companies)
        .where(eq(companies.id, company_id))
        .get();
      if (!current) throw notFound("Company not found");
      const webhookSecret = newWebhookSecret();
      await db
        .update(companies)
        .set({
          webhookSecret,
          previousWebhookSecret: current.secret,
          previousWebhookSecretExpiresAt: Date.now() + SECRET_OVERLAP_MS,
        })
        .where(eq(companies.id, company_id));
      return c.json({ webhookSecret }, 200);
    },
  );
