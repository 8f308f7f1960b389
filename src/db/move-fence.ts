/**
 * The move's triggers and states in a shard (see src/db/company-copy.ts for the whole copy):
 * `company_moves` (one row per company being moved out of this database, or moved out of
 * it: `tracking`, `fenced`, `removing`, `gone`; or being moved in: `receiving`) and
 * `company_move_changes` (the primary keys
 * of the rows a tracked company changed, each with a version bumped at each change). Per
 * owned table, a BEFORE trigger aborts a write of a `fenced` company (and an insert or update
 * of a `gone` one), and an AFTER trigger records the changed row's key for a `tracking` one.
 * The triggers are made from the schema's table list at run time, so a new table gets its
 * triggers the next time a move runs on the shard.
 */
import { ownedBy, ownedText } from "./company-scope";
import { type OwnedTable, ownedTables } from "./company-tables";

/** Most statements of one batch written by the move. */
export const BATCH_STATEMENTS = 50;

/** A name quoted for SQL. */
export const q = (name: string) => `"${name}"`;

/** Runs statements in batches of at most {@link BATCH_STATEMENTS}. */
async function runInBatches(d1: D1Database, statements: D1PreparedStatement[]): Promise<void> {
  for (let i = 0; i < statements.length; i += BATCH_STATEMENTS) {
    await d1.batch(statements.slice(i, i + BATCH_STATEMENTS));
  }
}

/** The error text a fenced write fails with (inside D1's error message). */
const FENCE_ERROR = "company_moving";

/**
 * The states of a company in `company_moves`: in the source, `tracking` (changes recorded),
 * `fenced` (its writes refused), `removing` (its rows being deleted), `gone` (moved out); in
 * the target, `receiving` (its rows being copied in). The figure triggers
 * (migrations/0017_figure-triggers-skip-copies.sql) skip a `receiving` or `removing`
 * company's rows: a copy carries the source's kept figures and write counts as they are.
 */
export type MoveState = "tracking" | "fenced" | "removing" | "gone" | "receiving";

/** True for an error of a write refused by the move's fence. */
export function isFenceError(error: unknown): boolean {
  return error instanceof Error && error.message.includes(FENCE_ERROR);
}

function triggerStatements(table: OwnedTable): string[] {
  const t = table.name;
  const key = (row: "NEW" | "OLD") =>
    `json_array(${table.primaryKey.map((c) => `${row}.${q(c)}`).join(", ")})`;
  const when = (row: "NEW" | "OLD", states: string) =>
    `EXISTS (SELECT 1 FROM company_moves m WHERE ${ownedBy(table.companyOf(row), "m.company_id")} AND m.state IN (${states}))`;
  const record = (row: "NEW" | "OLD") =>
    `INSERT INTO company_move_changes (company_id, table_name, pk, version) ` +
    `VALUES (${table.companyOf(row)}, '${t}', ${key(row)}, 1) ` +
    "ON CONFLICT (company_id, table_name, pk) DO UPDATE SET version = version + 1;";
  const fence = `BEGIN SELECT RAISE(ABORT, '${FENCE_ERROR}'); END`;
  return [
    `CREATE TRIGGER IF NOT EXISTS move_fence_${t}_i BEFORE INSERT ON ${q(t)} WHEN ${when("NEW", "'fenced', 'gone'")} ${fence}`,
    `CREATE TRIGGER IF NOT EXISTS move_fence_${t}_u BEFORE UPDATE ON ${q(t)} WHEN ${when("OLD", "'fenced', 'gone'")} ${fence}`,
    `CREATE TRIGGER IF NOT EXISTS move_fence_${t}_d BEFORE DELETE ON ${q(t)} WHEN ${when("OLD", "'fenced'")} ${fence}`,
    `CREATE TRIGGER IF NOT EXISTS move_track_${t}_i AFTER INSERT ON ${q(t)} WHEN ${when("NEW", "'tracking'")} BEGIN ${record("NEW")} END`,
    `CREATE TRIGGER IF NOT EXISTS move_track_${t}_u AFTER UPDATE ON ${q(t)} WHEN ${when("OLD", "'tracking'")} BEGIN ${record("OLD")} ${record("NEW")} END`,
    `CREATE TRIGGER IF NOT EXISTS move_track_${t}_d AFTER DELETE ON ${q(t)} WHEN ${when("OLD", "'tracking'")} BEGIN ${record("OLD")} END`,
  ];
}

/** The name a trigger statement creates (`CREATE TRIGGER IF NOT EXISTS <name> ...`). */
const createdName = (statement: string) => statement.split(" ")[5] ?? "";

/**
 * Creates the move's tables and every owned table's triggers in a database, those missing
 * only (one read when all are there, the case after a shard's first move).
 *
 * @param d1 a shard's binding (the primary).
 */
export async function installMoveTriggers(d1: D1Database): Promise<void> {
  const tables = [
    "CREATE TABLE IF NOT EXISTS company_moves (company_id INTEGER PRIMARY KEY, state TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS company_move_changes (company_id INTEGER NOT NULL, " +
      "table_name TEXT NOT NULL, pk TEXT NOT NULL, version INTEGER NOT NULL, " +
      "PRIMARY KEY (company_id, table_name, pk))",
  ];
  const triggers = ownedTables().flatMap(triggerStatements);
  const { results } = await d1
    .prepare(
      "SELECT name FROM sqlite_master WHERE (type = 'trigger' AND name LIKE 'move\\_%' ESCAPE '\\') " +
        "OR (type = 'table' AND name IN ('company_moves', 'company_move_changes'))",
    )
    .all<{ name: string }>();
  const present = new Set(results.map((r) => r.name));
  const missing = [
    ...(present.has("company_moves") && present.has("company_move_changes") ? [] : tables),
    ...triggers.filter((statement) => !present.has(createdName(statement))),
  ];
  await runInBatches(
    d1,
    missing.map((statement) => d1.prepare(statement)),
  );
}

/** A company's move state in a database (null: none). */
export async function moveStateOf(d1: D1Database, companyId: number): Promise<MoveState | null> {
  const row = await d1
    .prepare(`SELECT state FROM company_moves WHERE ${ownedText("?1")}`)
    .bind(companyId)
    .first<{ state: MoveState }>();
  return row?.state ?? null;
}

/**
 * Sets a company's move state in a database (null: no move, the row removed), and with
 * `tracking` forgets the changes recorded before.
 */
export async function setMoveState(
  d1: D1Database,
  companyId: number,
  state: MoveState | null,
): Promise<void> {
  const statements = [
    state === null
      ? d1.prepare(`DELETE FROM company_moves WHERE ${ownedText("?1")}`).bind(companyId)
      : d1
          .prepare(
            "INSERT INTO company_moves (company_id, state) VALUES (?1, ?2) " +
              "ON CONFLICT (company_id) DO UPDATE SET state = excluded.state",
          )
          .bind(companyId, state),
  ];
  if (state !== "fenced") {
    statements.push(
      d1.prepare(`DELETE FROM company_move_changes WHERE ${ownedText("?1")}`).bind(companyId),
    );
  }
  await d1.batch(statements);
}
