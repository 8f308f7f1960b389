/**
 * Operator routes for companies: create and list them, their signal retention and their
 * webhook signing secret (their queries in ./companies-queries.ts). Their API keys are in
 * ./api-keys-routes.ts.
 */
import { z } from "@hono/zod-openapi";
import { companyScope } from "../db/company-scope";
import { notFound } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { arrayBody, IntId, objectBody } from "../http/schemas";
import { forgetCompanySignals } from "../resources/signals/signal-lookup";
import {
  createCompanies,
  listCompanies,
  rotateWebhookSecret,
  setSignalRetention,
} from "./companies-queries";
import { operatorRoute } from "./schemas";

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
      const row = await setSignalRetention(companyScope(c.var.db, company_id), days);
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
      return c.json(await createCompanies(c.var.db, items), 201);
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
      return c.json(await listCompanies(c.var.db), 200);
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
      const webhookSecret = await rotateWebhookSecret(companyScope(c.var.db, company_id));
      if (webhookSecret === null) throw notFound("Company not found");
      return c.json({ webhookSecret }, 200);
    },
  );
