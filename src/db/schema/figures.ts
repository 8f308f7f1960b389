/**
 * Figures of closed shift instances, kept once computed (docs/bounded-work.md, "KPIs"):
 * the KPI report reads them instead of the instances' logs and stops. SQL triggers
 * (migrations/0009_figure-triggers.sql and 0013) delete a machine's rows that a written log, stop or classification
 * overlaps, and count each machine's writes, so a kept figure is never stale. Part of
 * the data model (src/db/schema.ts).
 */
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { machines } from "./catalog";
import { shiftInstances } from "./history";
import { companies } from "./tenancy";

/** The additive figures of one closed instance, split by SKU, operator and work order. */
export const instanceFigures = sqliteTable(
  "instance_figures",
  {
    shiftInstanceId: integer("shift_instance_id")
      .primaryKey()
      .references(() => shiftInstances.id),
    companyId: integer("company_id")
      .notNull()
      .references(() => companies.id),
    machineId: integer("machine_id")
      .notNull()
      .references(() => machines.id),
    /** The instance's window, ms (what the triggers compare a written record with). */
    start: integer("start").notNull(),
    end: integer("end").notNull(),
    /** JSON: `[[skuId, operatorId, simpleWorkOrderId, ...figures], ...]` (src/reports/figure-cache.ts). */
    parts: text("parts").notNull(),
    /** The parts summed, as one part of null keys: what a grouping without SKU, operator or work order reads. */
    whole: text("whole").notNull(),
  },
  (t) => [index("instance_figures_machine_start_idx").on(t.machineId, t.start)],
);

/**
 * How many times a machine's logs, stops or classifications were written (bumped by
 * the triggers). A report keeps the figures it computed only if the count it read
 * before reading the records is still the count when it writes them.
 */
export const machineWrites = sqliteTable("machine_writes", {
  machineId: integer("machine_id")
    .primaryKey()
    .references(() => machines.id),
  count: integer("count").notNull().default(0),
});
