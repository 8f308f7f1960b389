/**
 * What happened on the floor: shifts and their instances, production logs, the realtime pending marks, stops and their classifications. Part of the data model (src/db/schema.ts).
 */
import { sql } from "drizzle-orm";
import {
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { STOP_ORIGINS } from "../stop-origins";
import { machines, skus } from "./catalog";
import { companies } from "./tenancy";
import { createdAt, updatedAt } from "./timestamps";

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

/**
 * A closure of the plant calendar (docs/metrics.md, "The plant calendar"): a span in which no
 * shift instance of the company (or of its one machine) is scheduled, given as local dates
 * (`startDate` to `endDate` inclusive) or as two instants (the dates null). `startAt` and
 * `endAt` are its instants, ms (for dates, the company zone's midnights, fixed when the
 * closure is written): an instance is closed when its start lies in `[startAt, endAt)`.
 */
export const plantClosures = sqliteTable(
  "plant_closures",
  {
    /** A UUID, global: the company's path names the shard. */
    id: text("id").primaryKey(),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    /** null = every machine of the company, present and future. */
    machineId: integer("machine_id").references(() => machines.id),
    name: text("name").notNull(),
    /** `YYYY-MM-DD`, local; null for a closure given as instants. */
    startDate: text("start_date"),
    /** `YYYY-MM-DD`, local, inclusive; null for a closure given as instants. */
    endDate: text("end_date"),
    startAt: integer("start_at").notNull(),
    endAt: integer("end_at").notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    // The closed-instance probe: the company's closures starting at or before an instant.
    index("plant_closures_company_start_idx").on(t.companyId, t.startAt, t.endAt),
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
    // log can start (src/reports/packed-logs.ts writes the same expression).
    index("production_logs_machine_duration_idx").on(t.machineId, sql`("end" - "start")`),
    // Behind the search's order and its filters on start, end, count and SKU
    // (docs/bounded-work.md). Partial on logs not deleted, the only ones a search sees:
    // the search's count then reads these indexes alone, never the table's rows.
    index("production_logs_active_company_start_idx")
      .on(t.companyId, t.start, t.id)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_active_company_end_idx")
      .on(t.companyId, t.end)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_active_company_count_idx")
      .on(t.companyId, t.count)
      .where(sql`deleted_at IS NULL`),
    index("production_logs_active_company_sku_start_idx")
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
    /**
     * Set on a stop the machine's signals detected (docs/machine-state.md): the key its
     * machine's `SignalStore` gives it, so that a resent write finds the row it made; null on
     * a stop recorded through the operator API (and on a detected stop a person edited).
     */
    detectionKey: text("detection_key"),
    /**
     * How the stop came to be (docs/machine-state.md, "Origin"): `detected` from the
     * machine's signals by its `SignalStore`, `operatorApi` recorded through the operator API.
     * Set once, at creation: a detected stop a person edits stays `detected`.
     */
    origin: text("origin", { enum: STOP_ORIGINS }).notNull().default("operatorApi"),
    /**
     * The machine's detected downtime this recorded stop took in (one breakdown, one stop:
     * `start_time`/`end_time` cover both); null when it took in none. `detected_end_time`
     * null with a start: the downtime goes on.
     */
    detectedStartTime: integer("detected_start_time"),
    detectedEndTime: integer("detected_end_time"),
    /**
     * The stop's own times as recorded, kept while it takes in detected downtime
     * (`detected_start_time` set), so that the detector can give the time back; null
     * otherwise (the recorded times are then `start_time`/`end_time`).
     */
    recordedStartTime: integer("recorded_start_time"),
    recordedEndTime: integer("recorded_end_time"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("stops_detection_key_unique").on(t.detectionKey),
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
