/**
 * Vitest global setup (runs in Node, not in workerd): a local HTTP server that reads Parquet
 * files with DuckDB (`@duckdb/node-api`), so that tests running inside workerd check what the
 * Worker writes with a real reader (test/duckdb.ts sends the files and the query). DuckDB is
 * a native Node module and cannot run in workerd. Listens on 127.0.0.1, on a port the system
 * picks, given to the tests as `inject("duckdbUrl")`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    duckdbUrl: string;
  }
}

/** A query: files (relative path -> base64 bytes) written under `{dir}`, then `sql` run. */
interface DuckdbRequest {
  files: Record<string, string>;
  sql: string;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const instance = await DuckDBInstance.create(":memory:");
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      const dir = mkdtempSync(join(tmpdir(), "duckdb-test-"));
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as DuckdbRequest;
        for (const [path, base64] of Object.entries(body.files)) {
          const file = join(dir, path);
          if (!file.startsWith(dir)) throw new Error(`path outside the directory: ${path}`);
          mkdirSync(dirname(file), { recursive: true });
          writeFileSync(file, Buffer.from(base64, "base64"));
        }
        const connection = await instance.connect();
        try {
          const reader = await connection.runAndReadAll(body.sql.replaceAll("{dir}", dir));
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify(reader.getRowObjectsJson()));
        } finally {
          connection.closeSync();
        }
      } catch (error) {
        res.writeHead(400, { "content-type": "text/plain" });
        res.end(String(error));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  project.provide("duckdbUrl", `http://127.0.0.1:${address.port}`);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    instance.closeSync();
  };
}
