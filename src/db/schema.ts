/**
 * The whole data model of the service, as a Drizzle schema for D1 (SQLite).
 *
 * Conventions:
 * - Instants are integers in milliseconds since the Unix epoch (UTC); the HTTP
 *   layer turns them into ISO 8601 strings. Integers compare and index faster
 *   than text and make bucket arithmetic exact.
 * - Every table whose rows belong to a company carries `company_id`, and every
 *   query filters on it, so that no code path can read another company's row.
 * - Soft deletion is a nullable `deleted_at` where the spec has it (and on the
 *   catalog resources whose rules need it, such as work-order restore).
 *
 * Migrations in `migrations/` are generated from this file by `drizzle-kit generate`.
 */
import { sql } from "drizzle-orm";
import {
  blob,
  foreignKey,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

const createdAt = () =>
  integer("created_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);
const updatedAt = () =>
  integer("updated_at").notNull().default(sql`(CAST(unixepoch('subsec') * 1000 AS INTEGER))`);

/** A customer company; every credential acts for exactly one. */
export const companies = sqliteTable("companies", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull(),
  /** IANA time zone name, for example `Europe/Rome`; shifts are wall-clock times in it. */
  timezone: text("timezone").notNull(),
  /** Webhook signing secret, `whsec_` + 32 random bytes in base64url. */
  webhookSecret: text("webhook_secret").notNull(),
  /** The secret before the last rotation, still signed with until `previousWebhookSecretExpiresAt`. */
  previousWebhookSecret: text("previous_webhook_secret"),
  previousWebhookSecretExpiresAt: integer("previous_webhook_secret_expires_at"),
  /**
   * Days of raw signal samples each machine's signal store keeps; older samples are
   * removed by the store's alarm, their hour and minute rollups stay. Null = kept forever.
   */
  signalRetentionDays: integer("signal_retention_days"),
  createdAt: createdAt(),
});

/** API keys (`x-api-key`); only the SHA-256 hash of a key is stored. */
export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    /** The first characters of the key, safe to display (for example `pm_4f3a9c1b`). */
    prefix: text("prefix").notNull(),
    /** Lowercase hex SHA-256 of the whole key. */
    keyHash: text("key_hash").notNull(),
    /** JSON array of `section.action` scopes. */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** Requests allowed per `rateLimitPeriodSeconds`; null = the default from settings. */
    rateLimitRequests: integer("rate_limit_requests"),
    rateLimitPeriodSeconds: integer("rate_limit_period_seconds"),
    createdAt: createdAt(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_key_hash_unique").on(t.keyHash),
    index("api_keys_company_idx").on(t.companyId),
  ],
);

export const machines = sqliteTable(
  "machines",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    /** Public identifier for the signals endpoints; null for machines without one. */
    uuid: text("uuid"),
    name: text("name").notNull(),
    externalName: text("external_name"),
    isCountEnabled: integer("is_count_enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("machines_uuid_unique").on(t.uuid),
    index("machines_company_idx").on(t.companyId, t.id),
  ],
);

/** One sensor channel of a machine. */
export const signals = sqliteTable(
  "signals",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    publicId: text("public_id").notNull(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    name: text("name").notNull(),
    displayName: text("display_name").notNull(),
    /** Kind of channel (for example `analog`, `counter`); signals without a kind are not listed. */
    kind: text("kind"),
    descriptionEn: text("description_en"),
    descriptionEs: text("description_es"),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("signals_public_id_unique").on(t.publicId),
    index("signals_machine_idx").on(t.companyId, t.machineId),
  ],
);

/** Products (stock-keeping units). */
export const skus = sqliteTable(
  "skus",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    sku: text("sku").notNull(),
    name: text("name"),
    description: text("description"),
    unit: text("unit").default("units"),
    archived: integer("archived", { mode: "boolean" }).notNull().default(false),
    /** `normalizeForSearch` (src/http/search.ts) of `sku`, `name`, `description`, `unit`, kept by every write. */
    skuSearch: text("sku_search"),
    nameSearch: text("name_search"),
    descriptionSearch: text("description_search"),
    unitSearch: text("unit_search"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    index("skus_company_idx").on(t.companyId, t.sku),
    // Pull sync's order (updatedAt, id), src/http/sync.ts.
    index("skus_company_updated_idx").on(t.companyId, t.updatedAt, t.id),
  ],
);

