/**
 * The plant board's browser script, bundled: src/board/browser/board-main.ts and the
 * modules it imports (TypeScript, the generated client's types, openapi-fetch) made into one
 * classic script by esbuild, the bundler wrangler itself uses. The Worker serves the result
 * as text (src/board/board-page.ts). Three callers, one function: `wrangler dev` and
 * `wrangler deploy` through the `[build]` command of wrangler.toml (scripts/build-board.ts,
 * which writes BOARD_BUNDLE_PATH), and the tests: vitest.config.ts writes the file too (the
 * pool reads it from disk for a test that imports the Worker's modules itself) and its Vite
 * plugin bundles in memory for the rest. Why a build rather than a committed bundle: docs/decisions.md
 * ("The board's browser code").
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { build } from "esbuild";
import { PROJECT_ROOT } from "./project.ts";

/** The entry of the board's browser code. */
export const BOARD_ENTRY = join(PROJECT_ROOT, "src", "board", "browser", "board-main.ts");

/** Where the `[build]` command writes the bundle, which board-page.ts imports as text. */
export const BOARD_BUNDLE_PATH = join(PROJECT_ROOT, "dist", "board.js");

/** The bundle and the files it was made from. */
export interface BoardBundle {
  /** The script, one IIFE (no module loader in the page), not minified: readable in a browser's tools. */
  text: string;
  /** Absolute paths of the source files bundled (for a watcher). */
  inputs: string[];
}

/**
 * Bundles the board's browser code.
 *
 * @returns the script and its inputs.
 * @throws Error (esbuild's) on a syntax error or an import that does not resolve; types are
 *   checked by `npm run typecheck`, not here.
 */
export async function bundleBoardScript(): Promise<BoardBundle> {
  const result = await build({
    entryPoints: [BOARD_ENTRY],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    charset: "utf8",
    legalComments: "none",
    metafile: true,
    logLevel: "silent",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild wrote no board script");
  return {
    text: output.text,
    inputs: Object.keys(result.metafile.inputs).map((input) => join(PROJECT_ROOT, input)),
  };
}

/**
 * Bundles the board's browser code into BOARD_BUNDLE_PATH, rewriting the file only when its
 * text changes (a build that changes nothing does not reload `wrangler dev`).
 *
 * @throws Error as bundleBoardScript, or the file system's.
 */
export async function writeBoardScript(): Promise<void> {
  const { text } = await bundleBoardScript();
  const current = existsSync(BOARD_BUNDLE_PATH) ? readFileSync(BOARD_BUNDLE_PATH, "utf8") : null;
  if (current !== text) {
    mkdirSync(dirname(BOARD_BUNDLE_PATH), { recursive: true });
    writeFileSync(BOARD_BUNDLE_PATH, text);
  }
}
