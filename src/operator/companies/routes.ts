/**
 * Operator routes for companies: create and list them, their signal retention and hot window,
 * their webhook signing secret (their queries in ./queries.ts). Their API keys are in
 * ../api-keys/routes.ts (docs/operator-api.md, "Companies, keys and the webhook secret").
 */
import { z } from "@hono/zod-openapi";
import type { CompanyScope } from "../../db/company-scope";
import { placeableShards } from "../../db/shard-placement";
import { SHARD_BINDING } from "../../db/shards";
import type { Env } from "../../env";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, objectBody } from "../../http/schemas";
import { forgetCompanySignals } from "../../resources/signals/signal-lookup";
import { requireCompanyScope } from "../lookups";
import { companyRoute, operatorRoute } from "../schemas";
import {
  createCompanies,
  listCompanies,
  rotateWebhookSecret,
  setSignalHotWindow,
  setSignalRetention,
} from "./queries";

/**
 * The fixed-offset zones of the IANA database, `Etc/GMT-14` to `Etc/GMT+12` (POSIX signs:
 * `Etc/GMT+5` is UTC-5). ICU does not list them among its geographic zones, but they are
 * canonical IANA names that a plant without daylight saving time may use.
 */
const FIXED_OFFSET_ZONES = Array.from({ length: 27 }, (_, i) => i - 14)
  .filter((hours) => hours !== 0)
  .map((hours) => `Etc/GMT${hours > 0 ? "+" : "-"}${Math.abs(hours)}`);

/**
 * The time zones a company can have: the IANA names the runtime's ICU lists
 * (`Intl.supportedValuesOf`, canonical names only), the fixed-offset `Etc/GMT±N` zones, and
 * `UTC`. The operator document lists them as the `enum` of `timezone`, so what it allows is
 * exactly what is accepted (an alias such as `US/Eastern`, which `Intl.DateTimeFormat` would
 * also take, is refused).
 */
const TIME_ZONES: readonly string[] = [
  ...new Set(["UTC", ...FIXED_OFFSET_ZONES, ...Intl.supportedValuesOf("timeZone")]),
].sort();
const KNOWN_TIME_ZONES = new Set(TIME_ZONES);

/** True when `tz` is one of {@link TIME_ZONES}. */
function isValidTimeZone(tz: string): boolean {
  return KNOWN_TIME_ZONES.has(tz);
}

const CompanySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    timezone: z.string(),
    shard: z
      .string()
      .nullable()
      .openapi({
        description:
          "The binding name of the D1 shard that holds the company's rows. Every company this " +
          "API creates is placed on one, so it is null only for a company whose directory row " +
          "is older than the shards (written before the migration that added the column, which " +
          "placed no existing company): the deployment reaches none of its rows, its public " +
          "requests answer 503 and its operator routes 404.",
        example: "SHARD_0",
      }),
  })
  .openapi("Company");

const CompanyCreate = z
  .object({
    name: z.string().trim().regex(/\S/, "Must not be blank").max(200),
    timezone: z
      .string()
      .refine(isValidTimeZone, { message: "Must be an IANA time zone, for example Europe/Rome" })
      .openapi({ enum: [...TIME_ZONES], example: "Europe/Rome" }),
    shard: z
      .string()
      .regex(SHARD_BINDING, "Must be a shard binding name, for example SHARD_0")
      .optional()
      .openapi({
        description:
          "The shard to place the company on (one of this deployment's shards); omitted = " +
          "the shard with the fewest companies.",
        example: "SHARD_1",
      }),
  })
  .strict();

const SignalRetention = z
  .object({
    days: z.number().int().min(1).max(36_500).nullable().openapi({
      description: "Days of raw samples kept; null = kept forever.",
      example: 90,
    }),
  })
  .strict()
  .openapi("SignalRetention");

const SignalHotWindow = z
  .object({
    days: z
      .number()
      .int()
      .min(1)
      .max(36_500)
      .openapi({
        description:
          "Days of raw samples each machine's signal store keeps in itself; the samples of older " +
          "hours move to the Parquet archive on R2. Default 35.",
        example: 35,
      }),
  })
  .strict()
  .openapi("SignalHotWindow");

/**
 * Sets one of a company's signal settings (retention, hot window: days) with `set`, then
 * makes this isolate forget the company's cached signals, so its stores learn the setting
 * with their next ingestion call, or else at their next alarm (hourly), which reads it.
 *
 * @returns the setting now in force.
 * @throws ApiError 404 when the company does not exist.
 */