export const operators = sqliteTable(
  "operators",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    firstName: text("first_name"),
    lastName: text("last_name"),
    email: text("email"),
    /** `normalizeForSearch` (src/http/search.ts) of `first_name`, `last_name`, kept by every write. */
    firstNameSearch: text("first_name_search"),
    lastNameSearch: text("last_name_search"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    index("operators_company_idx").on(t.companyId),
    index("operators_company_updated_idx").on(t.companyId, t.updatedAt, t.id),
  ],
);

/** Simple work orders: a name per company, idempotent by name, restorable after deletion. */
export const simpleWorkOrders = sqliteTable(
  "simple_work_orders",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("simple_work_orders_company_name_unique").on(t.companyId, t.name),
    index("simple_work_orders_company_updated_idx").on(t.companyId, t.updatedAt, t.id),
  ],
);

/** Work orders named on production logs (`workOrder`: found or created by name). */
export const workOrders = sqliteTable(
  "work_orders",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    description: text("description"),
    status: text("status").notNull().default("InProgress"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("work_orders_company_name_unique").on(t.companyId, t.name)],
);

/** Expected rate of a machine/SKU pair, in SKU units per minute. */
export const nominalSpeeds = sqliteTable(
  "nominal_speeds",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    skuId: text("sku_id")
      .notNull()
      .references(() => skus.id),
    nominalSpeed: real("nominal_speed").notNull(),
    countingFactor: real("counting_factor").notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("nominal_speeds_active_pair_unique")
      .on(t.companyId, t.machineId, t.skuId)
      .where(sql`deleted_at IS NULL`),
    index("nominal_speeds_company_updated_idx").on(t.companyId, t.updatedAt, t.id),
  ],
);

/** A recurring shift, as local wall-clock times in the company's time zone (docs/metrics.md). */
export const shiftDefinitions = sqliteTable(
  "shift_definitions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    /** `HH:MM`, local time. */
    startTime: text("start_time").notNull(),
    /** `HH:MM`, local time; `endTime <= startTime` ends the next day. */
    endTime: text("end_time").notNull(),
    /** JSON array of ISO weekdays (1 = Monday ... 7 = Sunday) of the shift's start. */
    weekdays: text("weekdays", { mode: "json" }).$type<number[]>().notNull(),
    isConsidered: integer("is_considered", { mode: "boolean" }).notNull().default(true),
    /** True when the definition applies to every machine of the company. */
    allMachines: integer("all_machines", { mode: "boolean" }).notNull().default(true),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("shift_definitions_company_idx").on(t.companyId)],
);

