/**
 * Which Worker the scripts talk to. `npm start` records the URL it serves (and its process
 * id) in `.wrangler/local-server.json` while it runs, so that the commands it prints
 * (`demo-env`, `requests`, `client:examples`, `mcp`, `replay`, the operator CLI) reach it
 * whatever its port (`npm start -- --port 8821`); docs/demo-data.md, "Which server".
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { chooseBaseUrl } from "./base-url";
import { DEFAULT_BASE_URL, PROJECT_ROOT } from "./project";

/** Where `npm start` records the server it runs (git-ignored with the rest of `.wrangler/`). */
export const LOCAL_SERVER_PATH = join(PROJECT_ROOT, ".wrangler", "local-server.json");

/** The record: the origin served and the `npm start` process serving it. */
interface LocalServerRecord {
  url: string;
  pid: number;
  startedAt: string;
}

/**
 * Records the server this process serves, replacing any earlier record.
 *
 * @param url the origin, for example `http://127.0.0.1:8821`.
 */
export function recordLocalServer(url: string): void {
  const record: LocalServerRecord = {
    url,
    pid: process.pid,
    startedAt: new Date().toISOString(),
  };
  mkdirSync(dirname(LOCAL_SERVER_PATH), { recursive: true });
  writeFileSync(LOCAL_SERVER_PATH, `${JSON.stringify(record, null, 2)}\n`);
}

/** Removes the record when this process wrote it (another `npm start` may have replaced it). */
export function forgetLocalServer(): void {
  if (readRecord()?.pid === process.pid) rmSync(LOCAL_SERVER_PATH, { force: true });
}

/**
 * The origin a running `npm start` of this checkout serves.
 *
 * @returns its URL, or undefined when none is recorded or the recorded process has ended.
 */
export function runningLocalServer(): string | undefined {
  const record = readRecord();
  return record && processAlive(record.pid) ? record.url : undefined;
}

/**
 * The base URL of a script, from its `--url` (if any), `$PM_URL` and the running `npm start`
 * (./base-url.ts).
 *
 * @param explicit the `--url` option, when given.
 * @param options `preferRunning`: see {@link BaseUrlSources}.
 */
export function resolveBaseUrl(
  explicit?: string,
  options: { preferRunning?: boolean } = {},
): string {
  return chooseBaseUrl({
    explicit,
    env: process.env.PM_URL,
    running: runningLocalServer(),
    preferRunning: options.preferRunning ?? false,
    fallback: DEFAULT_BASE_URL,
  });
}

function readRecord(): LocalServerRecord | undefined {
  if (!existsSync(LOCAL_SERVER_PATH)) return undefined;
  try {
    const parsed = JSON.parse(
      readFileSync(LOCAL_SERVER_PATH, "utf8"),
    ) as Partial<LocalServerRecord>;
    return typeof parsed.url === "string" && Number.isInteger(parsed.pid)
      ? (parsed as LocalServerRecord)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a process with this id exists (signal 0 tests without sending anything). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Answers whether GET `url` returns 200 within 10 s (the first answer of a fresh Worker can
 * take a few seconds on a loaded machine; a poll that gives up earlier is logged by wrangler
 * as a lost connection).
 *
 * @param url absolute URL.
 * @returns true on a 200, false on any other status or a connection error.
 */
export async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}
