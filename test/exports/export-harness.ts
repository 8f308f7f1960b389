/**
 * Export tests' helpers: start an export, drive the company's exports object until the
 * export ends (its alarm, run by the test rather than waited for), download its files
 * through the API, and read them back with DuckDB (test/node/duckdb-bridge.ts), the real
 * Parquet reader the Node side of the run serves.
 */
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { expect, inject } from "vitest";
import type { Api } from "../fixtures/api-types";
import { api } from "../harness";

/** The company's exports object (the name the routes give it). */
export function exportsStub(companyId: number) {
  return env.COMPANY_EXPORTS.get(env.COMPANY_EXPORTS.idFromName(String(companyId)));
}

/** Starts an export; fails the test unless it is a 202. */
export async function startExport(key: string, body: unknown): Promise<Api["Export"]> {
  const res = await api(key, "/v1/exports", { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(202);
  const answer = (await res.json()) as Api["Export"];
  expect(res.headers.get("location")).toBe(`/v1/exports/${answer.id}`);
  return answer;
}

/** The export as GET answers it. */
export async function getExport(key: string, id: string): Promise<Api["Export"]> {
  const res = await api(key, `/v1/exports/${id}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Api["Export"];
}

/**
 * Runs the company's exports object's alarm until the export has ended (succeeded or
 * failed), as Cloudflare would run it, step after step.
 *
 * @param onStep called with the export's state after each step (progress checks, restarts).
 */
export async function finishExport(
  key: string,
  companyId: number,
  id: string,
  onStep?: (state: Api["Export"], step: number) => Promise<void>,
): Promise<Api["Export"]> {
  for (let step = 0; step < 2_000; step++) {
    const state = await getExport(key, id);
    if (state.state === "succeeded" || state.state === "failed") return state;
    await onStep?.(state, step);
    // A stub of its own each time: `onStep` may have restarted the object.
    await runDurableObjectAlarm(exportsStub(companyId));
  }
  throw new Error(`export ${id} did not end`);
}

/** Downloads a file through the API (the credential of the export's company). */
export async function download(key: string, file: Api["ExportFile"]): Promise<Uint8Array> {
  const res = await api(key, file.url);
  expect(res.status).toBe(200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  expect(bytes.length).toBe(file.bytes);
  return bytes;
}

/** A file as DuckDB reads it: its columns (name, DuckDB type) and rows. */
export interface ReadBack {
  columns: { name: string; type: string }[];
  rows: unknown[][];
}

/** Reads a file's bytes with DuckDB (instants come back as epoch ms, BIGINTs as text). */
export async function readWithDuckdb(
  bytes: Uint8Array,
  format: "parquet" | "csv",
): Promise<ReadBack> {
  const res = await fetch(`${inject("duckdbBridge")}/read?format=${format}`, {
    method: "POST",
    body: bytes,
  });
  if (res.status !== 200) throw new Error(`DuckDB: ${await res.text()}`);
  return (await res.json()) as ReadBack;
}

/** Runs SQL in DuckDB over files (relative paths in the SQL name them). */
export async function duckdbSql(sql: string, files: Record<string, Uint8Array>): Promise<ReadBack> {
  const encoded = Object.fromEntries(
    Object.entries(files).map(([name, bytes]) => {
      let text = "";
      for (let i = 0; i < bytes.length; i += 0x8000) {
        text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
      }
      return [name, btoa(text)];
    }),
  );
  const res = await fetch(`${inject("duckdbBridge")}/sql`, {
    method: "POST",
    body: JSON.stringify({ sql, files: encoded }),
  });
  if (res.status !== 200) throw new Error(`DuckDB: ${await res.text()}`);
  return (await res.json()) as ReadBack;
}

/** Every file of an ended export, read back and concatenated. */
export async function readExport(key: string, answer: Api["Export"]): Promise<ReadBack> {
  const out: ReadBack = { columns: [], rows: [] };
  for (const file of answer.files) {
    const back = await readWithDuckdb(await download(key, file), answer.format);
    out.columns = back.columns;
    out.rows.push(...back.rows);
  }
  return out;
}
