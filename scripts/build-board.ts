/**
 * `npm run build:board`, and the `[build]` command of wrangler.toml (run by `wrangler dev`,
 * again whenever src/board/browser/ changes, and by `wrangler deploy`): bundles the plant
 * board's browser code into dist/board.js (git-ignored), which src/board/board-page.ts
 * serves. The file is rewritten only when its text changes, so a build that changes nothing
 * does not reload `wrangler dev`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { BOARD_BUNDLE_PATH, bundleBoardScript } from "./lib/board-bundle";

const { text } = await bundleBoardScript();
const current = existsSync(BOARD_BUNDLE_PATH) ? readFileSync(BOARD_BUNDLE_PATH, "utf8") : null;
if (current !== text) {
  mkdirSync(dirname(BOARD_BUNDLE_PATH), { recursive: true });
  writeFileSync(BOARD_BUNDLE_PATH, text);
}
