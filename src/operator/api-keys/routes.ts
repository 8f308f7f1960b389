/**
 * Operator routes for the API keys of a company: issue and revoke (their queries in
 * ./queries.ts; docs/operator-api.md, "Companies, keys and the webhook secret").
 */

import { z } from "@hono/zod-openapi";
import { forgetCredential } from "../../auth/middleware";
import { ALL_SCOPES, isKnownScope } from "../../auth/scopes";
import { scopeIn } from "../../db/company-scope";
import { forgetDirectoryAnchor } from "../../db/directory-reads";
import { notFound } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, IntId } from "../../http/schemas";
import { logError } from "../../observability/log";
import { closeCredentialConnections } from "../../streams/connection-leases";
import { requireCompanyScope } from "../lookups";
import { companyRoute, operatorRoute } from "../schemas";
import { issueApiKeys, revokeApiKey } from "./queries";

const RateLimitSchema = z
  .object({
    requests: z.number().int().positive().max(1_000_000),
    periodSeconds: z.number().int().positive().max(86_400),
  })
  .strict();

const ApiKeyCreate = z
  .object({
    name: z.string().trim().regex(/\S/, "Must not be blank").max(200),
    scopes: z
      .array(
        z
          .string()
          .refine(isKnownScope, {
            message: `Unknown scope; known scopes: ${ALL_SCOPES.join(", ")}`,
          })
          .openapi({ enum: [...ALL_SCOPES] }),
      )
      .max(ALL_SCOPES.length * 2),
    rateLimit: RateLimitSchema.optional(),
  })
  .strict();

export const operatorApiKeysRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/api-keys",
      tags: ["API keys"],
      summary: "Issue API keys",
      description: "`key` is shown in this response only; the service stores its SHA-256 hash.",
      request: { body: arrayBody(ApiKeyCreate) },
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
      // Keys are kept in the directory, with the company's row (src/db/shards.ts).
      await requireCompanyScope(c.env, company_id);
      return c.json(await issueApiKeys(scopeIn(c.get("directory"), company_id), items), 201);
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/api-keys/{api_key_id}",
      tags: ["API keys"],
      summary: "Revoke an API key",
      description:
        "The key stops working at once: requests with it get 401, and its open stream-event " +
        "connections (SSE and WebSocket) are closed.",
      request: { params: z.object({ api_key_id: IntId("api_key_id") }) },
      responses: { 204: { description: "Revoked." } },
    }),
    async (c) => {
      const { api_key_id } = c.req.valid("param");
      const row = await revokeApiKey(c.get("directory"), api_key_id);
      if (!row) throw notFound("API key not found");
      // At once in this isolate; other isolates within CREDENTIAL_CACHE_SECONDS, and their
      // stream connections are refused by the credential's lease object from now on.
      forgetCredential(`key:${row.id}`);
      // The isolate's directory anchor predates the revocation, and a replica at it may still
      // hold the key: the next lookup here goes to the primary (src/db/directory-reads.ts).
      forgetDirectoryAnchor(c.env.DB);
      // Its open streams (SSE and WebSocket) close now, not at their client's next reconnect.
      try {
        await closeCredentialConnections(c.env, `key:${row.id}`);
      } catch (error) {
        logError("revoke_close_streams", error);
      }
      return c.body(null, 204);
    },
  );