/** Machines a shift definition applies to, when it does not apply to all. */
export const shiftDefinitionMachines = sqliteTable(
  "shift_definition_machines",
  {
    shiftDefinitionId: integer("shift_definition_id")
      .notNull()
      .references(() => shiftDefinitions.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    companyId: integer("company_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.shiftDefinitionId, t.machineId] })],
);

/** One occurrence of a shift definition for one machine, with concrete instants. */
export const shiftInstances = sqliteTable(
  "shift_instances",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    shiftDefinitionId: integer("shift_definition_id")
      .notNull()
      .references(() => shiftDefinitions.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    start: integer("start").notNull(),
    end: integer("end").notNull(),
  },
  (t) => [
    uniqueIndex("shift_instances_definition_machine_start_unique").on(
      t.shiftDefinitionId,
      t.machineId,
      t.start,
    ),
    // Covers the metrics report's count and page filters (company, start range,
    // machines, definition, end) without reading the rows.
    index("shift_instances_company_start_idx").on(
      t.companyId,
      t.start,
      t.machineId,
      t.shiftDefinitionId,
      t.end,
    ),
    index("shift_instances_machine_start_idx").on(t.machineId, t.start),
  ],
);

/** A closed (or, while live, open) interval of production of one machine. */
export const productionLogs = sqliteTable(
  "production_logs",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    skuId: text("sku_id").references(() => skus.id),
    shiftInstanceId: integer("shift_instance_id").references(() => shiftInstances.id),
    operatorId: integer("operator_id"),
    workOrderId: text("work_order_id"),
    simpleWorkOrderId: text("simple_work_order_id"),
    /** `correct`, `defects` or `total`. */
    type: text("type", { enum: ["correct", "defects", "total"] })
      .notNull()
      .default("total"),
    /** Items in the SKU's unit: sensorCount x countingFactor. */
    count: integer("count").notNull(),
    sensorCount: integer("sensor_count").notNull(),
    /** SKU units per minute. */
    nominalSpeed: real("nominal_speed").notNull(),
    countingFactor: real("counting_factor").notNull().default(1),
    start: integer("start").notNull(),
    end: integer("end").notNull(),
    isReviewed: integer("is_reviewed", { mode: "boolean" }).notNull().default(false),
    isAutomated: integer("is_automated", { mode: "boolean" }).notNull().default(false),
    live: integer("live", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    index("production_logs_company_start_idx").on(t.companyId, t.start, t.id),
    index("production_logs_machine_start_idx").on(t.machineId, t.start),
    index("production_logs_shift_instance_idx").on(t.shiftInstanceId),
    // The machine's longest log in one seek: how far before a window an overlapping
    // log can start (src/reports/page-spans.ts writes the same expression).
    index("production_logs_machine_duration_idx").on(t.machineId, sql`("end" - "start")`),
    // Behind the search's order and its filters on start, end, count and SKU
    // (docs/bounded-work.md). Partial on live logs, the only ones a search sees:
    // the search's count then reads these indexes alone, never the table's rows.
    index("production_logs_live_company_start_idx")
      .on(t.companyId, t.start, t.id)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_live_company_end_idx")
      .on(t.companyId, t.end)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_live_company_count_idx")
      .on(t.companyId, t.count)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_live_company_sku_start_idx")
      .on(t.companyId, t.skuId, t.start)
      .where(sql`deleted_at IS NULL`),
  ],
);

/**
 * Machines whose realtime Durable Object may hold writes not yet shown in
 * `production_logs` (write-behind, see src/realtime/realtime-machine.ts). The
 * object adds its row, in the same D1 batch as its logs, before the first such
 * write returns, and removes it once everything is shown and it has been quiet;
 * readers of production logs ask these objects to catch up first.
 */
export const realtimePending = sqliteTable(
  "realtime_pending",
  {
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    /** When the row was added, ms. */
    since: integer("since").notNull(),
  },
  (t) => [primaryKey({ columns: [t.companyId, t.machineId] })],
);

/** A stop of a machine; open while `end_time` is null. */
export const stops = sqliteTable(
  "stops",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    startTime: integer("start_time").notNull(),
    endTime: integer("end_time"),
    isProgrammed: integer("is_programmed", { mode: "boolean" }).notNull(),
    isIncludedInAvailability: integer("is_included_in_availability", { mode: "boolean" })
      .notNull()
      .default(true),
    isIncludedInStops: integer("is_included_in_stops", { mode: "boolean" }).notNull().default(true),
    isManual: integer("is_manual", { mode: "boolean" }).notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    index("stops_machine_start_idx").on(t.machineId, t.startTime),
    index("stops_company_start_idx").on(t.companyId, t.startTime, t.id),
    // Open stops (end_time NULL) of a machine in one seek.
    index("stops_machine_end_idx").on(t.machineId, t.endTime),
    // Behind the stops report's endDate filter.
    index("stops_company_end_idx").on(t.companyId, t.endTime),
    // The machine's longest closed stop in one seek (see production_logs_machine_duration_idx).
    index("stops_machine_duration_idx").on(t.machineId, sql`("end_time" - "start_time")`),
  ],
);

/** The company's catalog of stop causes: components, specific causes and general causes. */
export const stopCauses = sqliteTable(
  "stop_causes",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    kind: text("kind", { enum: ["component", "specific_cause", "general_cause"] }).notNull(),
    name: text("name").notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("stop_causes_company_kind_name_unique").on(t.companyId, t.kind, t.name)],
);

/** The classification of one stop (at most one per stop). */
export const stopClassifications = sqliteTable(
  "stop_classifications",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    stopId: integer("stop_id")
      .notNull()
      .references(() => stops.id),
    description: text("description"),
    componentId: text("component_id").references(() => stopCauses.id),
    specificCauseId: text("specific_cause_id").references(() => stopCauses.id),
    generalCauseId: text("general_cause_id").references(() => stopCauses.id),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex("stop_classifications_stop_unique").on(t.stopId)],
);

