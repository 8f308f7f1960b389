/**
 * The whole data model as one Drizzle schema for D1 (SQLite): the tables by part in
 * `./schema/` (tenancy, catalog, history, webhooks, idempotency); this module is what the code
 * and drizzle-kit read (`migrations/` comes from `drizzle-kit generate`). Instants are integer
 * ms since the epoch (UTC); every company-owned table carries `company_id`, always filtered
 * through ./company-scope.ts; soft delete is a nullable `deleted_at`.
 * docs/architecture.md ("Tenant isolation and soft delete").
 */

export * from "./schema/catalog";
export * from "./schema/directory";
export * from "./schema/figures";
export * from "./schema/history";
export * from "./schema/idempotency";
export * from "./schema/tenancy";
export * from "./schema/webhooks";
