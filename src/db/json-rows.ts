/**
 * Many rows in one statement: `INSERT ... SELECT ... FROM json_each(?)` with the rows bound as
 * one JSON array parameter, so a create's statement count stays constant under D1's
 * per-invocation query limit (1,000 paid, 50 free). Rows are packed into chunks of at most
 * `JSON_CHUNK_BYTES` (D1 refuses a string over 2,000,000 bytes).
 * docs/bounded-work.md ("Creates: a constant number of statements").
 */
import { type SQL, sql } from "drizzle-orm";
import type { CompanyRef } from "./company-scope";

/** Most UTF-8 bytes of one chunk's JSON: half of D1's 2,000,000-byte string limit. */
const JSON_CHUNK_BYTES = 1_000_000;

const encoder = new TextEncoder();

/**
 * Packs rows into JSON arrays of at most `maxBytes` UTF-8 bytes each (a single
 * larger row gets a chunk of its own), keeping their order.
 *
 * @param rows the rows, each a JSON-serializable array (one element per column).
 * @returns the JSON texts, one per chunk; empty when there are no rows.
 */
export function jsonChunks(
  rows: readonly (readonly unknown[])[],
  maxBytes: number = JSON_CHUNK_BYTES,
): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let bytes = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    const size = encoder.encode(text).length + 1;
    if (current.length > 0 && bytes + size > maxBytes) {
      out.push(`[${current.join(",")}]`);
      current = [];
      bytes = 2;
    }
    current.push(text);
    bytes += size;
  }
  if (current.length > 0) out.push(`[${current.join(",")}]`);
  return out;
}

/**
 * Column `i` of the current `json_each` row (`value` is one row array). A
 * JSON number comes back as an INTEGER or REAL, a string as TEXT, `true` and
 * `false` as 1 and 0, `null` as NULL.
 */
export function jsonColumn(i: number, from = "value"): SQL {
  return sql.raw(`json_extract(${from}, '$[${i}]')`);
}

/**
 * What one column of a catalog insert takes: the row's next JSON value (`json`, in the
 * order of the row arrays), the company (`company`), the insert's instant (`now`), or NULL.
 */
export type JsonRowColumn = "json" | "company" | "now" | "null";

/**
 * The `SELECT`s of a company's bulk insert, one per chunk of rows (`jsonChunks`): each
 * `SELECT <columns> FROM json_each(?) ORDER BY key`, for `db.insert(table).select(...)`,
 * which lists every column of the table in order. The catalogs (SKUs, operators, nominal
 * speeds, simple work orders) insert through it, so a create of 1,000 items is one
 * statement per chunk whatever the table.
 *
 * @param scope the company every row belongs to.
 * @param columns one entry per column of the table, in table order.
 * @param rows one array per row: its `json` columns' values, in order.
 * @param options.now the instant of the `now` columns, ms since the epoch.
 * @param options.onConflict the statement ends in an `ON CONFLICT` clause: SQLite then
 *   needs a `WHERE` in the `SELECT` to parse it (`WHERE true`).
 * @returns the `SELECT`s, in row order; none when there are no rows.
 */
export function jsonRowSelects(
  scope: CompanyRef,
  columns: readonly JsonRowColumn[],
  rows: readonly (readonly unknown[])[],
  options: { now: number; onConflict?: boolean },
): SQL[] {
  let next = 0;
  const fixed: Record<Exclude<JsonRowColumn, "json">, SQL> = {
    company: sql`CAST(${scope.companyId} AS INTEGER)`,
    now: sql`CAST(${options.now} AS INTEGER)`,
    null: sql`NULL`,
  };
  const parts = columns.map((column) => (column === "json" ? jsonColumn(next++) : fixed[column]));
  const list = sql.join(parts, sql`, `);
  const where = options.onConflict ? sql` WHERE true` : sql``;
  return jsonChunks(rows).map(
    (chunk) => sql`SELECT ${list} FROM json_each(${chunk})${where} ORDER BY key`,
  );
}
