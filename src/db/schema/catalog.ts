/**
 * The catalog of a company: machines and their signals, SKUs, operators, work orders, nominal speeds. Part of the data model (src/db/schema.ts).
 */
import { sql } from "drizzle-orm";
import { index, integer, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { companies } from "./tenancy";
import { createdAt, updatedAt } from "./timestamps";

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