/** A webhook registration: one URL for one event type. */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    name: text("name").notNull(),
    url: text("url").notNull(),
    eventType: text("event_type").notNull(),
    createdAt: createdAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [index("webhooks_company_idx").on(t.companyId, t.eventType)],
);

/** An event, written in the same batch as the change it reports (the outbox). */
export const webhookEvents = sqliteTable(
  "webhook_events",
  {
    /** `eventId`, identical across retries and replays. */
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    eventType: text("event_type").notNull(),
    /** The exact body sent, so that every attempt signs the same bytes. */
    body: text("body").notNull(),
    /** `eventTimestamp`: when the event was queued, ms since the epoch. */
    eventTimestamp: integer("event_timestamp").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("webhook_events_company_idx").on(t.companyId, t.createdAt)],
);

/** One event for one registration; one Queue message each. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    eventId: text("event_id")
      .notNull()
      .references(() => webhookEvents.id),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    /** When the Queue message was last sent; null = not sent yet (the sweeper sends it). */
    enqueuedAt: integer("enqueued_at"),
    /** Rounds completed so far. */
    rounds: integer("rounds").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
    index("webhook_deliveries_pending_idx").on(t.status, t.enqueuedAt),
  ],
);

/** Every attempt of a delivery. */
export const webhookAttempts = sqliteTable(
  "webhook_attempts",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    companyId: integer("company_id").notNull(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    requestId: text("request_id").notNull(),
    at: integer("at").notNull(),
    durationMs: integer("duration_ms").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.at)],
);

/**
 * Responses kept for `Idempotency-Key` retries (src/http/idempotency.ts): one row
 * per credential and key, first `in_flight` (a lock, with its owner's token),
 * then `done` with the stored response, until `expires_at` (24 hours).
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    /** `Principal.credentialId`: keys are scoped to the credential that sent them. */
    credentialId: text("credential_id").notNull(),
    key: text("key").notNull(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    /** Lowercase hex SHA-256 of the method, path, query and canonical JSON body. */
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_flight", "done"] }).notNull(),
    /** Token of the request holding the lock; null once done. */
    lockToken: text("lock_token"),
    /** When the lock was taken, ms; a lock older than the lock timeout is abandoned. */
    lockedAt: integer("locked_at").notNull(),
    /** The stored response: status, headers (JSON object) and body text. */
    status: integer("status"),
    headers: text("headers"),
    body: text("body"),
    createdAt: createdAt(),
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.credentialId, t.key] }),
    index("idempotency_keys_expiry_idx").on(t.credentialId, t.expiresAt),
  ],
);

/**
 * A stored response too large for one row (D1 rows hold at most 2 MB): its body,
 * gzip-compressed, in pieces of at most 1 MB (`seq` from 0), written in the same batch
 * that marks the key done and deleted with the key (src/http/idempotency.ts).
 */
export const idempotencyChunks = sqliteTable(
  "idempotency_chunks",
  {
    credentialId: text("credential_id").notNull(),
    key: text("key").notNull(),
    seq: integer("seq").notNull(),
    data: blob("data", { mode: "buffer" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.credentialId, t.key, t.seq] }),
    foreignKey({
      columns: [t.credentialId, t.key],
      foreignColumns: [idempotencyKeys.credentialId, idempotencyKeys.key],
    }).onDelete("cascade"),
  ],
);
