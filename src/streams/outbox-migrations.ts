/**
 * The tables of a stream outbox (./stream-outbox.ts), for the steps of each object that holds
 * one (src/db/object-migrations.ts): the outbox's items in order, and the random source name
 * of each outbox of the object.
 */

/**
 * The DDL of an outbox's tables (`IF NOT EXISTS`: an object stored before the runner made
 * them on first use, and `outbox_source` is shared by the object's outboxes).
 *
 * @param table the outbox's table name (`event_outbox`, `forward_outbox`).
 */
export function outboxTables(table: "event_outbox" | "forward_outbox"): string {
  return `
    CREATE TABLE IF NOT EXISTS ${table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS outbox_source (tbl TEXT PRIMARY KEY, id TEXT NOT NULL);
  `;
}
