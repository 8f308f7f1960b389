/**
 * The whole data model of the service, as a Drizzle schema for D1 (SQLite).
 *
 * Conventions:
 * - Instants are integers in milliseconds since the Unix epoch (UTC); the HTTP
 *   layer turns them into ISO 8601 strings. Integers compare and index faster
 *   than text and make bucket arithmetic exact.
 * - Every table whose rows belong to a company carries `company_id`, and every
 *   query filters on it through src/db/company-scope.ts, so that no code path can
 *   read another company's row.
 * - Soft deletion is a nullable `deleted_at` where the spec has it (and on the
 *   catalog resources whose rules need it, such as work-order restore).
 *
 * The tables live in `./schema/` by part (tenancy, catalog, history, webhooks,
 * idempotency); this module is the one the code and drizzle-kit read. Migrations in
 * `migrations/` are generated from it by `drizzle-kit generate`.
 */

export * from "./schema/catalog";
export * from "./schema/directory";
export * from "./schema/figures";
export * from "./schema/history";
export * from "./schema/idempotency";
export * from "./schema/tenancy";
export * from "./schema/webhooks";
