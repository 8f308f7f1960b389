/**
 * The tables whose rows a company owns, read from the Drizzle schema, for work that handles a
 * company's rows table by table (moving a company: src/operator/company-move/): a table with a
 * `company_id` column, or a foreign key to an owned table, and the company's own `companies`
 * row; credentials are the directory's alone. Parents come first (the insert order with
 * foreign keys enforced; reversed, the delete order). A new table needs no change here.
 */
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { ownedText } from "./company-scope";
import * as schema from "./schema";

/** One owned table, as SQL text needs it. */
export interface OwnedTable {
  /** The table's SQL name. */
  readonly name: string;
  /** Its columns' SQL names, in the table's order. */
  readonly columns: readonly string[];
  /** The columns of its primary key. */
  readonly primaryKey: readonly string[];
  /** The columns that hold bytes (BLOB), which JSON cannot carry. */
  readonly blobColumns: readonly string[];
  /** True for an `INTEGER PRIMARY KEY AUTOINCREMENT` id (its ids come from `sqlite_sequence`). */
  readonly autoIncrement: boolean;
  /**
   * The condition "this row of alias `t` belongs to the company bound as `?1`", for
   * statements that read or delete a company's rows.
   */
  readonly owner: string;
  /**
   * The SQL expression of the company that a row belongs to: `NEW` or `OLD` in triggers,
   * `excluded` or the quoted table name in an upsert's `DO UPDATE ... WHERE` (NULL when a
   * child's parent row is gone).
   */
  companyOf(row: string): string;
}

/** The directory's tables: global, never a company's rows in a shard. */
const DIRECTORY_TABLES: ReadonlySet<string> = new Set(["api_keys"]);

/**
 * The company's own row: in a shard, the mirror of its directory row that the shard's
 * foreign keys reference (the parent of every other owned table).
 */
const COMPANY_TABLE = "companies";

function isTable(value: unknown): value is SQLiteTable {
  if (typeof value !== "object" || value === null) return false;
  try {
    getTableConfig(value as SQLiteTable);
    return true;
  } catch {
    return false;
  }
}

/** How a table's rows name their company: the part of {@link OwnedTable} that differs by table. */
type Ownership = Pick<OwnedTable, "owner" | "companyOf">;

/**
 * How the rows of table `name` belong to a company: the companies table by its id, a table
 * with `company_id` by that column, any other through its first foreign key to an owned
 * table with `company_id` (null when it has none: not a company's table).
 *
 * @param build the owned table of a parent, by name (built on demand).
 */
function ownershipOf(
  name: string,
  columns: readonly string[],
  config: ReturnType<typeof getTableConfig>,
  build: (name: string) => OwnedTable | null,
): Ownership | null {
  if (name === COMPANY_TABLE) {
    return { owner: "t.id = CAST(?1 AS INTEGER)", companyOf: (row) => `${row}.id` };
  }
  if (columns.includes("company_id")) {
    return {
      owner: ownedText("?1", "t.company_id"),
      companyOf: (row) => `${row}.company_id`,
    };
  }
  for (const fk of config.foreignKeys) {
    const reference = fk.reference();
    const parentName = getTableConfig(reference.foreignTable).name;
    if (parentName === name) continue;
    const parent = build(parentName);
    if (!parent?.columns.includes("company_id")) continue;
    const pairs = reference.columns.map((column, i) => [
      column.name,
      reference.foreignColumns[i]?.name ?? "",
    ]);
    const join = (row: string) =>
      pairs.map(([mine, theirs]) => `p."${theirs}" = ${row}."${mine}"`).join(" AND ");
    return {
      owner: `EXISTS (SELECT 1 FROM "${parentName}" p WHERE ${join("t")} AND ${ownedText("?1", "p.company_id")})`,
      companyOf: (row) => `(SELECT p.company_id FROM "${parentName}" p WHERE ${join(row)})`,
    };
  }
  return null;
}

/**
 * The company-owned tables of the schema, parents first.
 *
 * @throws Error when a table has no primary key or the foreign keys form a cycle (the
 *   order would not exist).
 */
function companyTables(): OwnedTable[] {
  const configs = Object.values(schema)
    .filter(isTable)
    .map((table) => getTableConfig(table))
    .filter((config) => !DIRECTORY_TABLES.has(config.name));
  const byName = new Map(configs.map((config) => [config.name, config]));
  const owned = new Map<string, OwnedTable>();

  const build = (name: string): OwnedTable | null => {
    const known = owned.get(name);
    if (known) return known;
    const config = byName.get(name);
    if (!config) return null;
    const columns = config.columns.map((column) => column.name);
    const primaryKey =
      config.primaryKeys[0]?.columns.map((column) => column.name) ??
      config.columns.filter((column) => column.primary).map((column) => column.name);
    if (primaryKey.length === 0) throw new Error(`table ${name} has no primary key`);
    const blobColumns = config.columns
      .filter((column) => column.getSQLType() === "blob")
      .map((column) => column.name);
    const autoIncrement = config.columns.some(
      (column) => column.primary && "autoIncrement" in column && column.autoIncrement === true,
    );
    const ownership = ownershipOf(name, columns, config, build);
    const table: OwnedTable | null = ownership && {
      name,
      columns,
      primaryKey,
      blobColumns,
      autoIncrement,
      ...ownership,
    };
    if (table) owned.set(name, table);
    return table;
  };
  for (const config of configs) build(config.name);

  // Parents first: depth-first over the foreign keys between owned tables.
  const ordered: OwnedTable[] = [];
  const state = new Map<string, "visiting" | "done">();
  const visit = (name: string) => {
    const table = owned.get(name);
    if (!table || state.get(name) === "done") return;
    if (state.get(name) === "visiting") throw new Error(`foreign keys form a cycle at ${name}`);
    state.set(name, "visiting");
    for (const fk of byName.get(name)?.foreignKeys ?? []) {
      const parent = getTableConfig(fk.reference().foreignTable).name;
      if (parent !== name) visit(parent);
    }
    state.set(name, "done");
    ordered.push(table);
  };
  for (const name of [...owned.keys()].sort()) visit(name);
  return ordered;
}

/** The schema's owned tables, computed once per isolate. */
let cached: OwnedTable[] | undefined;

/** {@link companyTables}, computed once per isolate. */
export function ownedTables(): readonly OwnedTable[] {
  cached ??= companyTables();
  return cached;
}
