/**
 * The tests' real Parquet reader: DuckDB (`@duckdb/node-api`), which is native code and
 * cannot run inside workerd where the tests run. This vitest global setup (Node) serves it
 * on a loopback port for the run, and hands the port to the tests (`inject("duckdbBridge")`):
 *
 * - `POST /read?format=parquet|csv` with a file's bytes: DuckDB reads the file and answers
 *   `{columns: [{name, type}], rows: [[...]]}` (instants as ms since the epoch, 64-bit
 *   integers as decimal text, CSV cells as text);
 * - `POST /sql` with `{sql, files: {name: base64}}`: the files are written to a fresh folder
 *   (names may hold folders) that relative paths in `sql` resolve against, the statements
 *   run, and the last one's rows come back the same way (the docs' DuckDB example runs so).
 *
 * DuckDB is loaded on the first request, so a run without export tests does not pay for it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import type { TestProject } from "vitest/node";

let connection: Promise<DuckDBConnection> | undefined;

function duckdb(): Promise<DuckDBConnection> {
  connection ??= import("@duckdb/node-api").then(async ({ DuckDBInstance }) => {
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    // Instants are shown in UTC whatever the machine's zone, so answers are the same anywhere.
    await con.run("SET TimeZone = 'UTC'");
    return con;
  });
  return connection;
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * The rows of a relation (a table function or a query), with instants as epoch ms: the
 * columns are described first, then selected with `epoch_ms` around every timestamp.
 */
async function rowsOf(con: DuckDBConnection, relation: string) {
  const described = await con.runAndReadAll(`DESCRIBE SELECT * FROM ${relation}`);
  const columns = described.getRowObjectsJson().map((r) => ({
    name: String(r.column_name),
    type: String(r.column_type),
  }));
  const select = columns
    .map((c) =>
      c.type.startsWith("TIMESTAMP")
        ? `epoch_ms(${quote(c.name)}) AS ${quote(c.name)}`
        : quote(c.name),
    )
    .join(", ");
  const result = await con.runAndReadAll(`SELECT ${select} FROM ${relation}`);
  return { columns, rows: result.getRowsJson() };
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://bridge");
  const dir = mkdtempSync(join(tmpdir(), "duckdb-bridge-"));
  try {
    const con = await duckdb();
    let answer: unknown;
    if (url.pathname === "/read") {
      const format = url.searchParams.get("format") === "csv" ? "csv" : "parquet";
      const file = join(dir, `file.${format}`);
      writeFileSync(file, await bodyOf(req));
      answer = await rowsOf(
        con,
        format === "csv"
          ? `read_csv('${file}', header = true, all_varchar = true)`
          : `read_parquet('${file}')`,
      );
    } else if (url.pathname === "/sql") {
      const { sql, files } = JSON.parse((await bodyOf(req)).toString("utf8")) as {
        sql: string;
        files: Record<string, string>;
      };
      for (const [name, base64] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), Buffer.from(base64, "base64"));
      }
      await con.run(`SET file_search_path = '${dir}'`);
      const statements = sql
        .split(";")
        .map((s) => s.trim())
        .filter(Boolean);
      const last = statements.pop() ?? "SELECT 1";
      for (const statement of statements) await con.run(statement);
      answer = await rowsOf(con, `(${last})`);
      await con.run("RESET file_search_path");
    } else {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
  } catch (error) {
    res.writeHead(500, { "content-type": "text/plain" }).end(String(error));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Vitest global setup: starts the bridge, provides its origin, stops it after the run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  project.provide("duckdbBridge", `http://127.0.0.1:${port}`);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
    });
}
