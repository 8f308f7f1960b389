/**
 * A company's rows copied from one database to another, table by table (./company-tables.ts),
 * for moving a company between shards (src/operator/company-move/move.ts): a bulk copy while
 * the company writes, the changes recorded meanwhile by the triggers of ./move-fence.ts, the
 * fence, and the source's rows removed at the end. Within D1's limits: one JSON parameter per
 * statement, strings under 1,000,000 bytes, batches of `BATCH_STATEMENTS`.
 * docs/scaling.md ("Moving a company to another shard").
 */
import { ownedText } from "./company-scope";
import { type OwnedTable, ownedTables } from "./company-tables";
import { type MoveState, q } from "./move-fence";

/** Rows read per page of the bulk copy (fewer when they are large). */
const COPY_PAGE_ROWS = 500;

/** Most bytes of one page's JSON (half of D1's 2,000,000-byte string limit). */
const COPY_PAGE_BYTES = 900_000;

/** Changes applied per round of {@link applyChanges}. */
const CHANGES_PER_ROUND = 200;

/** Bytes of a BLOB carried per statement, as hexadecimal text (twice as long). */
const BLOB_PIECE = 400_000;

const selectList = (table: OwnedTable, alias = "t") =>
  table.columns
    .map((c) =>
      // A BLOB travels apart, in pieces (copyBlobs): here only whether it is NULL.
      table.blobColumns.includes(c)
        ? `CASE WHEN ${alias}.${q(c)} IS NULL THEN NULL ELSE '' END`
        : `${alias}.${q(c)}`,
    )
    .join(", ");

/**
 * `INSERT ... SELECT` from a JSON array of rows (as {@link selectList} reads them), upserting:
 * a row whose key the target holds already is updated only when that row is the same
 * company's (a row copied twice), never another company's ({@link checkWritten} then fails
 * the copy).
 */
function upsertText(table: OwnedTable): string {
  const values = table.columns.map((c, i) =>
    table.blobColumns.includes(c)
      ? `CAST(json_extract(value, '$[${i}]') AS BLOB)`
      : `json_extract(value, '$[${i}]')`,
  );
  const others = table.columns.filter((c) => !table.primaryKey.includes(c));
  const update =
    others.length === 0
      ? "DO NOTHING"
      : `DO UPDATE SET ${others.map((c) => `${q(c)} = excluded.${q(c)}`).join(", ")} ` +
        `WHERE ${table.companyOf(q(table.name))} IS ${table.companyOf("excluded")}`;
  return (
    `INSERT INTO ${q(table.name)} (${table.columns.map(q).join(", ")}) ` +
    `SELECT ${values.join(", ")} FROM json_each(?1) WHERE true ` +
    `ON CONFLICT (${table.primaryKey.map(q).join(", ")}) ${update}`
  );
}

/**
 * Checks that an upsert of `rows` rows wrote each of them: one that did not met a row of
 * another company under the same key in the target (left as it was by the upsert's guard).
 * Tables whose key is all their columns (`DO NOTHING`) are not checked: a row copied twice
 * writes nothing there, and their keys name owned parents, which were checked.
 *
 * @throws Error naming the table when fewer rows were written.
 */
function checkWritten(table: OwnedTable, rows: number, written: number): void {
  if (written >= rows || table.columns.length === table.primaryKey.length) return;
  throw new Error(
    `company copy: ${rows - written} row(s) of ${table.name} have the key of another company's row in the target`,
  );
}

/**
 * Copies the BLOB columns of some rows, piece by piece: each piece read as hexadecimal from
 * the source and appended in the target (the row is there already, its BLOBs empty), so no
 * string a statement carries nears D1's 2,000,000-byte limit whatever the BLOB's size.
 *
 * @param keys the rows' primary keys, as JSON arrays.
 */
async function copyBlobs(
  source: D1Database,
  target: D1Database,
  table: OwnedTable,
  keys: readonly unknown[][],
): Promise<void> {
  const where = table.primaryKey.map((c, i) => `${q(c)} = ?${i + 1}`).join(" AND ");
  const at = table.primaryKey.length + 1;
  for (const key of keys) {
    for (const column of table.blobColumns) {
      for (let offset = 1; ; offset += BLOB_PIECE) {
        const piece = await source
          .prepare(
            `SELECT hex(substr(${q(column)}, ?${at}, ${BLOB_PIECE})) AS hex FROM ${q(table.name)} WHERE ${where}`,
          )
          .bind(...key, offset)
          .first<{ hex: string | null }>();
        if (!piece?.hex) break;
        await target
          .prepare(
            `UPDATE ${q(table.name)} SET ${q(column)} = CAST(${q(column)} || unhex(?${at}) AS BLOB) WHERE ${where}`,
          )
          .bind(...key, piece.hex)
          .run();
        if (piece.hex.length < BLOB_PIECE * 2) break;
      }
    }
  }
}

