/**
 * Reads Parquet files with DuckDB from a test running in workerd, through the Node-side
 * server of test/duckdb-server.ts (vitest's global setup).
 */
import { inject } from "vitest";

/**
 * Runs `sql` in DuckDB over `files`, written under a fresh directory that `{dir}` names in
 * the query (`SELECT * FROM read_parquet('{dir}/**' , hive_partitioning = true)`).
 *
 * @param files relative paths (R2 keys will do) and their bytes.
 * @returns the rows as DuckDB's JSON form (`getRowObjectsJson`: BIGINT and timestamps as strings).
 * @throws Error with DuckDB's message when the query fails.
 */
export async function duckdb(
  files: Record<string, Uint8Array | ArrayBuffer>,
  sql: string,
): Promise<Record<string, unknown>[]> {
  const encoded: Record<string, string> = {};
  for (const [path, bytes] of Object.entries(files)) {
    const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    let binary = "";
    for (let i = 0; i < view.length; i += 0x8000) {
      binary += String.fromCharCode(...view.subarray(i, i + 0x8000));
    }
    encoded[path] = btoa(binary);
  }
  const res = await fetch(`${inject("duckdbUrl")}/query`, {
    method: "POST",
    body: JSON.stringify({ files: encoded, sql }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`DuckDB: ${text}`);
  return JSON.parse(text) as Record<string, unknown>[];
}

/** Every object of the HISTORY bucket under `prefix`, by key (the archive as DuckDB sees it). */
export async function bucketFiles(
  bucket: R2Bucket,
  prefix: string,
): Promise<Record<string, ArrayBuffer>> {
  const files: Record<string, ArrayBuffer> = {};
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    for (const object of page.objects) {
      const body = await bucket.get(object.key);
      if (body) files[object.key] = await body.arrayBuffer();
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return files;
}
