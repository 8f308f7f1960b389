/**
 * Operator routes for the API keys of a company: issue and revoke.
 */

import { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { generateApiKey } from "../auth/api-keys";
import { forgetCredential } from "../auth/middleware";
import { ALL_SCOPES, isKnownScope } from "../auth/scopes";
import { companyScope } from "../db/company-scope";
import { apiKeys } from "../db/schema";
import { closeCredentialConnections } from "../events/connection-leases";
import { notFound } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { arrayBody, IntId } from "../http/schemas";
import { requireCompany } from "./lookups";
import { operatorRoute } from "./schemas";

const RateLimitSchema = z
  .object({
    requests: z.number().int().positive().max(1_000_000),
    periodSeconds: z.number().int().positive().max(86_400),
  })
  .strict();

const ApiKeyCreate = z
  .object({
    name: z.string().trim().min(1).max(200),
    scopes: z
      .array(
        z.string().refine(isKnownScope, {
          message: `Unknown scope; known scopes: ${ALL_SCOPES.join(", ")}`,
        }),
      )
      .max(ALL_SCOPES.length * 2),
    rateLimit: RateLimitSchema.optional(),
  })
  .strict();

const companyParam = z.object({ company_id: IntId("company_id") });

export const operatorApiKeysRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "post",
      path: "/companies/{company_id}/api-keys",
      tags: ["API keys"],
      summary: "Issue API keys",
      description: "`key` is shown in this response only; the service stores its SHA-256 hash.",
      request: { params: companyParam, body: arrayBody(ApiKeyCreate) },
      responses: {
        201: jsonResponse(
          z.array(
            z.object({
              id: z.number().int(),
              name: z.string(),
              key: z.string(),
              prefix: z.string(),
              scopes: z.array(z.string()),
              rateLimit: RateLimitSchema.nullable(),
            }),
          ),
          "Issued keys.",
        ),
      },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const items = c.req.valid("json");
      await requireCompany(companyScope(c.var.db, company_id));
      const db = c.var.db;
      const generated = await Promise.all(items.map(() => generateApiKey()));
      const inserts = items.map((item, i) => {
        const g = generated[i];
        if (!g) throw new Error("unreachable: one key per item");
        return db
          .insert(apiKeys)
          .values({
            companyId: company_id,
            name: item.name,
            prefix: g.prefix,
            keyHash: g.hash,
            scopes: [...new Set(item.scopes)],
            rateLimitRequests: item.rateLimit?.requests ?? null,
            rateLimitPeriodSeconds: item.rateLimit?.periodSeconds ?? null,
          })
          .returning({ id: apiKeys.id });
      });
      const [first, ...rest] = inserts;
      if (!first) return c.json([], 201);
      const results = await db.batch([first, ...rest]);
      return c.json(
        results.map(([row], i) => ({
          id: row?.id ?? 0,
          name: items[i]?.name ?? "",
          key: generated[i]?.key ?? "",
          prefix: generated[i]?.prefix ?? "",
          scopes: [...new Set(items[i]?.scopes ?? [])],
          rateLimit: items[i]?.rateLimit ?? null,
        })),
        201,
      );
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/api-keys/{api_key_id}",
      tags: ["API keys"],
      summary: "Revoke an API key",
      description:
        "The key stops working at once: requests with it get 401, and its open live-event " +
        "connections (SSE and WebSocket) are closed.",
      request: { params: z.object({ api_key_id: IntId("api_key_id") }) },
      responses: { 204: { description: "Revoked." } },
    }),
    async (c) => {
      const { api_key_id } = c.req.valid("param");
      const row = await c.var.db
        .update(apiKeys)
        .set({ revokedAt: Date.now() })
        .where(eq(apiKeys.id, api_key_id))
        .returning({ id: apiKeys.id })
        .get();
      if (!row) throw notFound("API key not found");
      // At once in this isolate; other isolates within CREDENTIAL_CACHE_SECONDS, and their
      // event connections are refused by the credential's lease object from now on.
      forgetCredential(`key:${row.id}`);
      // Its open event streams close now, not at their client's next reconnect.
      try {
        await closeCredentialConnections(c.env, `key:${row.id}`);
      } catch (error) {
        console.error(
          JSON.stringify({ level: "error", event: "revoke_close_streams", error: String(error) }),
        );
      }
      return c.body(null, 204);
    },
  );