/** Rows of a page, as JSON, the last rowid read and how many. */
interface Page {
  rows: string;
  keys: string;
  last: number;
  count: number;
}

async function readPage(source: D1Database, table: OwnedTable, companyId: number, after: number) {
  // One JSON array of at most COPY_PAGE_ROWS rows and about COPY_PAGE_BYTES bytes (the first
  // row always, however large: a row is under D1's 2 MB).
  const rows = table.blobColumns.length > 0 ? 1 : COPY_PAGE_ROWS;
  return source
    .prepare(
      `SELECT json_group_array(json(j)) AS rows, json_group_array(json(k)) AS keys,
         max(r) AS last, count(*) AS count FROM (
         SELECT r, j, k, sum(length(j)) OVER (ORDER BY r) AS acc, row_number() OVER (ORDER BY r) AS n
         FROM (SELECT t.rowid AS r, json_array(${selectList(table)}) AS j,
                 json_array(${table.primaryKey.map((c) => `t.${q(c)}`).join(", ")}) AS k
               FROM ${q(table.name)} t WHERE ${table.owner} AND t.rowid > ?2 ORDER BY t.rowid LIMIT ${rows}))
       WHERE acc <= ${COPY_PAGE_BYTES} OR n = 1`,
    )
    .bind(companyId, after)
    .first<Page>();
}

/**
 * Copies every row of a company from `source` to `target`, table by table, parents first,
 * in pages (an upsert by primary key: a row copied twice is written twice, not doubled).
 *
 * @returns rows copied, by table.
 */
export async function copyCompany(
  source: D1Database,
  target: D1Database,
  companyId: number,
): Promise<Map<string, number>> {
  const copied = new Map<string, number>();
  for (const table of ownedTables()) {
    const insert = upsertText(table);
    let after = -1;
    let total = 0;
    for (;;) {
      const page = await readPage(source, table, companyId, after);
      if (!page || page.count === 0) break;
      const result = await target.prepare(insert).bind(page.rows).run();
      checkWritten(table, page.count, result.meta.changes);
      if (table.blobColumns.length > 0) {
        await copyBlobs(source, target, table, JSON.parse(page.keys) as unknown[][]);
      }
      total += page.count;
      after = page.last;
    }
    copied.set(table.name, total);
  }
  return copied;
}

/** One recorded change: a row's key in a table, at a version. */
interface Change {
  table_name: string;
  pk: string;
  version: number;
}

/** Keys read back per statement by {@link applyChanges} (rows of up to ~16 KB each). */
const KEYS_PER_READ = 50;

/** A key as JSON text in one spelling, whoever wrote it (SQLite's `json_array` or JS). */
const canonical = (key: string) => JSON.stringify(JSON.parse(key) as unknown);

/**
 * Applies the changes recorded in `source` for a company to `target`: each changed row is
 * read again from the source and upserted in the target, or deleted from it when the source
 * has it no more, all in one batch (one transaction, foreign keys checked at its end); then
 * each change is forgotten unless it changed again meanwhile (its version moved).
 *
 * @param limit most changes applied (one round); the rest stay recorded.
 * @returns how many changes were applied, and how many remain recorded.
 */
