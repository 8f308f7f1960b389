/**
 * Pull sync on the searches: `updatedAt` (the date operators on the row's last change) and
 * `includeDeleted` (soft-deleted rows too, with their `deletedAt`) and `syncAfter` (the keyset
 * cursor: after this (`updatedAt`, id)). A search given any of them is ordered by
 * (`updatedAt`, id), so that an integration reads every change by moving the cursor forward
 * (docs/stream-events.md, "Pull sync").
 */
import { z } from "@hono/zod-openapi";
import { asc, type Column, isNull, type SQL, sql } from "drizzle-orm";
import { type DateComparison, DateComparisonFilter, DateTimeMs, dateConditions } from "./filters";
import { dateTime } from "./instants";

/**
 * The answer fields of pull sync, spread into a row schema of a resource whose spec shape
 * has no instants of its own (operators, simple work orders): when the row was created and
 * last changed, and when it was deleted (only rows asked for with `includeDeleted`).
 */
export const SyncStampFields = {
  createdAt: dateTime(),
  updatedAt: dateTime("The last change (a soft delete is a change): the pull-sync key."),
  deletedAt: dateTime("Set only on rows returned with `includeDeleted: true`.").nullable(),
};

/** The request fields of pull sync, spread into a search's filter schema. */
export const SyncFilterFields = {
  updatedAt: DateComparisonFilter.openapi({
    description:
      "On the row's last change (a soft delete is a change). Given, or with `includeDeleted`, " +
      "rows come ordered by (`updatedAt`, id) for pull sync (docs/stream-events.md).",
  }),
  includeDeleted: z.boolean().nullish().openapi({
    description: "true = soft-deleted rows too, with their `deletedAt` (default false).",
  }),
  syncAfter: z
    .object({
      updatedAt: DateTimeMs,
      id: z.union([z.string().min(1).max(100), z.number().int()]),
    })
    .strict()
    .nullish()
    .openapi({
      description:
        "The pull-sync cursor: only rows after this (`updatedAt`, id), in sync order; give " +
        "the last row received. Rows changed since come again, later (docs/stream-events.md).",
    }),
};

/** The pull-sync fields of a parsed search body (`SyncFilterFields`). */
export interface SyncFilters {
  updatedAt?: DateComparison;
  includeDeleted?: boolean | null;
  syncAfter?: { updatedAt: number; id: string | number } | null;
}

/** True when the search asks for sync order. */
function isSync(filters: SyncFilters): boolean {
  return filters.updatedAt != null || filters.includeDeleted === true || filters.syncAfter != null;
}

/**
 * The conditions of pull sync: the `updatedAt` operators, "not deleted" unless
 * `includeDeleted`, and after the `syncAfter` cursor.
 *
 * @param columns the table's `updatedAt` and `deletedAt` (ms) and its id.
 */
export function syncConditions(
  columns: { updatedAt: Column; deletedAt: Column; id: Column },
  filters: SyncFilters,
): SQL[] {
  const out = filters.updatedAt ? dateConditions(columns.updatedAt, filters.updatedAt) : [];
  if (filters.includeDeleted !== true) out.push(isNull(columns.deletedAt));
  const after = filters.syncAfter;
  if (after) {
    // Keyset order (updatedAt, id): strictly after the cursor.
    out.push(
      sql`(${columns.updatedAt} > ${after.updatedAt} OR (${columns.updatedAt} = ${after.updatedAt} AND ${columns.id} > ${after.id}))`,
    );
  }
  return out;
}

/**
 * The order of a search: (`updatedAt`, id) for pull sync, else the search's own.
 *
 * @param fallback the search's usual order.
 */
export function syncOrder(
  columns: { updatedAt: Column; id: Column },
  filters: SyncFilters,
  fallback: SQL[],
): SQL[] {
  return isSync(filters) ? [asc(columns.updatedAt), asc(columns.id)] : fallback;
}
