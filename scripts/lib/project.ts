/**
 * Paths of the project and the local development settings (`.dev.vars`).
 */
import { copyFileSync, existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the project root (the folder holding `package.json`). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The project's own wrangler CLI script (its package's `bin.wrangler`), to be run with
 * `process.execPath` rather than through `npx` (npx does not pass SIGTERM on). Read from the
 * package's `package.json`: wrangler's `exports` map (4.9x and later) no longer lets
 * `require.resolve("wrangler/bin/wrangler.js")` reach the file.
 */
export const WRANGLER_BIN = wranglerBin();

function wranglerBin(): string {
  const manifest = createRequire(join(PROJECT_ROOT, "package.json")).resolve(
    "wrangler/package.json",
  );
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: Record<string, string> };
  const script = bin.wrangler;
  if (!script) throw new Error(`${manifest} names no wrangler bin`);
  return join(dirname(manifest), script);
}

/** Local secrets read by `wrangler dev`; never committed. */
export const DEV_VARS_PATH = join(PROJECT_ROOT, ".dev.vars");

/** The committed template of `.dev.vars`. */
export const DEV_VARS_EXAMPLE_PATH = join(PROJECT_ROOT, ".dev.vars.example");

/** Default address of `wrangler dev` (ip and port of `[dev]` in wrangler.toml). */
export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

/**
 * Parses the text of a dotenv file (`KEY=value` lines, `#` comments, optional quotes).
 *
 * @param text the file content.
 * @returns the variables by name; later lines win over earlier ones.
 */
export function parseDotenv(text: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    const [, name = "", rawValue = ""] = match;
    let value = rawValue.trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
      value = value.slice(1, -1);
    }
    vars.set(name, value);
  }
  return vars;
}

/**
 * Creates `.dev.vars` from `.dev.vars.example` when it does not exist yet.
 *
 * @returns true when the file was created, false when it was already there.
 * @throws Error when both files are missing.
 */
export function ensureDevVars(): boolean {
  if (existsSync(DEV_VARS_PATH)) return false;
  if (!existsSync(DEV_VARS_EXAMPLE_PATH)) {
    throw new Error(`Neither ${DEV_VARS_PATH} nor ${DEV_VARS_EXAMPLE_PATH} exists.`);
  }
  copyFileSync(DEV_VARS_EXAMPLE_PATH, DEV_VARS_PATH);
  return true;
}

/**
 * Reads one variable of `.dev.vars` in the project root.
 *
 * @param name the variable name.
 * @returns its value, or undefined when the file or the variable is missing or empty.
 */
export function readDevVar(name: string): string | undefined {
  if (!existsSync(DEV_VARS_PATH)) return undefined;
  return parseDotenv(readFileSync(DEV_VARS_PATH, "utf8")).get(name) || undefined;
}

/**
 * Returns the operator token: the `OPERATOR_TOKEN` environment variable, else
 * `OPERATOR_TOKEN=` from `.dev.vars` in the project root.
 *
 * @param options `preferDevVars`: read `.dev.vars` first (what a local `wrangler dev` uses).
 * @returns the token (a non-empty string).
 * @throws Error when neither source has a non-empty token.
 */
export function resolveOperatorToken(options: { preferDevVars?: boolean } = {}): string {
  const fromEnv = process.env.OPERATOR_TOKEN || undefined;
  const fromFile = readDevVar("OPERATOR_TOKEN");
  const token = options.preferDevVars ? (fromFile ?? fromEnv) : (fromEnv ?? fromFile);
  if (token) return token;
  throw new Error(
    "No operator token: set OPERATOR_TOKEN, or create .dev.vars from .dev.vars.example (npm start does).",
  );
}