export async function applyChanges(
  source: D1Database,
  target: D1Database,
  companyId: number,
  limit: number = CHANGES_PER_ROUND,
): Promise<{ applied: number; remaining: number }> {
  const { results: changes } = await source
    .prepare(
      `SELECT table_name, pk, version FROM company_move_changes WHERE ${ownedText("?1")} LIMIT ?2`,
    )
    .bind(companyId, limit)
    .all<Change>();
  const writes: D1PreparedStatement[] = [];
  /** Per write, its table and how many rows it carries. */
  const expected: { table: OwnedTable; rows: number }[] = [];
  const deletes: D1PreparedStatement[] = [];
  const blobs: { table: OwnedTable; keys: unknown[][] }[] = [];
  for (const table of ownedTables()) {
    const keys = [
      ...new Set(changes.filter((c) => c.table_name === table.name).map((c) => canonical(c.pk))),
    ];
    if (keys.length === 0) continue;
    const pk = table.primaryKey.map((c) => `t.${q(c)}`).join(", ");
    const keyOf = table.primaryKey.map((_, i) => `json_extract(k.value, '$[${i}]')`).join(", ");
    const present = new Set<string>();
    for (let i = 0; i < keys.length; i += KEYS_PER_READ) {
      const found = await source
        .prepare(
          `SELECT json_group_array(json(j)) AS rows, json_group_array(json(k)) AS keys FROM (
             SELECT json_array(${selectList(table)}) AS j, json_array(${pk}) AS k
             FROM ${q(table.name)} t WHERE (${pk}) IN (SELECT ${keyOf} FROM json_each(?1) k))`,
        )
        .bind(`[${keys.slice(i, i + KEYS_PER_READ).join(",")}]`)
        .first<{ rows: string; keys: string }>();
      const foundKeys = JSON.parse(found?.keys ?? "[]") as unknown[];
      for (const key of foundKeys) present.add(JSON.stringify(key));
      if (foundKeys.length > 0) {
        writes.push(target.prepare(upsertText(table)).bind(found?.rows));
        expected.push({ table, rows: foundKeys.length });
      }
    }
    if (table.blobColumns.length > 0 && present.size > 0) {
      blobs.push({ table, keys: [...present].map((k) => JSON.parse(k) as unknown[]) });
    }
    const gone = keys.filter((k) => !present.has(k));
    if (gone.length > 0) {
      // Children's deletes before their parents': the reverse of the tables' order.
      // Only the company's own rows: never another company's under the same key.
      deletes.unshift(
        target
          .prepare(
            `DELETE FROM ${q(table.name)} AS t WHERE ${table.owner} AND (${pk}) IN (SELECT ${keyOf} FROM json_each(?2) k)`,
          )
          .bind(companyId, `[${gone.join(",")}]`),
      );
    }
  }
  await writeChanges(target, deletes, writes, expected);
  for (const { table, keys } of blobs) await copyBlobs(source, target, table, keys);
  // Forgotten in one statement, each only at the version read (a newer one stays).
  await source
    .prepare(
      `DELETE FROM company_move_changes WHERE ${ownedText("?1")} AND (table_name, pk, version) IN (
         SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
         FROM json_each(?2))`,
    )
    .bind(companyId, JSON.stringify(changes.map((c) => [c.table_name, c.pk, c.version])))
    .run();
  const left = await source
    .prepare(`SELECT count(*) AS n FROM company_move_changes WHERE ${ownedText("?1")}`)
    .bind(companyId)
    .first<{ n: number }>();
  return { applied: changes.length, remaining: left?.n ?? 0 };
}

/**
 * Runs a round's deletes and upserts in one batch (one transaction, foreign keys checked at
 * its end), then checks that each upsert wrote all its rows ({@link checkWritten}).
 *
 * @param expected per upsert, in order, its table and how many rows it carries.
 * @throws Error when an upsert met another company's row under one of its keys.
 */
async function writeChanges(
  target: D1Database,
  deletes: readonly D1PreparedStatement[],
  writes: readonly D1PreparedStatement[],
  expected: readonly { table: OwnedTable; rows: number }[],
): Promise<void> {
  if (writes.length + deletes.length === 0) return;
  const results = await target.batch([
    target.prepare("PRAGMA defer_foreign_keys = on"),
    ...deletes,
    ...writes,
  ]);
  const first = 1 + deletes.length;
  expected.forEach(({ table, rows }, i) => {
    checkWritten(table, rows, results[first + i]?.meta.changes ?? 0);
  });
}

/** Rows of a company in a database, by table. */
export async function countRows(d1: D1Database, companyId: number): Promise<Map<string, number>> {
  const tables = ownedTables();
  const results = await d1.batch<{ n: number }>(
    tables.map((table) =>
      d1
        .prepare(`SELECT count(*) AS n FROM ${q(table.name)} t WHERE ${table.owner}`)
        .bind(companyId),
    ),
  );
  return new Map(tables.map((table, i) => [table.name, results[i]?.results[0]?.n ?? 0]));
}

/** Rows deleted per statement by {@link removeCompany}. */
const REMOVE_ROWS = 1_000;

/**
 * Deletes every row of a company from a database, children first, in statements of at most
 * `REMOVE_ROWS` rows. Where the company is `fenced` or `gone` (moved out), each batch sets
 * `removing` around its deletes (one transaction: no other writer ever sees it) and puts
 * the state back, so the fence stays up for every other writer.
 *
 * @param state the company's state in this database, restored after each batch (null: none).
 */
export async function removeCompany(
  d1: D1Database,
  companyId: number,
  state: MoveState | null,
): Promise<void> {
  const setState = (s: MoveState) =>
    d1.prepare(`UPDATE company_moves SET state = ?2 WHERE ${ownedText("?1")}`).bind(companyId, s);
  for (const table of [...ownedTables()].reverse()) {
    for (;;) {
      const remove = d1
        .prepare(
          `DELETE FROM ${q(table.name)} WHERE rowid IN (SELECT t.rowid FROM ${q(table.name)} t ` +
            `WHERE ${table.owner} LIMIT ${REMOVE_ROWS})`,
        )
        .bind(companyId);
      const results =
        state === null
          ? [await remove.run()]
          : await d1.batch([setState("removing"), remove, setState(state)]);
      const deleted = results[state === null ? 0 : 1]?.meta.changes ?? 0;
      if (deleted < REMOVE_ROWS) break;
    }
  }
}
