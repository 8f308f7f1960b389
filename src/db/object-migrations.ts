/**
 * The one way a Durable Object's SQLite gets its schema: an ordered list of steps per object
 * class (its `*-migrations.ts` file, the object's whole schema in one place), run by
 * {@link migrateObject} synchronously at the top of the object's constructor (no event
 * reaches an object before its constructor returns; a `blockConcurrencyWhile` callback would
 * start only after it, when the constructor's own reads have failed on missing tables). The
 * database's `object_schema` row counts the steps already applied, so each step runs once,
 * in order, each in its own transaction. (`PRAGMA user_version` is SQLite's own counter, but
 * a Durable Object's SQLite refuses it: `SQLITE_AUTH`.)
 *
 * Objects stored before the runner have no `object_schema` (version 0) and their tables
 * already: a step 1 is written for them (`CREATE TABLE IF NOT EXISTS`, and
 * {@link addMissingColumn} for a column the old code added later), so that an old database
 * and a new one end at the same schema. Steps after 1 are plain DDL. A step is never edited
 * once deployed: a change of schema is a new step at the end of the list.
 */

/** One schema step: DDL text (several statements allowed), or a function of the database. */
export type ObjectMigration = string | ((sql: SqlStorage) => void);

/**
 * Brings an object's database to the last of its steps: runs the steps after its version
 * (`object_schema`, 0 when missing), in order, each with its new version in one transaction.
 * Synchronous: call it at the top of the constructor, before any read of the tables. A
 * database already past the list (a rollback of the Worker) is left as it is: its steps only
 * added what the older code ignores.
 *
 * @param storage the object's storage (`ctx.storage`).
 * @param steps the object's steps, oldest first; never reordered or edited once deployed.
 * @returns the database's version after the run (`steps.length`, or more after a rollback).
 */
export function migrateObject(
  storage: DurableObjectStorage,
  steps: readonly ObjectMigration[],
): number {
  const sql = storage.sql;
  sql.exec(
    "CREATE TABLE IF NOT EXISTS object_schema " +
      "(id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
  );
  const row = sql
    .exec<{ version: number }>("SELECT version FROM object_schema WHERE id = 1")
    .toArray()[0];
  const version = row?.version ?? 0;
  for (let next = version; next < steps.length; next++) {
    const step = steps[next];
    storage.transactionSync(() => {
      if (typeof step === "string") sql.exec(step);
      else step?.(sql);
      sql.exec(
        "INSERT INTO object_schema (id, version) VALUES (1, ?) " +
          "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
        next + 1,
      );
    });
  }
  return Math.max(version, steps.length);
}

/**
 * Adds a column to a table when it lacks it: for a step 1 that meets a database made by code
 * from before the runner, where a column was added later by a probe of its own.
 *
 * @param sql the object's database.
 * @param table the table, which exists.
 * @param column the column's name.
 * @param definition the column's type and constraints as `ALTER TABLE ADD COLUMN` takes them.
 */
export function addMissingColumn(
  sql: SqlStorage,
  table: string,
  column: string,
  definition: string,
): void {
  const columns = sql.exec<{ name: string }>(`PRAGMA table_info(${table})`).toArray();
  if (!columns.some((c) => c.name === column)) {
    sql.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
  }
}