async function setSignalDays<D extends number | null>(
  env: Env,
  companyId: number,
  days: D,
  set: (env: Env, scope: CompanyScope, days: D) => Promise<{ days: D } | null>,
): Promise<{ days: D }> {
  const row = await set(env, await requireCompanyScope(env, companyId), days);
  if (!row) throw notFound("Company not found");
  forgetCompanySignals(companyId);
  return { days: row.days };
}

export const operatorCompaniesRoutes = createRouter()
  .openapi(
    companyRoute({
      method: "put",
      path: "/companies/{company_id}/signal-hot-window",
      tags: ["Companies"],
      summary: "Set how long raw signal samples stay in the machines' stores",
      description:
        "Each machine's signal store moves the samples of the hours that ended more than " +
        "`days` ago into Parquet objects on R2 (one per machine, signal and UTC day, or month " +
        "for sparse days), keeps their hour and minute rollups, and answers every query as " +
        "before, reading archived hours from R2 when a query needs their samples. A store " +
        "learns the setting with the machine's next ingestion call, or else within the hour " +
        "(its hourly alarm reads it), so a machine that no longer uploads is archived too. " +
        "Default 35 days.",
      request: {
        body: objectBody(SignalHotWindow),
      },
      responses: { 200: jsonResponse(SignalHotWindow, "The setting now in force.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const { days } = c.req.valid("json");
      return c.json(await setSignalDays(c.env, company_id, days, setSignalHotWindow), 200);
    },
  )
  .openapi(
    companyRoute({
      method: "put",
      path: "/companies/{company_id}/signal-retention",
      tags: ["Companies"],
      summary: "Set how long raw signal samples are kept",
      description:
        "Raw samples older than `days` are removed by each machine's signal store (its alarm, " +
        "hourly), and so are the archive's objects on R2 once their whole day or month is " +
        "older; their hour and minute rollups are kept, so queries of whole minutes and hours " +
        "still answer. A store learns the setting with the machine's next ingestion call, or " +
        "else within the hour (its hourly alarm reads it), so a machine that no longer " +
        "uploads is pruned too.",
      request: {
        body: objectBody(SignalRetention),
      },
      responses: { 200: jsonResponse(SignalRetention, "The setting now in force.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const { days } = c.req.valid("json");
      return c.json(await setSignalDays(c.env, company_id, days, setSignalRetention), 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/companies",
      tags: ["Companies"],
      summary: "Create companies",
      description:
        "All or none. Each company is placed on one D1 shard: the one `shard` names, or else " +
        "the shard with the fewest companies (the first in binding order among equals), so " +
        "that companies created one after the other land on different shards. A `shard` this " +
        "deployment does not have is a 422.",
      request: { body: arrayBody(CompanyCreate) },
      responses: {
        201: jsonResponse(
          z.array(CompanySchema.extend({ webhookSecret: z.string() })),
          "Created companies with their shard and signing secret.",
        ),
      },
    }),
    async (c) => {
      const items = c.req.valid("json");
      const shards = await placeableShards(c.env);
      const names = new Set(shards.map((shard) => shard.name));
      const issues: ValidationIssue[] = [];
      items.forEach((item, i) => {
        if (item.shard !== undefined && !names.has(item.shard)) {
          issues.push({
            loc: ["body", i, "shard"],
            msg: `No such shard; this deployment has ${[...names].join(", ") || "none"}`,
            type: "value_error.shard",
          });
        }
      });
      if (issues.length > 0) throw new ApiError(422, issues);
      if (shards.length === 0) throw new ApiError(503, "No shard is configured");
      return c.json(await createCompanies(c.env, shards, items), 201);
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
      return c.json(await listCompanies(c.env), 200);
    },
  )
  .openapi(
    companyRoute({
      method: "post",
      path: "/companies/{company_id}/webhook-secret/rotate",
      tags: ["Companies"],
      summary: "Rotate the webhook signing secret",
      description: "Issues a new secret; for 24 hours deliveries carry both signatures, new first.",
      responses: { 200: jsonResponse(z.object({ webhookSecret: z.string() }), "The new secret.") },
    }),
    async (c) => {
      const { company_id } = c.req.valid("param");
      const webhookSecret = await rotateWebhookSecret(
        c.env,
        await requireCompanyScope(c.env, company_id),
      );
      if (webhookSecret === null) throw notFound("Company not found");
      return c.json({ webhookSecret }, 200);
    },
  );
