/**
 * Applies the D1 migrations to the local databases of `wrangler dev` (the directory and every
 * shard) in one runtime: a Miniflare with only the D1 bindings of wrangler.toml, persisted
 * where `wrangler dev` keeps them (`.wrangler/state/v3/d1`), with wrangler's own bookkeeping
 * (its `d1_migrations` table, the files in the order of their number). Each file runs whole,
 * with its row of `d1_migrations`, in one transaction: local D1 is a Durable Object's SQLite,
 * whose `exec` runs every statement of a text, triggers included (the schema equals the one
 * wrangler's command makes, compared table by table and trigger by trigger). `wrangler d1
 * migrations apply --local` starts a runtime for every file of every database, about 48 on a
 * fresh state: the measurements are in docs/demo-data.md, "Where npm start spends its time".
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";

/**
 * What the last successful run applied, kept with the databases (deleting `.wrangler/state`
 * deletes it too), so that a start whose databases are up to date needs no runtime at all.
 */
const RECORD_NAME = "applied-migrations.json";

/** The table wrangler records applied migrations in (its default `migrations_table`). */
const MIGRATIONS_TABLE = "d1_migrations";

/** One local D1 database of wrangler.toml's top level. */
export interface LocalDatabase {
  binding: string;
  /** The id Miniflare persists it under: `preview_database_id`, else `database_id`. */
  id: string;
  /** The folder of its migrations, relative to the project root. */
  migrationsDir: string;
}

/**
 * The D1 databases of wrangler.toml's top level (local development), in file order.
 *
 * @param toml the file's text.
 * @throws Error on a database without an id or with a `migrations_table` other than
 *   wrangler's default (this runner writes only that one).
 */
export function localDatabases(toml: string): LocalDatabase[] {
  const config = parse(toml) as {
    d1_databases?: {
      binding: string;
      database_id?: string;
      preview_database_id?: string;
      migrations_dir?: string;
      migrations_table?: string;
    }[];
  };
  return (config.d1_databases ?? []).map((database) => {
    const id = database.preview_database_id ?? database.database_id;
    if (!id) throw new Error(`wrangler.toml: the D1 database ${database.binding} has no id`);
    if ((database.migrations_table ?? MIGRATIONS_TABLE) !== MIGRATIONS_TABLE) {
      throw new Error(`wrangler.toml: ${database.binding} names a migrations_table of its own`);
    }
    return {
      binding: database.binding,
      id,
      migrationsDir: database.migrations_dir ?? "migrations",
    };
  });
}

/**
 * Applies every migration a local database lacks, in file order, each file with its
 * bookkeeping row in one batch (so a failed file leaves nothing of itself), as wrangler does.
 *
 * @param projectRoot the folder of wrangler.toml.
 * @param databases from {@link localDatabases}.
 * @returns the names applied, by binding (empty lists when everything was up to date).
 * @throws Error from D1 on a statement that fails; the migrations before it stay applied.
 */
export async function applyLocalMigrations(
  projectRoot: string,
  databases: readonly LocalDatabase[],
): Promise<Map<string, string[]>> {
  // Loaded here only: `npm start` reads the record without paying for it.
  const { Miniflare, convertV4MiniflareOptions } = await import("miniflare");
  // Miniflare 5 takes a new shape of options; the v4 shape, converted, is what wrangler's own
  // `d1 execute --local` passes, so the files land where `wrangler dev` reads them
  // (`<state>/v3/d1/miniflare-D1DatabaseObject/`).
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      script: "",
      resourcePersistencePath: join(projectRoot, ".wrangler", "state", "v3"),
      d1Databases: Object.fromEntries(databases.map((d) => [d.binding, d.id])),
    }),
  );
  try {
    const applied = new Map<string, string[]>();
    for (const database of databases) {
      const migrations = migrationFiles(projectRoot, database.migrationsDir);
      const db = await mf.getD1Database(database.binding);
      await db
        .prepare(
          `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}(
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT UNIQUE,
    applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
)`,
        )
        .run();
      const done = new Set(
        (
          await db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all<{ name: string }>()
        ).results.map((row) => row.name),
      );
      const names: string[] = [];
      const record = db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?)`);
      for (const migration of migrations) {
        if (done.has(migration.name)) continue;
        await db.batch([db.prepare(migration.sql), record.bind(migration.name)]);
        names.push(migration.name);
      }
      applied.set(database.binding, names);
    }
    return applied;
  } finally {
    await mf.dispose();
  }
}

/** The folder of the local D1 state, and the record of what was applied in it. */
function stateOf(projectRoot: string) {
  const d1 = join(projectRoot, ".wrangler", "state", "v3", "d1");
  return { d1, record: join(d1, RECORD_NAME), files: join(d1, "miniflare-D1DatabaseObject") };
}

/** The record's content: the databases (binding and id) and every migration file's name. */
function recordText(projectRoot: string, databases: readonly LocalDatabase[]): string {
  const migrations = [...new Set(databases.map((d) => d.migrationsDir))].flatMap((dir) =>
    readdirSync(join(projectRoot, dir))
      .filter((name) => name.endsWith(".sql"))
      .sort()
      .map((name) => `${dir}/${name}`),
  );
  return `${JSON.stringify({ databases, migrations }, null, 2)}\n`;
}

/**
 * Records that every migration of `migrations_dir` is applied to every database (call it
 * after {@link applyLocalMigrations} succeeded).
 */
export function recordAppliedMigrations(
  projectRoot: string,
  databases: readonly LocalDatabase[],
): void {
  writeFileSync(stateOf(projectRoot).record, recordText(projectRoot, databases));
}

/**
 * Whether the last successful run applied every migration file that exists now to these
 * same databases, and their files are still there: then there is nothing to apply.
 */
export function migrationsRecorded(
  projectRoot: string,
  databases: readonly LocalDatabase[],
): boolean {
  const state = stateOf(projectRoot);
  if (!existsSync(state.record) || !existsSync(state.files)) return false;
  const sqliteFiles = readdirSync(state.files).filter((name) => name.endsWith(".sqlite")).length;
  return (
    sqliteFiles >= databases.length &&
    readFileSync(state.record, "utf8") === recordText(projectRoot, databases)
  );
}

/** A folder's migration files in the order of their number (`0003_...sql`), as wrangler orders them. */
function migrationFiles(projectRoot: string, dir: string): { name: string; sql: string }[] {
  const number = (name: string) => Number.parseInt(name.split("_")[0] ?? "", 10);
  return readdirSync(join(projectRoot, dir))
    .filter((name) => name.endsWith(".sql"))
    .sort((a, b) => number(a) - number(b))
    .map((name) => ({ name, sql: readFileSync(join(projectRoot, dir, name), "utf8") }));
}
